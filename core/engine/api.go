package engine

import (
	"encoding/json"
	"time"

	"github.com/arbormem/arbor/core/curate"
	"github.com/arbormem/arbor/core/lifecycle"
	"github.com/arbormem/arbor/core/search"
)

// OpenParams are the options of the "open" method (docs/ABI.md §4.1).
type OpenParams struct {
	// FixedTime freezes the engine's clock (RFC 3339), for reproducible output.
	FixedTime string `json:"fixedTime,omitempty"`
	// MaxFileBytes bounds the size of a file read or written; 0 means 1 MiB.
	MaxFileBytes int `json:"maxFileBytes,omitempty"`
	// LLM tunes the calls that talk to a model (docs/ABI.md §6).
	LLM *LLMOptions `json:"llm,omitempty"`
	// Lifecycle tunes the lifecycle model and the batching of its writes;
	// nil keeps the defaults. Over JSON, fields left out keep their defaults.
	Lifecycle *LifecycleParams `json:"lifecycle,omitempty"`
}

// LifecycleParams are the "lifecycle" open parameters (docs/ABI.md §4.1).
// A Go host starts from DefaultLifecycleParams and changes what it needs:
// every field is sent.
type LifecycleParams struct {
	lifecycle.Params
	// FlushAfter is the number of pending signal changes that triggers a write of state.json.
	FlushAfter int `json:"flushAfter"`
	// FlushMinutes is the age of pending changes that triggers a write at the next call; 0 turns it off.
	FlushMinutes float64 `json:"flushMinutes"`
}

// DefaultLifecycleParams are the lifecycle open parameters an engine uses
// when given none.
func DefaultLifecycleParams() LifecycleParams {
	return LifecycleParams{Params: lifecycle.Default(), FlushAfter: DefaultFlushAfter, FlushMinutes: DefaultFlushInterval.Minutes()}
}

// Warning reports a file the engine could not use, and why.
type Warning struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// OpenResult describes the tree that was opened.
type OpenResult struct {
	Entries  int       `json:"entries"`
	Contexts int       `json:"contexts"`
	Warnings []Warning `json:"warnings"`
	// Index says how the persisted search index was brought in step with
	// the tree: documents reused as stored, (re)analyzed, and removed.
	Index search.SyncStats `json:"index"`
}

// CurateParams are the parameters of "curate".
type CurateParams struct {
	Operations []curate.Operation `json:"operations"`
}

// SearchParams are the parameters of "search" and "query".
type SearchParams struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
}

// SearchResult is the answer of "search".
type SearchResult struct {
	Query   string       `json:"query"`
	Results []search.Hit `json:"results"`
	Total   int          `json:"total"`
	TookMs  float64      `json:"tookMs"`
}

// Tier numbers of DESIGN §5.
const (
	TierExactCache = 0
	TierFuzzyCache = 1
	TierDirect     = 2
)

// QueryResult is the answer of "query": which tier answered, with what
// entries and scores, and why retrieval stopped there.
type QueryResult struct {
	Query       string       `json:"query"`
	Tier        int          `json:"tier"`
	TierName    string       `json:"tierName"`
	Answer      string       `json:"answer"`
	Results     []search.Hit `json:"results"`
	Reason      string       `json:"reason"`
	NeedsLLM    bool         `json:"needsLLM"`
	OutOfDomain bool         `json:"outOfDomain"`
	TookMs      float64      `json:"tookMs"`
	// Sources are the entries a model's answer (tiers 3 and 4) used, each
	// checked to be one the model was shown.
	Sources []string `json:"sources,omitempty"`
	// Incomplete: the agentic loop ended (budget, iterations, a failed
	// call) before a final answer; Answer lists the entries it read.
	Incomplete bool `json:"incomplete,omitempty"`
	// LLM is the trace of the model calls, when there were any.
	LLM *LLMTrace `json:"llm,omitempty"`
}

// ReadParams are the parameters of "read".
type ReadParams struct {
	Path string `json:"path"`
}

// ReadResult is one entry or context file with its relations.
type ReadResult struct {
	Path      string     `json:"path"`
	Kind      string     `json:"kind"`
	Title     string     `json:"title"`
	Summary   string     `json:"summary"`
	Tags      []string   `json:"tags"`
	Keywords  []string   `json:"keywords"`
	CreatedAt *time.Time `json:"createdAt,omitempty"`
	UpdatedAt *time.Time `json:"updatedAt,omitempty"`
	Relations []string   `json:"relations"`
	Backlinks []string   `json:"backlinks"`
	Markdown  string     `json:"markdown"`
}

// TreeParams are the parameters of "tree".
type TreeParams struct {
	Path  string `json:"path,omitempty"`
	Depth int    `json:"depth,omitempty"`
}

// Node is one folder or entry of the tree.
type Node struct {
	Name     string  `json:"name"`
	Path     string  `json:"path"`
	Kind     string  `json:"kind"`
	Title    string  `json:"title,omitempty"`
	Children []*Node `json:"children,omitempty"`
}

// StatsResult counts what the tree holds.
type StatsResult struct {
	Entries   int            `json:"entries"`
	Contexts  int            `json:"contexts"`
	Domains   map[string]int `json:"domains"`
	Relations int            `json:"relations"`
	// Maturity counts the entries by lifecycle tier: draft, validated, core.
	Maturity map[lifecycle.Maturity]int `json:"maturity"`
	Warnings []Warning                  `json:"warnings"`
}

// FlushResult is the answer of "flush": whether state.json was written (it
// is not when nothing changed) and how many entries have recorded signals.
type FlushResult struct {
	Written bool `json:"written"`
	Entries int  `json:"entries"`
}

// request and response are the envelope of docs/ABI.md §3.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type response struct {
	ID     json.RawMessage `json:"id"`
	Result any             `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}
