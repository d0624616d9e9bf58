package api

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// DefaultMaxFileBytes bounds the files the engine reads and writes when
// OpenParams.MaxFileBytes is 0.
const DefaultMaxFileBytes = 1 << 20

// Defaults of the flush policy of the lifecycle signals (state.json): they
// are written when this many changes are pending, or at the first call
// after this long with changes pending, and always by "flush" and "close".
// Never one write per query.
const (
	DefaultFlushAfter    = 64
	DefaultFlushInterval = 5 * time.Minute
)

// OpenParams are the options of the "open" method (docs/ABI.md §4.1).
type OpenParams struct {
	// FixedTime freezes the engine's clock (RFC 3339), for reproducible
	// output; "" (the default) is the system clock.
	FixedTime string `json:"fixedTime,omitempty"`
	// MaxFileBytes bounds the size of a file read or written; 0 means
	// DefaultMaxFileBytes (1 MiB).
	MaxFileBytes int `json:"maxFileBytes,omitempty"`
	// LLM tunes the calls that talk to a model (docs/ABI.md §6); nil keeps
	// every default of LLMOptions.
	LLM *LLMOptions `json:"llm,omitempty"`
	// Lifecycle tunes the lifecycle model and the batching of its writes;
	// nil keeps DefaultLifecycleParams. Over JSON, fields left out keep
	// their defaults.
	Lifecycle *LifecycleParams `json:"lifecycle,omitempty"`
	// ReadOnly opens the root under a read-only grant (docs/sandbox.md):
	// the engine writes nothing, not even its own state in .arbor/, and
	// the methods that write (curate, ingest, curateFrom) are refused with
	// CodeReadOnly. Lifecycle signals and the index live in memory only.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// LifecycleParams are the "lifecycle" open parameters (docs/ABI.md §4.1).
// A Go host starts from DefaultLifecycleParams and changes what it needs:
// every field is sent.
type LifecycleParams struct {
	LifecycleModel
	// FlushAfter is the number of pending signal changes that triggers a
	// write of state.json (default DefaultFlushAfter).
	FlushAfter int `json:"flushAfter"`
	// FlushMinutes is the age of pending changes that triggers a write at
	// the next call; 0 turns it off (default DefaultFlushInterval).
	FlushMinutes float64 `json:"flushMinutes"`
}

// DefaultLifecycleParams are the lifecycle open parameters an engine uses
// when given none.
func DefaultLifecycleParams() LifecycleParams {
	return LifecycleParams{LifecycleModel: DefaultLifecycleModel(), FlushAfter: DefaultFlushAfter, FlushMinutes: DefaultFlushInterval.Minutes()}
}

// Validate reports the first parameter out of range, as an *Error with
// CodeInvalidParams.
func (p LifecycleParams) Validate() error {
	if err := p.LifecycleModel.Validate(); err != nil {
		return Errorf(CodeInvalidParams, "%v", err)
	}
	if p.FlushAfter < 1 || p.FlushMinutes < 0 || math.IsNaN(p.FlushMinutes) {
		return Errorf(CodeInvalidParams, "lifecycle: flushAfter must be at least 1 and flushMinutes at least 0")
	}
	return nil
}

// Maturity is an entry's lifecycle tier.
type Maturity string

// The tiers, weakest first.
const (
	MaturityDraft     Maturity = "draft"
	MaturityValidated Maturity = "validated"
	MaturityCore      Maturity = "core"
)

// Valid reports whether m is one of the three tiers.
func (m Maturity) Valid() bool {
	return m == MaturityDraft || m == MaturityValidated || m == MaturityCore
}

// MaxImportance bounds an entry's importance from above (0 bounds it from
// below).
const MaxImportance = 100

// LifecycleModel are the constants of the Adaptive Knowledge Lifecycle
// (docs/design.md, "Lifecycle"). Their JSON names are the "lifecycle" open
// parameters of docs/ABI.md §4.1; the defaults are DefaultLifecycleModel's,
// given after each field.
type LifecycleModel struct {
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

// DefaultLifecycleModel returns the constants of the ByteRover paper
// (§3.2.3), which Arbor keeps.
func DefaultLifecycleModel() LifecycleModel {
	return LifecycleModel{
		InitialImportance: 50, AccessBonus: 3, UpdateBonus: 5, DailyDecay: 0.995,
		PromoteValidated: 65, DemoteDraft: 35, PromoteCore: 85, DemoteValidated: 60,
		RecencyDays:     30,
		RelevanceWeight: 0.6, ImportanceWeight: 0.2, RecencyWeight: 0.2,
		CoreBoost: 1.15, ValidatedBoost: 1.0, DraftBoost: 0.85,
	}
}

// Validate reports the first constant that makes the model meaningless.
func (p LifecycleModel) Validate() error {
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

// Warning reports something in the tree the engine could not use, or that
// another file system could not hold, and why. Nothing is changed on disk.
type Warning struct {
	// Kind is what the warning is about: WarnFile, WarnState, WarnTwins,
	// WarnInterrupted or WarnConflict.
	Kind    string `json:"kind"`
	Path    string `json:"path"`
	Message string `json:"message"`
	// Paths are, for WarnTwins, every path of the group, sorted (Path is
	// the first).
	Paths []string `json:"paths,omitempty"`
}

// The kinds of Warning.
const (
	// WarnFile is a file of the tree that could not be used: over the size
	// limit, unreadable, or not parseable. It is left as it is.
	WarnFile = "file"
	// WarnState is a file of .arbor/ the engine keeps (state.json) that
	// could not be used; the engine starts that state afresh.
	WarnState = "state"
	// WarnTwins is files or folders in one folder whose names differ only
	// in case or Unicode normalization ("Projects" and "projects", "café"
	// composed and decomposed): Windows and macOS hold only one of them, so
	// a copy of the tree there loses or mixes the others. Rename or merge
	// them; the engine creates no such name (docs/format.md, "Paths").
	WarnTwins = "twins"
	// WarnInterrupted is a curate operation a killed process left without
	// its audit line (.arbor/journal.json): opening recorded it in the
	// audit log as the files show it, and the message says how.
	WarnInterrupted = "interrupted"
	// WarnConflict is a file in which a merge (docs/sync.md) kept both
	// versions of what two sides changed differently, in a "## Merge
	// Conflict" section. An UPDATE of the entry resolves it (for a context
	// file, an edit that deletes the section).
	WarnConflict = "conflict"
)

// OpenResult describes the tree that was opened.
type OpenResult struct {
	Entries  int       `json:"entries"`
	Contexts int       `json:"contexts"`
	Warnings []Warning `json:"warnings"`
	// Index says how the persisted search index was brought in step with
	// the tree.
	Index IndexStats `json:"index"`
	// Embeddings is set when the host has an embedding model.
	Embeddings *EmbeddingsInfo `json:"embeddings,omitempty"`
}

// IndexStats says how an open brought the persisted search index in step
// with the tree (docs/ABI.md §4.10).
type IndexStats struct {
	Reused  int `json:"reused"`  // documents already indexed with the same content
	Indexed int `json:"indexed"` // documents analyzed: new, changed, or all of them on a rebuild
	Removed int `json:"removed"` // documents dropped because they are no longer given
}

// EmbeddingsInfo says what an open found of the embedding vectors
// (docs/ABI.md §2.3); absent when the host has no embedding model.
type EmbeddingsInfo struct {
	Model string `json:"model"`
	Dims  int    `json:"dims"` // 0 until a vector was made
	// Vectors counts the files of the tree with a vector of the current
	// text; Embedded those embedded by this call; Missing those left
	// without one (an embedding call failed: they are searched by BM25
	// alone and embedded again at the next write or open).
	Vectors  int `json:"vectors"`
	Embedded int `json:"embedded"`
	Missing  int `json:"missing"`
}
