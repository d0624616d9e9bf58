package api

// ContextParams are the parameters of "context" (docs/ABI.md §4.16): the
// entry to build a prompt's context around, named by Path or found by
// Query (exactly one of them).
type ContextParams struct {
	// Path is an entry path, matched as "read" matches it.
	Path string `json:"path,omitempty"`
	// Query picks the entry "search" ranks first.
	Query string `json:"query,omitempty"`
	// Depth is how many links away from the entry to go, 0 to
	// MaxContextDepth; nil means DefaultContextDepth.
	Depth *int `json:"depth,omitempty"`
	// Budget is the most estimated tokens the markdown may take,
	// MinContextBudget to MaxContextBudget; 0 means DefaultContextBudget.
	Budget int `json:"budget,omitempty"`
	// Archived lets the walk (and Query) reach the entries under
	// ArchiveFolder, left out by default.
	Archived bool `json:"archived,omitempty"`
}

// The bounds and defaults of ContextParams.
const (
	DefaultContextDepth  = 1
	MaxContextDepth      = 3
	DefaultContextBudget = 2000
	MinContextBudget     = 100
	MaxContextBudget     = 200000
)

// How an entry of a "context" answer is in its markdown
// (ContextEntry.Included).
const (
	ContextFull      = "full"      // the whole entry
	ContextTruncated = "truncated" // the entry the context is built around, cut to the budget
	ContextSummary   = "summary"   // title, path and summary: the whole entry was over the budget left
	ContextOmitted   = "omitted"   // not in the markdown (Reason says why)
)

// Why a ContextEntry is not in the markdown whole (ContextEntry.Reason).
const (
	ContextReasonBudget     = "budget"     // it did not fit in the budget left
	ContextReasonUnreadable = "unreadable" // its file could not be read or parsed
)

// How a ContextEntry is linked to the entry that led to it (ContextEntry.Link).
const (
	ContextLinkRelation = "relation" // Via relates to it (related:, @path or a wikilink)
	ContextLinkBacklink = "backlink" // it links to Via
)

// ContextEntry is one entry a "context" answer reached, in the order of
// the walk: the entry asked for, then breadth-first.
type ContextEntry struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	// Depth is how many links away from the entry asked for it is; Via is
	// the entry that led to it and Link how the two are linked (both empty
	// at depth 0).
	Depth int    `json:"depth"`
	Via   string `json:"via,omitempty"`
	Link  string `json:"link,omitempty"`
	// Included says how it is in the markdown (ContextFull, …) and Reason
	// why not whole.
	Included string `json:"included"`
	Reason   string `json:"reason,omitempty"`
	// Tokens is what its part of the markdown takes, FullTokens what the
	// whole entry would take (both estimated).
	Tokens     int `json:"tokens"`
	FullTokens int `json:"fullTokens"`
}

// ContextResult is the answer of "context".
type ContextResult struct {
	// Path is the entry the context is built around: the one asked for, or
	// the best match of Query.
	Path  string `json:"path"`
	Query string `json:"query,omitempty"`
	// Markdown is the context, ready for a prompt: one "# Title" part per
	// entry in Entries that is not omitted, in that order.
	Markdown string `json:"markdown"`
	// Tokens is Markdown's estimated tokens, at most Budget.
	Tokens int `json:"tokens"`
	Budget int `json:"budget"`
	Depth  int `json:"depth"`
	// Entries are every entry the walk reached, those cut included.
	Entries []ContextEntry `json:"entries"`
	TookMs  float64        `json:"tookMs"`
}

// Check returns p's depth and budget with the defaults filled in, or an
// *Error with CodeInvalidParams when p names no entry, names one twice
// over, or a bound is out of range.
func (p ContextParams) Check() (depth, budget int, err error) {
	switch {
	case p.Path == "" && p.Query == "":
		return 0, 0, Errorf(CodeInvalidParams, "context: give a path or a query")
	case p.Path != "" && p.Query != "":
		return 0, 0, Errorf(CodeInvalidParams, "context: give a path or a query, not both")
	}
	if p.Query != "" {
		if err := CheckQuery(p.Query); err != nil {
			return 0, 0, err
		}
	}
	depth = DefaultContextDepth
	if p.Depth != nil {
		depth = *p.Depth
	}
	if depth < 0 || depth > MaxContextDepth {
		return 0, 0, Errorf(CodeInvalidParams, "depth %d: want 0 to %d", depth, MaxContextDepth)
	}
	budget = p.Budget
	if budget == 0 {
		budget = DefaultContextBudget
	}
	if budget < MinContextBudget || budget > MaxContextBudget {
		return 0, 0, Errorf(CodeInvalidParams, "budget %d: want %d to %d tokens", budget, MinContextBudget, MaxContextBudget)
	}
	return depth, budget, nil
}
