// Package lifecycle is the Adaptive Knowledge Lifecycle of DESIGN §4 (the
// ByteRover paper, §3.2.3): each entry's importance ι ∈ [0,100] rises with
// accesses and updates and decays by day without activity, its maturity
// tier (draft, validated, core) follows ι with hysteresis, its recency fades
// with the days since its last update, and the compound score mixes these
// with the search relevance.
//
// The package is pure: no I/O and no clock. Every function that depends on
// time takes the current instant, and decay is computed lazily from the last
// activity, so nothing needs a timer.
package lifecycle

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Maturity is an entry's tier.
type Maturity string

// The tiers, weakest first.
const (
	Draft     Maturity = "draft"
	Validated Maturity = "validated"
	Core      Maturity = "core"
)

// MaxImportance bounds ι from above (0 bounds it from below).
const MaxImportance = 100

// day is the unit of decay and recency.
const day = 24 * time.Hour

// Params are the model's constants. Their JSON names are the "lifecycle"
// open parameters of docs/ABI.md §4.1.
type Params struct {
	InitialImportance float64 `json:"initialImportance"` // ι of a new entry (50)
	AccessBonus       float64 `json:"accessBonus"`       // added per access (3)
	UpdateBonus       float64 `json:"updateBonus"`       // added per update (5)
	DailyDecay        float64 `json:"dailyDecay"`        // ι is multiplied by this per day without activity (0.995)

	// Hysteresis: promotion and demotion thresholds lie apart, so an entry
	// near one does not flip tiers on every access.
	PromoteValidated float64 `json:"promoteValidated"` // draft → validated at ι ≥ this (65)
	DemoteDraft      float64 `json:"demoteDraft"`      // validated → draft at ι < this (35)
	PromoteCore      float64 `json:"promoteCore"`      // validated → core at ι ≥ this (85)
	DemoteValidated  float64 `json:"demoteValidated"`  // core → validated at ι < this (60)

	RecencyDays float64 `json:"recencyDays"` // τ of r = exp(−Δdays/τ) (30)

	// Compound score = (RelevanceWeight·relevance + ImportanceWeight·ι/100 +
	// RecencyWeight·r) × the tier's boost.
	RelevanceWeight  float64 `json:"relevanceWeight"`  // 0.6
	ImportanceWeight float64 `json:"importanceWeight"` // 0.2
	RecencyWeight    float64 `json:"recencyWeight"`    // 0.2
	CoreBoost        float64 `json:"coreBoost"`        // 1.15
	ValidatedBoost   float64 `json:"validatedBoost"`   // 1.0
	DraftBoost       float64 `json:"draftBoost"`       // 0.85
}

// Default returns the constants of DESIGN §4.
func Default() Params {
	return Params{
		InitialImportance: 50, AccessBonus: 3, UpdateBonus: 5, DailyDecay: 0.995,
		PromoteValidated: 65, DemoteDraft: 35, PromoteCore: 85, DemoteValidated: 60,
		RecencyDays:     30,
		RelevanceWeight: 0.6, ImportanceWeight: 0.2, RecencyWeight: 0.2,
		CoreBoost: 1.15, ValidatedBoost: 1.0, DraftBoost: 0.85,
	}
}

// Validate reports the first constant that makes the model meaningless.
func (p Params) Validate() error {
	finite := func(name string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("lifecycle: %s must be a finite number", name)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"initialImportance", p.InitialImportance}, {"accessBonus", p.AccessBonus}, {"updateBonus", p.UpdateBonus},
		{"dailyDecay", p.DailyDecay}, {"promoteValidated", p.PromoteValidated}, {"demoteDraft", p.DemoteDraft},
		{"promoteCore", p.PromoteCore}, {"demoteValidated", p.DemoteValidated}, {"recencyDays", p.RecencyDays},
		{"relevanceWeight", p.RelevanceWeight}, {"importanceWeight", p.ImportanceWeight}, {"recencyWeight", p.RecencyWeight},
		{"coreBoost", p.CoreBoost}, {"validatedBoost", p.ValidatedBoost}, {"draftBoost", p.DraftBoost},
	} {
		if err := finite(f.name, f.v); err != nil {
			return err
		}
	}
	switch {
	case p.InitialImportance < 0 || p.InitialImportance > MaxImportance:
		return fmt.Errorf("lifecycle: initialImportance %g: want 0 to %d", p.InitialImportance, MaxImportance)
	case p.AccessBonus < 0 || p.UpdateBonus < 0:
		return errors.New("lifecycle: accessBonus and updateBonus must not be negative")
	case p.DailyDecay <= 0 || p.DailyDecay > 1:
		return fmt.Errorf("lifecycle: dailyDecay %g: want more than 0, at most 1", p.DailyDecay)
	case !(p.DemoteDraft <= p.PromoteValidated && p.DemoteValidated <= p.PromoteCore && p.PromoteValidated <= p.PromoteCore):
		return errors.New("lifecycle: thresholds must satisfy demoteDraft ≤ promoteValidated ≤ promoteCore and demoteValidated ≤ promoteCore")
	case p.RecencyDays <= 0:
		return fmt.Errorf("lifecycle: recencyDays %g: want more than 0", p.RecencyDays)
	case p.RelevanceWeight < 0 || p.ImportanceWeight < 0 || p.RecencyWeight < 0:
		return errors.New("lifecycle: weights must not be negative")
	case p.RelevanceWeight+p.ImportanceWeight+p.RecencyWeight == 0:
		return errors.New("lifecycle: at least one weight must be positive")
	case p.CoreBoost <= 0 || p.ValidatedBoost <= 0 || p.DraftBoost <= 0:
		return errors.New("lifecycle: boosts must be positive")
	}
	return nil
}

// Signal is the lifecycle state of one entry as last recorded: Importance
// and Maturity are their values at LastActivity; At gives them now.
type Signal struct {
	Importance   float64   `json:"importance"`
	Maturity     Maturity  `json:"maturity"`
	Accesses     int       `json:"accesses"`
	Updates      int       `json:"updates"`
	LastActivity time.Time `json:"lastActivity"`
}

// New is the signal of an entry created at now. A zero now gives the
// signal of an entry found on disk with nothing recorded: it does not decay
// until its first activity, since nobody knows how long it sat unused.
func New(p Params, now time.Time) Signal {
	s := Signal{Importance: p.InitialImportance, Maturity: Draft, LastActivity: now}
	s.Maturity = p.settle(s.Maturity, s.Importance)
	return s
}

// At returns the signal as of now: importance decayed by the days without
// activity since LastActivity, and the maturity those days led to. Since
// decay only lowers ι between events, checking the thresholds at now alone
// gives the same tier as watching them all along.
func (s Signal) At(p Params, now time.Time) Signal {
	if days := now.Sub(s.LastActivity).Hours() / 24; days > 0 && !s.LastActivity.IsZero() {
		s.Importance *= math.Pow(p.DailyDecay, days)
	}
	s.Maturity = p.settle(s.Maturity, s.Importance)
	return s
}

// Access records one access at now.
func (s Signal) Access(p Params, now time.Time) Signal {
	s = s.bump(p, now, p.AccessBonus)
	s.Accesses++
	return s
}

// Update records one update at now.
func (s Signal) Update(p Params, now time.Time) Signal {
	s = s.bump(p, now, p.UpdateBonus)
	s.Updates++
	return s
}

// Merge folds the signal of a merged-away entry into the surviving one:
// the knowledge of both now lives in one entry, so it keeps the higher
// importance (and the tier that goes with it) and the counts of both. The
// merge itself is an update of the survivor, recorded by the caller.
func (s Signal) Merge(p Params, other Signal, now time.Time) Signal {
	a, b := s.At(p, now), other.At(p, now)
	if b.Importance > a.Importance {
		a.Importance, a.Maturity = b.Importance, b.Maturity
	}
	a.Accesses += b.Accesses
	a.Updates += b.Updates
	a.LastActivity = now
	return a
}

// bump decays s to now, settles its tier, then adds bonus: a demotion that
// happened during the quiet days happens before the new activity counts.
func (s Signal) bump(p Params, now time.Time, bonus float64) Signal {
	if s.LastActivity.IsZero() {
		// Never active: no quiet days to decay over, whatever ι it started
		// with (the default, or an older tree's front matter).
		s.LastActivity = now
	}
	s = s.At(p, now)
	s.Importance = math.Min(MaxImportance, s.Importance+bonus)
	s.Maturity = p.settle(s.Maturity, s.Importance)
	if now.After(s.LastActivity) {
		s.LastActivity = now
	}
	return s
}

// settle moves m through the tiers until ι keeps it where it is: with
// hysteresis an entry is promoted at a higher ι than the one that demotes
// it, and a big jump may cross two tiers at once.
func (p Params) settle(m Maturity, importance float64) Maturity {
	for {
		next := m
		switch m {
		case Core:
			if importance < p.DemoteValidated {
				next = Validated
			}
		case Validated:
			switch {
			case importance >= p.PromoteCore:
				next = Core
			case importance < p.DemoteDraft:
				next = Draft
			}
		default:
			next = Draft
			if importance >= p.PromoteValidated {
				next = Validated
			}
		}
		if next == m {
			return m
		}
		m = next
	}
}

// Valid reports whether m is one of the three tiers.
func (m Maturity) Valid() bool { return m == Draft || m == Validated || m == Core }

// Recency is r = exp(−Δdays/τ) for an entry last updated at updated; an
// entry with no known update time gets 0, and a time in the future counts
// as now.
func Recency(p Params, updated, now time.Time) float64 {
	if updated.IsZero() {
		return 0
	}
	days := now.Sub(updated).Hours() / 24
	if days < 0 {
		days = 0
	}
	return math.Exp(-days / p.RecencyDays)
}

// Boost is the multiplier of tier m.
func (p Params) Boost(m Maturity) float64 {
	switch m {
	case Core:
		return p.CoreBoost
	case Validated:
		return p.ValidatedBoost
	}
	return p.DraftBoost
}

// Score is the compound retrieval score (0.6·rel + 0.2·ι/100 + 0.2·r) ×
// boost with the default weights; relevance rel ∈ [0,1] is the search
// score as the caller scales it (the engine: raw BM25 relative to the best
// hit) and s the signal as of now.
func Score(p Params, relevance float64, s Signal, recency float64) float64 {
	mix := p.RelevanceWeight*relevance + p.ImportanceWeight*s.Importance/MaxImportance + p.RecencyWeight*recency
	return mix * p.Boost(s.Maturity)
}

// Rank is what the lifecycle says about one ranked result, as the query
// method reports it (docs/ABI.md §4.4): the signal as of the query, the
// recency, and the compound score the results are ordered by.
type Rank struct {
	Importance float64  `json:"importance"`
	Maturity   Maturity `json:"maturity"`
	Recency    float64  `json:"recency"`
	Score      float64  `json:"score"`
}
