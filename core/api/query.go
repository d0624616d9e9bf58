package api

import "time"

// SearchParams are the parameters of "search".
type SearchParams struct {
	Query string `json:"query"`
	// Limit bounds the results, 1 to 100; 0 means 10 for search, 5 for
	// query.
	Limit int `json:"limit,omitempty"`
	// Filters narrow the search and choose the order of its results.
	Filters
}

// MaxLimit is the most results a search or query may ask for.
const MaxLimit = 100

// MaxQueryBytes bounds the text of a search or query (docs/ABI.md §4.3).
// A question or a few sentences take a few hundred bytes; every term of a
// query is searched in every field, and the evidence rules and excerpts
// look at each, so a pasted document would cost seconds. A longer query
// is refused rather than cut: a search engine that drops the end of a
// query answers another question than the one asked, without saying so.
const MaxQueryBytes = 4096

// CheckQuery reports whether q can be searched: at most MaxQueryBytes
// bytes. The error is an *Error with CodeInvalidParams.
func CheckQuery(q string) error {
	if len(q) > MaxQueryBytes {
		return Errorf(CodeInvalidParams, "query is %d bytes, over the %d-byte limit: ask with fewer words", len(q), MaxQueryBytes)
	}
	return nil
}

// Check checks p's query (CheckQuery) and returns its limit: p.Limit, or
// def when it is 0; a limit outside 1 to MaxLimit is an *Error with
// CodeInvalidParams.
func (p SearchParams) Check(def int) (int, error) {
	if err := CheckQuery(p.Query); err != nil {
		return 0, err
	}
	switch {
	case p.Limit == 0:
		return def, nil
	case p.Limit < 0 || p.Limit > MaxLimit:
		return 0, Errorf(CodeInvalidParams, "limit %d: want 1 to %d", p.Limit, MaxLimit)
	}
	return p.Limit, nil
}

// TookMs is the time since start in milliseconds, to the microsecond, as
// the TookMs field of a result reports it.
func TookMs(start time.Time) float64 {
	return float64(time.Since(start).Microseconds()) / 1000
}

// Hit is one ranked result.
type Hit struct {
	Path    string `json:"path"`
	Kind    string `json:"kind"` // "entry" or "context"
	Title   string `json:"title"`
	Summary string `json:"summary,omitempty"`
	// Score is the normalized BM25 score ŝ = s/(1+s), rounded to 4
	// decimals, within [0.0001, 0.9999].
	Score float64 `json:"score"`
	// Excerpt is the passage that best matches the query, on word
	// boundaries.
	Excerpt string `json:"excerpt"`
	// Lifecycle is how "query" weighed the entry (docs/ABI.md §4.4);
	// "search" leaves it out.
	Lifecycle *Rank `json:"lifecycle,omitempty"`
}

// Rank is an entry's lifecycle as of a query and the compound score the
// query ordered it by.
type Rank struct {
	Importance float64  `json:"importance"`
	Maturity   Maturity `json:"maturity"`
	Recency    float64  `json:"recency"`
	Score      float64  `json:"score"`
}

// SearchResult is the answer of "search".
type SearchResult struct {
	Query   string  `json:"query"`
	Results []Hit   `json:"results"`
	Total   int     `json:"total"`
	TookMs  float64 `json:"tookMs"`
}

// The retrieval tiers (docs/ABI.md §4.4 and §6.4): the tier a query's
// answer came from.
const (
	TierExactCache = 0
	TierFuzzyCache = 1
	TierDirect     = 2
	TierLLM        = 3
	TierAgentic    = 4
)

// QueryParams are the parameters of "query". Without LLM the query stops
// at tier 2; with it, a question tiers 0–2 cannot answer goes on to tiers
// 3 and 4 through the pending/resume protocol (docs/ABI.md §6).
type QueryParams struct {
	SearchParams
	// LLM says the host can reach a model (default false).
	LLM bool `json:"llm,omitempty"`
	// TokenBudget bounds the tokens of all the query's model calls; 0 is
	// the open's llm.tokenBudget.
	TokenBudget int `json:"tokenBudget,omitempty"`
	// MaxIterations bounds the query's model calls, tier 3's included (1
	// to 50); 0 is the open's llm.maxIterations.
	MaxIterations int `json:"maxIterations,omitempty"`
}

// QueryResult is the answer of "query": which tier answered, with what
// entries and scores, and why retrieval stopped there.
type QueryResult struct {
	Query       string  `json:"query"`
	Tier        int     `json:"tier"`
	TierName    string  `json:"tierName"`
	Answer      string  `json:"answer"`
	Results     []Hit   `json:"results"`
	Reason      string  `json:"reason"`
	NeedsLLM    bool    `json:"needsLLM"`
	OutOfDomain bool    `json:"outOfDomain"`
	TookMs      float64 `json:"tookMs"`
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
	// Version names the file's bytes as read: an operation made from
	// them gives it as its Base (Operation.Base).
	Version string `json:"version"`
}

// TreeParams are the parameters of "tree".
type TreeParams struct {
	// Path is the folder to list; "" (the default) is the root.
	Path string `json:"path,omitempty"`
	// Depth limits the levels listed; 0 (the default) lists them all.
	Depth int `json:"depth,omitempty"`
}

// Node is one folder or entry of the tree.
type Node struct {
	Name     string  `json:"name"`
	Path     string  `json:"path"`
	Kind     string  `json:"kind"` // root, domain, topic, subtopic, folder or entry
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
	Maturity map[Maturity]int `json:"maturity"`
	Warnings []Warning        `json:"warnings"`
}

// FlushResult is the answer of "flush": whether state.json was written (it
// is not when nothing changed) and how many entries have recorded signals.
type FlushResult struct {
	Written bool `json:"written"`
	Entries int  `json:"entries"`
}
