package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/curate"
	"github.com/arbormem/arbor/core/internal/lifecycle"
	"github.com/arbormem/arbor/core/internal/search"
	"github.com/arbormem/arbor/core/internal/tree"
)

// StatePath is where the lifecycle signals live, relative to the memory root.
const StatePath = ".arbor/state.json"

// stateBackupPath keeps the bytes of a state file that could not be read,
// before the next flush replaces it.
const stateBackupPath = ".arbor/state.corrupt.json"

// stateVersion is the format of StatePath this engine reads and writes.
const stateVersion = 1

// What counts (docs/ABI.md §4.4): an access is an entry presented as a
// direct answer by query (tiers 0–2) or returned by read; entries merely
// listed among results are not accessed. An update is a successful UPDATE,
// an UPSERT of an existing entry, or the surviving target of a MERGE.

// signals holds every entry's lifecycle signal in memory; state.json is
// their batched copy.
type signals struct {
	params     api.LifecycleModel
	byPath     map[string]lifecycle.Signal
	dirty      bool // byPath differs from state.json
	pending    int  // accesses and updates since the last write
	lastFlush  time.Time
	flushAfter int
	flushEvery time.Duration // 0: no time-based flush
}

// stateFile is the JSON of StatePath.
type stateFile struct {
	Version int                         `json:"version"`
	Entries map[string]lifecycle.Signal `json:"entries"`
}

// loadSignals reads state.json. A missing file is a fresh start; a file
// that cannot be used is kept aside as stateBackupPath and the engine
// starts fresh with a warning: signals are derived data, never a reason to
// refuse opening the tree.
func (e *Engine) loadSignals(opts Options) {
	p := api.DefaultLifecycleModel()
	if opts.Lifecycle != nil {
		p = *opts.Lifecycle
	}
	e.signals = &signals{params: p, byPath: map[string]lifecycle.Signal{}, lastFlush: e.clock.Now(),
		flushAfter: opts.FlushAfter, flushEvery: opts.FlushInterval}
	if e.signals.flushAfter <= 0 {
		e.signals.flushAfter = api.DefaultFlushAfter
	}
	if e.signals.flushEvery == 0 {
		e.signals.flushEvery = api.DefaultFlushInterval
	}
	data, err := e.fs.ReadFile(StatePath)
	switch {
	case errors.Is(err, host.ErrNotFound):
		return
	case err != nil:
		e.warn(StatePath, fmt.Sprintf("unreadable, lifecycle signals start fresh: %v", err))
		return
	}
	var st stateFile
	if err := json.Unmarshal(data, &st); err != nil || st.Version != stateVersion {
		why := fmt.Sprintf("version %d, this engine reads %d", st.Version, stateVersion)
		if err != nil {
			why = err.Error()
		}
		msg := fmt.Sprintf("cannot be used (%s); lifecycle signals start fresh", why)
		if werr := e.fs.WriteFile(stateBackupPath, data); werr != nil {
			msg += fmt.Sprintf(" and the old file will be replaced (no copy: %v)", werr)
		} else {
			msg += "; the old file is kept as " + stateBackupPath
		}
		e.warn(StatePath, msg)
		e.signals.dirty = true
		return
	}
	dropped := 0
	for path, s := range st.Entries {
		if !validSignal(s) {
			dropped++
			continue
		}
		if _, ok := e.catalog.Get(path); !ok {
			// Removed outside the engine: a new file at the path is new knowledge.
			if _, broken := e.catalog.Broken(path); !broken {
				e.signals.dirty = true
				continue
			}
		}
		e.signals.byPath[path] = s
	}
	if dropped > 0 {
		e.warn(StatePath, fmt.Sprintf("%d entries with invalid signals start fresh", dropped))
		e.signals.dirty = true
	}
}

func validSignal(s lifecycle.Signal) bool {
	return s.Maturity.Valid() && !math.IsNaN(s.Importance) && s.Importance >= 0 && s.Importance <= api.MaxImportance &&
		s.Accesses >= 0 && s.Updates >= 0
}

// signal returns the recorded signal of path, or that of an entry nothing
// was recorded for: a fresh one, seeded from the legacy lifecycle keys of
// its front matter when it has them.
func (e *Engine) signal(path string) lifecycle.Signal {
	if s, ok := e.signals.byPath[path]; ok {
		return s
	}
	s := lifecycle.New(e.signals.params, time.Time{})
	if ent, ok := e.catalog.Get(path); ok {
		s = legacySignal(s, ent.Extra)
	}
	return s
}

// legacySignal seeds s from the lifecycle keys older trees (ByteRover's)
// keep in front matter (DESIGN §2): importance, maturity, accessCount and
// updateCount. Keys are matched without regard to case; a value out of
// range or of the wrong kind is ignored rather than trusted. "recency" is
// not read: Arbor derives it from updatedAt.
func legacySignal(s lifecycle.Signal, extra []tree.KeyValue) lifecycle.Signal {
	for _, kv := range extra {
		v := strings.Trim(strings.TrimSpace(kv.Value), `"'`)
		switch strings.ToLower(kv.Key) {
		case "importance":
			if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f <= api.MaxImportance {
				s.Importance = f
			}
		case "maturity":
			if m := api.Maturity(strings.ToLower(v)); m.Valid() {
				s.Maturity = m
			}
		case "accesscount":
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				s.Accesses = n
			}
		case "updatecount":
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				s.Updates = n
			}
		}
	}
	return s
}

// record stores a changed signal and writes the batch when it is due.
func (e *Engine) record(path string, s lifecycle.Signal) {
	e.signals.byPath[path] = s
	e.signals.dirty = true
	e.signals.pending++
	e.flushIfDue()
}

// access records one access of path when it is an entry.
func (e *Engine) access(path string) {
	if _, ok := e.catalog.Get(path); !ok {
		return
	}
	e.record(path, e.signal(path).Access(e.signals.params, e.clock.Now()))
}

// curated brings the signals in step with the successful operations of a
// curate call, in order: ADD starts an entry fresh, an update adds its
// bonus, a MERGE carries the source's signal into the target, and removed
// entries lose theirs.
func (e *Engine) curated(res curate.Result) {
	p, now := e.signals.params, e.clock.Now()
	for _, a := range res.Applied {
		if a.Status != api.StatusSuccess {
			continue
		}
		switch {
		case a.Created:
			e.record(a.Path, lifecycle.New(p, now))
		case a.Type == api.OpUpdate || a.Type == api.OpUpsert:
			e.record(a.Path, e.signal(a.Path).Update(p, now))
		case a.Type == api.OpMerge:
			merged := e.signal(a.Target)
			if src, ok := e.signals.byPath[a.Path]; ok {
				merged = merged.Merge(p, src, now)
			}
			delete(e.signals.byPath, a.Path)
			e.record(a.Target, merged.Update(p, now))
		case a.Type == api.OpDelete:
			for path := range e.signals.byPath {
				if path == a.Path || strings.HasPrefix(path, a.Path+"/") {
					delete(e.signals.byPath, path)
					e.signals.dirty = true
				}
			}
		}
	}
}

// flushIfDue writes the signals when enough changes are pending or the
// interval has passed; a failure is logged and retried at the next chance.
func (e *Engine) flushIfDue() {
	s := e.signals
	due := s.pending >= s.flushAfter || (s.flushEvery > 0 && s.pending > 0 && e.clock.Now().Sub(s.lastFlush) >= s.flushEvery)
	if !due {
		return
	}
	if _, err := e.flushSignals(); err != nil {
		e.log.Log("error", err.Error())
	}
}

// flushSignals writes the lifecycle signals to state.json when they changed
// since the last write, in one atomic write.
func (e *Engine) flushSignals() (api.FlushResult, error) {
	s := e.signals
	res := api.FlushResult{Entries: len(s.byPath)}
	if !s.dirty {
		return res, nil
	}
	data, err := json.MarshalIndent(stateFile{Version: stateVersion, Entries: s.byPath}, "", " ")
	if err != nil {
		return res, fmt.Errorf("flush: encode %s: %w", StatePath, err)
	}
	if err := e.fs.WriteFile(StatePath, append(data, '\n')); err != nil {
		return res, fmt.Errorf("flush: write %s: %w", StatePath, err)
	}
	res.Written = true
	s.dirty, s.pending, s.lastFlush = false, 0, e.clock.Now()
	return res, nil
}

// directPath is the entry a tier-2 answer presents as the answer, or "".
func directPath(o outcome) string {
	if o.res.TierName != "direct" || len(o.hits) == 0 {
		return ""
	}
	return o.hits[0].Path
}

// answer finishes a query result: it orders the results by the compound
// score of DESIGN §4, keeping the entry a direct answer presents first
// (that answer was decided on ŝ alone), then counts the access to it.
func (e *Engine) answer(o outcome, answered string, start time.Time) outcome {
	p, now := e.signals.params, e.clock.Now()
	hits := make([]search.Hit, len(o.hits))
	copy(hits, o.hits) // the cache keeps the unranked order
	// Relevance is the raw BM25 score relative to the best hit's: ŝ =
	// s/(1+s) squeezes every good hit into a few hundredths below 1, where
	// any recency or importance difference would outweigh it.
	top := 0.0
	for _, h := range hits {
		top = max(top, h.Raw)
	}
	scores := make(map[string]float64, len(hits))
	for i := range hits {
		s := e.signal(hits[i].Path).At(p, now)
		r := lifecycle.Recency(p, e.updatedAt(hits[i].Path), now)
		rel := 0.0
		if top > 0 {
			rel = hits[i].Raw / top
		}
		score := lifecycle.Score(p, rel, s, r)
		scores[hits[i].Path] = score
		hits[i].Lifecycle = &api.Rank{Importance: round4(s.Importance), Maturity: s.Maturity, Recency: round4(r), Score: round4(score)}
	}
	// The lifecycle reorders within the groups search ranks by (entries
	// matching every term, then entries matching some, then contexts): it
	// weighs what is known, and must not lift a partial match over a full one.
	sort.SliceStable(hits, func(i, j int) bool {
		if pi, pj := hits[i].Path == answered, hits[j].Path == answered; pi != pj {
			return pi
		}
		if gi, gj := group(hits[i]), group(hits[j]); gi != gj {
			return gi < gj
		}
		return scores[hits[i].Path] > scores[hits[j].Path]
	})
	o.hits = hits
	o.res.Results = make([]api.Hit, len(hits))
	for i, h := range hits {
		o.res.Results[i] = h.Hit
	}
	if answered != "" {
		e.access(answered)
	}
	o.res.TookMs = since(start)
	return o
}

// group is the rank of search's group a hit comes from: entries matching
// every term, entries matching some, context files.
func group(h search.Hit) int {
	switch {
	case h.Kind == "context":
		return 2
	case h.AllTerms:
		return 0
	}
	return 1
}

// updatedAt is when the entry at path last changed, by its front matter
// (its creation when it has no update time); zero for context files and
// notes without dates.
func (e *Engine) updatedAt(path string) time.Time {
	en, ok := e.catalog.Get(path)
	if !ok {
		return time.Time{}
	}
	if !en.UpdatedAt.IsZero() {
		return en.UpdatedAt
	}
	return en.CreatedAt
}

// saidAt is when the knowledge of the entry at path is from, for a
// question about a time: its rawConcept timestamp when it has one (the day
// a chat turn was said, even when a year of chats is ingested today), else
// when it last changed (updatedAt).
func (e *Engine) saidAt(path string) time.Time {
	if en, ok := e.catalog.Get(path); ok {
		if t := tree.SaidAt(en.RawConcept); !t.IsZero() {
			return t
		}
	}
	return e.updatedAt(path)
}

// maturityCounts counts the entries of the tree by tier, as of now.
func (e *Engine) maturityCounts() map[api.Maturity]int {
	counts := map[api.Maturity]int{api.MaturityDraft: 0, api.MaturityValidated: 0, api.MaturityCore: 0}
	now := e.clock.Now()
	for _, path := range e.catalog.Paths() {
		counts[e.signal(path).At(e.signals.params, now).Maturity]++
	}
	return counts
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
