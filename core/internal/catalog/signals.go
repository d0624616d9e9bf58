package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/atoms"
	"github.com/arbormem/arbor/core/internal/lifecycle"
	"github.com/arbormem/arbor/core/internal/tree"
)

// StatePath is where the lifecycle signals live, relative to the memory root.
const StatePath = ".arbor/state.json"

// stateBackupPath keeps the bytes of a state file that could not be read,
// before the next flush replaces it.
const stateBackupPath = ".arbor/state.corrupt.json"

// stateVersion is the format of StatePath this package reads and writes.
const stateVersion = 1

// What counts (docs/ABI.md §4.4): an access is an entry presented as a
// direct answer by query (tiers 0–2) or returned by read; entries merely
// listed among results are not accessed. An update is a successful UPDATE,
// an UPSERT of an existing entry, or the surviving target of a MERGE.

// Signals holds every entry's lifecycle signal in memory; state.json is
// their batched copy. Not safe for concurrent use.
type Signals struct {
	fs         host.FS
	clock      host.Clock
	log        host.Logger
	cat        *Catalog
	model      api.LifecycleModel
	byPath     map[string]lifecycle.Signal
	changed    map[string]bool // paths set or dropped here since the last write
	dirty      bool            // byPath differs from state.json
	pending    int             // accesses and updates since the last write
	lastFlush  time.Time
	flushAfter int
	flushEvery time.Duration // 0: no time-based flush
	readOnly   bool
	// Since the first Exchange, the accesses this engine's reads counted
	// and the paths whose signals changed, for the next Exchange; nil
	// before it, so that an engine alone on its root keeps no such books.
	accessed map[string]int
	outgoing map[string]bool
}

// SignalOptions are the lifecycle model and the flush policy of Signals.
type SignalOptions struct {
	Model api.LifecycleModel
	// FlushAfter is the number of pending changes that triggers a write;
	// 0 means api.DefaultFlushAfter.
	FlushAfter int
	// FlushEvery is the age of pending changes that triggers a write at
	// the next change; 0 means api.DefaultFlushInterval, a negative value
	// turns the time-based write off.
	FlushEvery time.Duration
	// ReadOnly keeps the signals in memory only: state.json is read but
	// never written, nor a copy of one that cannot be used (a read-only
	// grant, docs/sandbox.md).
	ReadOnly bool
}

// stateFile is the JSON of StatePath.
type stateFile struct {
	Version int                         `json:"version"`
	Entries map[string]lifecycle.Signal `json:"entries"`
}

// OpenSignals reads state.json for the entries of cat. A missing file is a
// fresh start; a file that cannot be used is kept aside as
// stateBackupPath and the signals start fresh with a warning: signals are
// derived data, never a reason to refuse opening the tree.
func OpenSignals(fsys host.FS, clock host.Clock, log host.Logger, cat *Catalog, opts SignalOptions) (*Signals, []api.Warning) {
	s := &Signals{fs: fsys, clock: clock, log: log, cat: cat, model: opts.Model, byPath: map[string]lifecycle.Signal{},
		changed: map[string]bool{}, lastFlush: clock.Now(), flushAfter: opts.FlushAfter, flushEvery: opts.FlushEvery, readOnly: opts.ReadOnly}
	if s.flushAfter <= 0 {
		s.flushAfter = api.DefaultFlushAfter
	}
	if s.flushEvery == 0 {
		s.flushEvery = api.DefaultFlushInterval
	}
	warn := func(msg string) []api.Warning {
		return []api.Warning{{Kind: api.WarnState, Path: StatePath, Message: msg}}
	}
	data, err := fsys.ReadFile(StatePath)
	switch {
	case errors.Is(err, host.ErrNotFound):
		return s, nil
	case err != nil:
		return s, warn(fmt.Sprintf("unreadable, lifecycle signals start fresh: %v", err))
	}
	var st stateFile
	if err := json.Unmarshal(data, &st); err != nil || st.Version != stateVersion {
		why := fmt.Sprintf("version %d, this engine reads %d", st.Version, stateVersion)
		if err != nil {
			why = err.Error()
		}
		msg := fmt.Sprintf("cannot be used (%s); lifecycle signals start fresh", why)
		if s.readOnly {
			return s, warn(msg + "; the file is left as it is (read-only)")
		}
		if werr := fsys.WriteFile(stateBackupPath, data); werr != nil {
			msg += fmt.Sprintf(" and the old file will be replaced (no copy: %v)", werr)
		} else {
			msg += "; the old file is kept as " + stateBackupPath
		}
		s.dirty = true
		return s, warn(msg)
	}
	dropped := 0
	for path, sig := range st.Entries {
		if !validSignal(sig) {
			dropped++
			s.changed[path] = true
			continue
		}
		if !cat.Has(path) {
			// Removed outside the engine: a new file at the path is new knowledge.
			if _, broken := cat.Broken(path); !broken {
				s.dirty = true
				s.changed[path] = true
				continue
			}
		}
		s.byPath[path] = sig
	}
	if dropped > 0 {
		s.dirty = true
		return s, warn(atoms.Count(dropped, "entry", "entries") + " with invalid signals start fresh")
	}
	return s, nil
}

func validSignal(s lifecycle.Signal) bool {
	return s.Maturity.Valid() && !math.IsNaN(s.Importance) && s.Importance >= 0 && s.Importance <= api.MaxImportance &&
		s.Accesses >= 0 && s.Updates >= 0
}

// Model is the lifecycle model the signals follow.
func (s *Signals) Model() api.LifecycleModel { return s.model }

// Of returns the recorded signal of path, or that of an entry nothing was
// recorded for: a fresh one, seeded from the legacy lifecycle keys of its
// front matter when it has them.
func (s *Signals) Of(path string) lifecycle.Signal {
	if sig, ok := s.byPath[path]; ok {
		return sig
	}
	sig := lifecycle.New(s.model, time.Time{})
	if cd, ok := s.cat.card(path); ok {
		sig = legacySignal(sig, cd.lifecycle())
	}
	return sig
}

// legacySignal seeds s from the lifecycle keys older trees (ByteRover's)
// keep in front matter (docs/format.md): importance, maturity, accessCount
// and updateCount. Keys are matched without regard to case; a value out of
// range or of the wrong kind is ignored rather than trusted. "recency" is
// not read: Arbor derives it from updatedAt.
func legacySignal(s lifecycle.Signal, extra []tree.KeyValue) lifecycle.Signal {
	// The keys read here are the ones isLifecycleKey names: entry cards
	// keep those only.
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

// isLifecycleKey reports whether a front-matter key is one legacySignal
// reads.
func isLifecycleKey(k string) bool {
	switch strings.ToLower(k) {
	case "importance", "maturity", "accesscount", "updatecount":
		return true
	}
	return false
}

// record stores a changed signal and writes the batch when it is due.
func (s *Signals) record(path string, sig lifecycle.Signal) {
	s.byPath[path] = sig
	s.changed[path] = true
	s.dirty = true
	s.pending++
	s.gone(path)
	s.flushIfDue()
}

// gone notes for the next Exchange that the signal of path changed (or
// was dropped).
func (s *Signals) gone(path string) {
	if s.outgoing != nil {
		s.outgoing[path] = true
	}
}

// Access records one access of path when it is an entry.
func (s *Signals) Access(path string) {
	if s.access(path) && s.accessed != nil {
		s.accessed[path]++
	}
}

// access records one access of path when it is an entry, and reports
// whether it did.
func (s *Signals) access(path string) bool {
	if !s.cat.Has(path) {
		return false
	}
	s.record(path, s.Of(path).Access(s.model, s.clock.Now()))
	return true
}

// maxExchangedAccesses bounds the accesses of one entry an Exchange
// counts: far above what reads between two exchanges count, low enough
// that a bad request cannot keep the engine busy.
const maxExchangedAccesses = 1 << 16

// Exchange keeps the signals of several engines on one root in step
// (docs/ABI.md §4.18): it takes p.Set as the entries' signals, counts
// p.Accessed, and returns the accesses this engine's own reads counted and
// the signals that changed since the previous Exchange, by any cause but
// Set. The first call starts those books. Nothing changes when p is
// invalid.
func (s *Signals) Exchange(p api.SignalsParams) (api.SignalsResult, error) {
	for path, sig := range p.Set {
		if sig != nil && !validSignal(lifecycle.Signal(*sig)) {
			return api.SignalsResult{}, api.Errorf(api.CodeInvalidParams, "signals: set: %s: importance must lie in 0..%d, maturity be draft, validated or core, and counts not be negative", path, api.MaxImportance)
		}
	}
	for path, n := range p.Accessed {
		if n < 0 || n > maxExchangedAccesses {
			return api.SignalsResult{}, api.Errorf(api.CodeInvalidParams, "signals: accessed: %s: %d accesses (0 to %d)", path, n, maxExchangedAccesses)
		}
	}
	if s.outgoing == nil {
		s.accessed, s.outgoing = map[string]int{}, map[string]bool{}
	}
	for path, sig := range p.Set {
		if sig == nil {
			delete(s.byPath, path)
		} else {
			s.byPath[path] = lifecycle.Signal(*sig)
		}
		s.changed[path] = true
		s.dirty = true
		delete(s.outgoing, path)
	}
	for path, n := range p.Accessed {
		for range n {
			s.access(path)
		}
	}
	res := api.SignalsResult{Accessed: s.accessed, Changed: make(map[string]*api.Signal, len(s.outgoing))}
	for path := range s.outgoing {
		if sig, ok := s.byPath[path]; ok {
			a := api.Signal(sig)
			res.Changed[path] = &a
		} else {
			res.Changed[path] = nil
		}
	}
	s.accessed, s.outgoing = map[string]int{}, map[string]bool{}
	return res, nil
}

// Created starts the signal of a new entry, seeded from the lifecycle keys
// of its front matter when it has them (an ingested note's importance).
func (s *Signals) Created(path string) {
	sig := lifecycle.New(s.model, s.clock.Now())
	if cd, ok := s.cat.card(path); ok {
		sig = legacySignal(sig, cd.lifecycle())
	}
	s.record(path, sig)
}

// Updated records one update of path.
func (s *Signals) Updated(path string) {
	s.record(path, s.Of(path).Update(s.model, s.clock.Now()))
}

// Merged carries the signal of an entry merged away (from) into the one
// that survives (into), which counts an update.
func (s *Signals) Merged(from, into string) {
	now := s.clock.Now()
	merged := s.Of(into)
	if src, ok := s.byPath[from]; ok {
		merged = merged.Merge(s.model, src, now)
	}
	delete(s.byPath, from)
	s.changed[from] = true
	s.gone(from)
	s.record(into, merged.Update(s.model, now))
}

// Moved carries the signal of an entry that moved to its new path: a move
// changes where knowledge is kept, not how much it is used, so nothing is
// counted. An entry nothing was recorded for keeps its legacy seed, which
// moves with its front matter.
func (s *Signals) Moved(from, to string) {
	sig, ok := s.byPath[from]
	if !ok {
		return
	}
	delete(s.byPath, from)
	s.changed[from] = true
	s.gone(from)
	s.record(to, sig)
}

// Deleted drops the signals of path and of every entry below it.
func (s *Signals) Deleted(path string) {
	for p := range s.byPath {
		if p == path || strings.HasPrefix(p, path+"/") {
			delete(s.byPath, p)
			s.changed[p] = true
			s.dirty = true
			s.gone(p)
		}
	}
}

// flushIfDue writes the signals when enough changes are pending or the
// interval has passed; a failure is logged and retried at the next chance.
func (s *Signals) flushIfDue() {
	due := s.pending >= s.flushAfter || (s.flushEvery > 0 && s.pending > 0 && s.clock.Now().Sub(s.lastFlush) >= s.flushEvery)
	if !due {
		return
	}
	if _, err := s.Flush(); err != nil {
		s.log.Log("error", err.Error())
	}
}

// Flush writes the signals to state.json when they changed since the last
// write, in one atomic write; read-only signals are never written. Other
// processes may have written the file since this one read it: under the
// root's lock, the file is read again, this engine's changes are laid over
// it, and the signals it recorded for other entries are taken in, so that
// no process's signals overwrite another's.
func (s *Signals) Flush() (api.FlushResult, error) {
	res := api.FlushResult{Entries: len(s.byPath)}
	if !s.dirty || s.readOnly {
		return res, nil
	}
	err := host.Exclusive(s.fs, func() error {
		merged := s.onDisk()
		for p := range s.changed {
			if sig, ok := s.byPath[p]; ok {
				merged[p] = sig
			} else {
				delete(merged, p)
			}
		}
		data, err := json.MarshalIndent(stateFile{Version: stateVersion, Entries: merged}, "", " ")
		if err != nil {
			return fmt.Errorf("flush: encode %s: %w", StatePath, err)
		}
		if err := s.fs.WriteFile(StatePath, append(data, '\n')); err != nil {
			return fmt.Errorf("flush: write %s: %w", StatePath, err)
		}
		s.byPath = merged
		return nil
	})
	if err != nil {
		return res, err
	}
	res.Entries, res.Written = len(s.byPath), true
	s.dirty, s.pending, s.lastFlush = false, 0, s.clock.Now()
	clear(s.changed)
	return res, nil
}

// onDisk returns the valid signals state.json holds now; nothing when it
// is missing or cannot be used (OpenSignals reported that already).
func (s *Signals) onDisk() map[string]lifecycle.Signal {
	out := map[string]lifecycle.Signal{}
	data, err := s.fs.ReadFile(StatePath)
	if err != nil {
		return out
	}
	var st stateFile
	if json.Unmarshal(data, &st) != nil || st.Version != stateVersion {
		return out
	}
	for p, sig := range st.Entries {
		if validSignal(sig) {
			out[p] = sig
		}
	}
	return out
}

// Maturity counts the entries of the catalog by tier, as of now.
func (s *Signals) Maturity() map[api.Maturity]int {
	counts := map[api.Maturity]int{api.MaturityDraft: 0, api.MaturityValidated: 0, api.MaturityCore: 0}
	now := s.clock.Now()
	for path := range s.cat.Unsorted() {
		counts[s.Of(path).At(s.model, now).Maturity]++
	}
	return counts
}
