package curate

import (
	"strings"

	"github.com/arbormem/arbor/core/api"
)

// Applied is the outcome of one operation: what the caller is told
// (api.Applied) and what the engine keeps lifecycle signals by, which does
// not cross the ABI.
type Applied struct {
	api.Applied
	// Created reports that a successful ADD or UPSERT made a new entry.
	Created bool
	// Target names the entry a successful MERGE folded Path into.
	Target string
	// Moved maps each entry a successful MOVE moved to its new path.
	Moved map[string]string
}

// Result is the outcome of a curate call: one Applied per operation, in
// order, and the summary.
type Result struct {
	Applied []Applied
	Summary api.Summary
}

// Add appends one operation's outcome and counts it.
func (r *Result) Add(a Applied) {
	s := &r.Summary
	switch {
	case a.Status != api.StatusSuccess:
		s.Failed++
	case a.Type == api.OpAdd, a.Type == api.OpUpsert && a.Created:
		s.Added++
	case a.Type == api.OpUpdate, a.Type == api.OpUpsert:
		s.Updated++
	case a.Type == api.OpMerge:
		s.Merged++
	case a.Type == api.OpDelete:
		s.Deleted++
	case a.Type == api.OpMove:
		s.Moved++
	}
	r.Applied = append(r.Applied, a)
}

// API is r as it crosses the ABI.
func (r Result) API() api.CurateResult {
	out := api.CurateResult{Applied: make([]api.Applied, len(r.Applied)), Summary: r.Summary}
	for i, a := range r.Applied {
		out.Applied[i] = a.Applied
	}
	return out
}

// Refuse is the result of a call none of whose operations could be
// tried (the root's lock could not be taken): each fails with err.
func Refuse(ops []api.Operation, err error) Result {
	var r Result
	for _, op := range ops {
		r.Add(Applied{Applied: api.Applied{Type: strings.ToUpper(strings.TrimSpace(op.Type)), Path: op.Path, Status: api.StatusFailed, Message: err.Error()}})
	}
	return r
}
