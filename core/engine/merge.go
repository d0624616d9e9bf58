package engine

import (
	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/merge"
)

// Merge merges the files two versions of a tree changed since their common
// ancestor, entry by entry (docs/ABI.md §4.15, docs/sync.md). It reads and
// writes nothing, so it needs no open engine: a host syncing a root through
// git merges with it and writes the result itself.
func Merge(p api.MergeParams) (api.MergeResult, error) {
	return merge.Files(p)
}
