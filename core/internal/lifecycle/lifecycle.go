// Package lifecycle is the Adaptive Knowledge Lifecycle (docs/design.md,
// Lifecycle; the ByteRover paper, §3.2.3): each entry's importance
// ι ∈ [0,100] rises with accesses and updates and decays by day without
// activity, its maturity tier (draft, validated, core) follows ι with
// hysteresis, its recency fades with the days since its last update, and
// the compound score mixes these with the search relevance. Its constants
// are api.LifecycleModel.
//
// The package is pure: no I/O and no clock. Every function that depends on
// time takes the current instant, and decay is computed lazily from the last
// activity, so nothing needs a timer.
package lifecycle

import (
	"math"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/portmath"
)

// Signal is the lifecycle state of one entry as last recorded: Importance
// and Maturity are their values at LastActivity; At gives them now.
type Signal struct {
	Importance   float64      `json:"importance"`
	Maturity     api.Maturity `json:"maturity"`
	Accesses     int          `json:"accesses"`
	Updates      int          `json:"updates"`
	LastActivity time.Time    `json:"lastActivity"`
}

// New is the signal of an entry created at now. A zero now gives the
// signal of an entry found on disk with nothing recorded: it does not decay
// until its first activity, since nobody knows how long it sat unused.
func New(p api.LifecycleModel, now time.Time) Signal {
	s := Signal{Importance: p.InitialImportance, Maturity: api.MaturityDraft, LastActivity: now}
	s.Maturity = settle(p, s.Maturity, s.Importance)
	return s
}

// At returns the signal as of now: importance decayed by the days without
// activity since LastActivity, and the maturity those days led to. Since
// decay only lowers ι between events, checking the thresholds at now alone
// gives the same tier as watching them all along.
func (s Signal) At(p api.LifecycleModel, now time.Time) Signal {
	if days := now.Sub(s.LastActivity).Hours() / 24; days > 0 && !s.LastActivity.IsZero() {
		s.Importance *= portmath.Pow(p.DailyDecay, days)
	}
	s.Maturity = settle(p, s.Maturity, s.Importance)
	return s
}

// Access records one access at now.
func (s Signal) Access(p api.LifecycleModel, now time.Time) Signal {
	s = s.bump(p, now, p.AccessBonus)
	s.Accesses++
	return s
}

// Update records one update at now.
func (s Signal) Update(p api.LifecycleModel, now time.Time) Signal {
	s = s.bump(p, now, p.UpdateBonus)
	s.Updates++
	return s
}

// Merge folds the signal of a merged-away entry into the surviving one:
// the knowledge of both now lives in one entry, so it keeps the higher
// importance (and the tier that goes with it) and the counts of both. The
// merge itself is an update of the survivor, recorded by the caller.
func (s Signal) Merge(p api.LifecycleModel, other Signal, now time.Time) Signal {
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
func (s Signal) bump(p api.LifecycleModel, now time.Time, bonus float64) Signal {
	if s.LastActivity.IsZero() {
		// Never active: no quiet days to decay over, whatever ι it started
		// with (the default, or an older tree's front matter).
		s.LastActivity = now
	}
	s = s.At(p, now)
	s.Importance = math.Min(api.MaxImportance, s.Importance+bonus)
	s.Maturity = settle(p, s.Maturity, s.Importance)
	if now.After(s.LastActivity) {
		s.LastActivity = now
	}
	return s
}

// settle moves m through the tiers until ι keeps it where it is: with
// hysteresis an entry is promoted at a higher ι than the one that demotes
// it, and a big jump may cross two tiers at once.
func settle(p api.LifecycleModel, m api.Maturity, importance float64) api.Maturity {
	for {
		next := m
		switch m {
		case api.MaturityCore:
			if importance < p.DemoteValidated {
				next = api.MaturityValidated
			}
		case api.MaturityValidated:
			switch {
			case importance >= p.PromoteCore:
				next = api.MaturityCore
			case importance < p.DemoteDraft:
				next = api.MaturityDraft
			}
		default:
			next = api.MaturityDraft
			if importance >= p.PromoteValidated {
				next = api.MaturityValidated
			}
		}
		if next == m {
			return m
		}
		m = next
	}
}

// Recency is r = exp(−Δdays/τ) for an entry last updated at updated; an
// entry with no known update time gets 0, and a time in the future counts
// as now.
func Recency(p api.LifecycleModel, updated, now time.Time) float64 {
	if updated.IsZero() {
		return 0
	}
	days := now.Sub(updated).Hours() / 24
	if days < 0 {
		days = 0
	}
	return portmath.Exp(-days / p.RecencyDays)
}

// Boost is the multiplier of tier m.
func Boost(p api.LifecycleModel, m api.Maturity) float64 {
	switch m {
	case api.MaturityCore:
		return p.CoreBoost
	case api.MaturityValidated:
		return p.ValidatedBoost
	}
	return p.DraftBoost
}

// Score is the compound retrieval score (0.6·rel + 0.2·ι/100 + 0.2·r) ×
// boost with the default weights; relevance rel ∈ [0,1] is the search
// score as the caller scales it (the engine: raw BM25 relative to the best
// hit) and s the signal as of now.
func Score(p api.LifecycleModel, relevance float64, s Signal, recency float64) float64 {
	// The conversions keep the compiler from fusing a product and a sum
	// into one FMA (as it does on arm64), which rounds differently than
	// wasm does: the order of results must be the same in every runtime.
	mix := float64(p.RelevanceWeight*relevance) + float64(p.ImportanceWeight*s.Importance/api.MaxImportance) + float64(p.RecencyWeight*recency)
	return mix * Boost(p, s.Maturity)
}
