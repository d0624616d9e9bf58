package api

import "strings"

// ArchiveFolder is the folder "tidy" moves stale entries into, under
// their own path (docs/ABI.md §4.17): ArchiveFolder/engineering/billing/x.md.
// Search, query, recent and context leave it out unless asked.
const ArchiveFolder = "_archive"

// IsArchived reports whether p is under ArchiveFolder.
func IsArchived(p string) bool {
	return p == ArchiveFolder || strings.HasPrefix(p, ArchiveFolder+"/")
}

// The kinds of upkeep suggestions (TidySuggestion.Kind, TidyParams.Kinds).
const (
	TidyMerge   = "merge"   // near-duplicates: MERGE into the fullest of them
	TidySplit   = "split"   // an entry over the size limit: its parts as entries
	TidyArchive = "archive" // a stale, low-importance entry: MOVE under ArchiveFolder
	TidyCrowded = "crowded" // a topic with too many entries: MOVE into new subtopics
)

// TidyKinds lists every kind, in the order a plan holds them.
var TidyKinds = []string{TidyMerge, TidySplit, TidyArchive, TidyCrowded}

// The defaults of TidyParams (docs/ABI.md §4.17 says why each).
const (
	DefaultTidySimilarity = 0.8
	DefaultTidySplitBytes = 8192
	DefaultTidyStaleDays  = 180
	DefaultTidyCrowded    = 40
	// DefaultTidyLimit is how many suggestions an answer holds when its
	// limit is not given: a plan of a large tree holds one per stale
	// entry, far more than a person or an agent reads.
	DefaultTidyLimit = 200
	// MinTidySplitBytes keeps a split from making parts too small to be
	// worth an entry each.
	MinTidySplitBytes = 1024
)

// TidyParams are the parameters of "tidy" (docs/ABI.md §4.17). The zero
// value plans every kind over the whole tree with the defaults, and
// applies nothing.
type TidyParams struct {
	// Kinds chooses the suggestions (TidyMerge, TidySplit, TidyArchive,
	// TidyCrowded); empty means all.
	Kinds []string `json:"kinds,omitempty"`
	// Folder limits the plan to the entries under a folder.
	Folder string `json:"folder,omitempty"`
	// Apply applies the plan through curate: all of it, or when Limit is
	// given (and not 0) its first Limit suggestions.
	Apply bool `json:"apply,omitempty"`
	// Limit is how many suggestions the answer holds, the first in the
	// plan's order; 0 is all of them, and nil (not given)
	// DefaultTidyLimit. Given, it also bounds what Apply applies.
	Limit *int `json:"limit,omitempty"`
	// Similarity is the word-shingle Jaccard similarity at or above which
	// two entries are near-duplicates, 0.5 to 1; 0 means
	// DefaultTidySimilarity.
	Similarity float64 `json:"similarity,omitempty"`
	// SplitBytes is the size of an entry's file above which it is split;
	// 0 means DefaultTidySplitBytes.
	SplitBytes int `json:"splitBytes,omitempty"`
	// StaleDays is how long an entry must have gone without change or use
	// to be archived; 0 means DefaultTidyStaleDays.
	StaleDays int `json:"staleDays,omitempty"`
	// ArchiveImportance is the importance at or below which a stale draft
	// is archived; 0 means the lifecycle's initial importance (an entry
	// that never gained any).
	ArchiveImportance float64 `json:"archiveImportance,omitempty"`
	// Crowded is the number of entries directly in one topic above which
	// new subtopics are proposed; 0 means DefaultTidyCrowded.
	Crowded int `json:"crowded,omitempty"`
	// LLM says the host can reach a model: with Apply, each merge's text
	// is written by it (docs/ABI.md §6.7), and the call returns a Pending.
	// Without Apply it changes nothing: a plan needs no model.
	LLM bool `json:"llm,omitempty"`
	// TokenBudget bounds the model calls of an apply with LLM (input and
	// output); 0 means the open's llm.curateTokenBudget.
	TokenBudget int `json:"tokenBudget,omitempty"`
	// MaxIterations bounds its model calls, one per merge, 1 to
	// MaxIterations; 0 means the open's llm.maxIterations.
	MaxIterations int `json:"maxIterations,omitempty"`
}

// Check returns p with its defaults filled in (initial is the lifecycle's
// initial importance), or an *Error with CodeInvalidParams.
func (p TidyParams) Check(initial float64) (TidyParams, error) {
	for _, k := range p.Kinds {
		if !containsFold(TidyKinds, k) {
			return p, Errorf(CodeInvalidParams, "kinds: %q: want %s", k, strings.Join(TidyKinds, ", "))
		}
	}
	if len(p.Kinds) == 0 {
		p.Kinds = TidyKinds
	}
	if p.Folder = strings.TrimSpace(p.Folder); p.Folder != "" {
		c, err := CleanPath(p.Folder)
		if err != nil {
			return p, Errorf(CodeInvalidParams, "folder: %v", err)
		}
		p.Folder = c
	}
	switch {
	case p.Similarity == 0:
		p.Similarity = DefaultTidySimilarity
	case p.Similarity < 0.5 || p.Similarity > 1:
		return p, Errorf(CodeInvalidParams, "similarity %g: want 0.5 to 1", p.Similarity)
	}
	switch {
	case p.SplitBytes == 0:
		p.SplitBytes = DefaultTidySplitBytes
	case p.SplitBytes < MinTidySplitBytes:
		return p, Errorf(CodeInvalidParams, "splitBytes %d: want at least %d", p.SplitBytes, MinTidySplitBytes)
	}
	switch {
	case p.StaleDays == 0:
		p.StaleDays = DefaultTidyStaleDays
	case p.StaleDays < 0:
		return p, Errorf(CodeInvalidParams, "staleDays %d: want a positive number", p.StaleDays)
	}
	switch {
	case p.ArchiveImportance == 0:
		p.ArchiveImportance = initial
	case p.ArchiveImportance < 0 || p.ArchiveImportance > 100:
		return p, Errorf(CodeInvalidParams, "archiveImportance %g: want 0 to 100", p.ArchiveImportance)
	}
	if p.Limit != nil && *p.Limit < 0 {
		return p, Errorf(CodeInvalidParams, "limit %d: want 0 (every suggestion) or more", *p.Limit)
	}
	switch {
	case p.Crowded == 0:
		p.Crowded = DefaultTidyCrowded
	case p.Crowded < 2:
		return p, Errorf(CodeInvalidParams, "crowded %d: want at least 2", p.Crowded)
	}
	return p, nil
}

// Shown is how many suggestions the answer holds at most: the limit
// given, else DefaultTidyLimit; 0 is all.
func (p TidyParams) Shown() int {
	if p.Limit == nil {
		return DefaultTidyLimit
	}
	return *p.Limit
}

// Applies is how many suggestions an apply applies: those the answer
// holds when the limit was given, else all (0).
func (p TidyParams) Applies() int {
	if p.Limit == nil {
		return 0
	}
	return *p.Limit
}

// Wants reports whether p asks for kind.
func (p TidyParams) Wants(kind string) bool { return containsFold(p.Kinds, kind) }

func containsFold(l []string, s string) bool {
	for _, x := range l {
		if strings.EqualFold(strings.TrimSpace(x), s) {
			return true
		}
	}
	return false
}

// TidySuggestion is one proposal of a tidy plan: the curate operations
// that carry it out, applied together, and why.
type TidySuggestion struct {
	Kind string `json:"kind"`
	// Paths are the entries it is about: for TidyMerge the one kept
	// first, then those merged into it; for TidyCrowded the topic.
	Paths  []string `json:"paths"`
	Reason string   `json:"reason"`
	// Similarity is, for TidyMerge, the lowest Jaccard similarity of a
	// merged entry with the one kept.
	Similarity float64     `json:"similarity,omitempty"`
	Operations []Operation `json:"operations"`
	// MergedBy says, for a TidyMerge applied with LLM, who wrote the
	// merged text: MergedByModel, or MergedByTidy (the deterministic
	// merge) when the model's could not be used; Warning then says why.
	MergedBy string `json:"mergedBy,omitempty"`
	Warning  string `json:"warning,omitempty"`
}

// Who wrote a merge's text (TidySuggestion.MergedBy).
const (
	MergedByModel = "model"
	MergedByTidy  = "tidy"
)

// TidyResult is the answer of "tidy": the plan, and when it was applied
// what curate did.
type TidyResult struct {
	// Suggestions are the plan's first suggestions, at most the limit.
	Suggestions []TidySuggestion `json:"suggestions"`
	// Counts are every suggestion of the plan by kind (every kind asked
	// for), those left out by the limit included.
	Counts map[string]int `json:"counts"`
	// Omitted counts the suggestions of the plan the limit left out of
	// Suggestions.
	Omitted int `json:"omitted,omitempty"`
	// Entries counts the entries the plan looked at.
	Entries int `json:"entries"`
	// Applied is curate's result when Apply was set: the outcomes of the
	// operations of Suggestions, in the plan's order, and the summary of
	// every operation applied (of suggestions left out of the answer
	// too, when no limit was given).
	Applied *CurateResult `json:"applied,omitempty"`
	// Undone counts the operations of suggestions that failed part-way
	// and were undone (TidySplit), so that the tree holds each suggestion
	// whole or not at all.
	Undone int `json:"undone,omitempty"`
	// LLM is the trace of the model calls of an apply with LLM.
	LLM    *LLMTrace `json:"llm,omitempty"`
	TookMs float64   `json:"tookMs"`
}
