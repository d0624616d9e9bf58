package tidy

import (
	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/curate"
)

// Apply carries out plan through apply (a curate call), one call per
// operation, and returns what was applied and how many operations undid a
// failed split. progress, when not nil, is told how many of the plan's
// operations are done: an apply of a large tree's plan is minutes.
func Apply(plan []api.TidySuggestion, apply func([]api.Operation) curate.Result, progress func(done, total int)) (curate.Result, int) {
	var all curate.Result
	undone := 0
	total := 0
	for _, s := range plan {
		total += len(s.Operations)
	}
	report := func() {
		if progress != nil {
			progress(len(all.Applied), total)
		}
	}
	defer report()
	for _, s := range plan {
		report()
		r := applySuggestion(s, apply)
		for _, a := range r.Applied {
			all.Add(a)
		}
		if s.Kind == api.TidySplit && r.Summary.Failed > 0 {
			undone += undoSplit(s, r, apply)
		}
	}
	return all, undone
}

// applySuggestion applies the operations of s in order and stops at the
// first that fails: those after it build on it (a split deletes the entry
// once its parts are written; a merge's text assumes the merges before
// it), and are reported as not tried.
func applySuggestion(s api.TidySuggestion, apply func([]api.Operation) curate.Result) curate.Result {
	var r curate.Result
	for i, op := range s.Operations {
		one := apply([]api.Operation{op})
		r.Add(one.Applied[0])
		if one.Summary.Failed == 0 {
			continue
		}
		for _, rest := range s.Operations[i+1:] {
			r.Add(curate.Applied{Applied: api.Applied{Type: rest.Type, Path: rest.Path, To: rest.To, Status: api.StatusFailed,
				Message: "not tried: an earlier operation of this tidy suggestion failed"}})
		}
		break
	}
	return r
}

// undoSplit removes the parts a split added when it failed before
// deleting the entry it splits, which is still whole: the tree then holds
// the split not at all. After the DELETE, every part is in the tree (the
// first at its own path if the MOVE failed), so nothing is undone. It
// returns the operations undone.
func undoSplit(s api.TidySuggestion, r curate.Result, apply func([]api.Operation) curate.Result) int {
	del := len(s.Operations) - 2 // split's operations: the ADDs, DELETE, MOVE
	if del < len(r.Applied) && r.Applied[del].Status == api.StatusSuccess {
		return 0
	}
	why := ""
	for _, a := range r.Applied {
		if a.Status != api.StatusSuccess {
			why = a.Message
			break
		}
	}
	var undo []api.Operation
	for _, a := range r.Applied[:min(del, len(r.Applied))] {
		if a.Type == api.OpAdd && a.Status == api.StatusSuccess {
			undo = append(undo, api.Operation{Type: api.OpDelete, Path: a.Path, Reason: "tidy: undo the split of " + s.Paths[0] + ", which failed: " + why})
		}
	}
	if len(undo) > 0 {
		apply(undo)
	}
	return len(undo)
}

// Based gives each operation of suggestions on an existing entry the
// version of it the plan was made from (base, and a MERGE's targetBase;
// docs/ABI.md §4.2), as version tells it ("" where it cannot): sent later
// through curate, after a person edited the entry, a merge's text or a
// split would otherwise replace the edit unseen, since the engine reads
// the edit before that call. A plan applied in the same call takes none:
// its operations follow one another on entries its own writes change.
func Based(suggestions []api.TidySuggestion, version func(path string) string) {
	for i := range suggestions {
		for j := range suggestions[i].Operations {
			op := &suggestions[i].Operations[j]
			if op.Type == api.OpAdd {
				continue
			}
			op.Base = version(op.Path)
			if op.Type == api.OpMerge {
				op.TargetBase = version(op.MergeTarget)
			}
		}
	}
}
