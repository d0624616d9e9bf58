// Package tidy plans the upkeep of a tree (docs/ABI.md §4.17): it finds
// near-duplicate entries, entries over a size limit, stale entries of low
// importance and crowded topics, and proposes for each the curate
// operations that fix it (MERGE, ADD/DELETE/MOVE, MOVE), with a reason.
// It reads the tree through the catalog and writes nothing: the engine
// applies a plan through curate, which makes every write atomic and
// audited.
package tidy

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/lifecycle"
	"github.com/arbormem/arbor/core/internal/tree"
)

// Tree is what a plan reads.
type Tree struct {
	Catalog *catalog.Catalog
	// Signal is an entry's lifecycle signal as of Now.
	Signal func(p string) lifecycle.Signal
	Now    time.Time
	// Read, when not nil, is told how many of the entries a pass of a
	// plan reads it has read: the near-duplicate and the size passes
	// read every entry, seconds at 100k.
	Read func(done, total int)
}

// read reports the i-th entry of n read by a pass.
func (t Tree) read(i, n int) {
	if t.Read != nil {
		t.Read(i, n)
	}
}

// Plan returns the suggestions p asks for (p checked: api.TidyParams.Check),
// merges first, then splits, archives and crowded topics, each kind in
// path order; and the number of entries it looked at. An entry is in one
// suggestion at most, so that a plan applies as a whole.
func Plan(t Tree, p api.TidyParams) ([]api.TidySuggestion, int) {
	var paths []string
	for _, q := range t.Catalog.Paths() {
		if api.IsArchived(q) || (p.Folder != "" && !strings.HasPrefix(q, p.Folder+"/")) {
			continue
		}
		paths = append(paths, q)
	}
	claimed := map[string]bool{}
	var out []api.TidySuggestion
	if p.Wants(api.TidyMerge) {
		out = append(out, duplicates(t, paths, p.Similarity, claimed)...)
	}
	if p.Wants(api.TidySplit) {
		out = append(out, splits(t, paths, p.SplitBytes, claimed)...)
	}
	if p.Wants(api.TidyArchive) {
		out = append(out, archives(t, paths, p, claimed)...)
	}
	if p.Wants(api.TidyCrowded) {
		out = append(out, crowded(t, paths, p.Crowded, claimed)...)
	}
	return out, len(paths)
}

// Pending counts the suggestions a plan with p's defaults would hold that
// need no entry read: archives, and crowded topics (one each). Status
// reports it; near-duplicates and oversized entries need every entry
// read, which "tidy" does.
func Pending(t Tree, p api.TidyParams) int {
	var paths []string
	for _, q := range t.Catalog.Paths() {
		if !api.IsArchived(q) {
			paths = append(paths, q)
		}
	}
	n := len(archives(t, paths, p, map[string]bool{}))
	for _, c := range topicCounts(paths) {
		if c.n > p.Crowded {
			n++
		}
	}
	return n
}

// archives proposes moving the stale, low-importance drafts under
// api.ArchiveFolder, keeping their path.
func archives(t Tree, paths []string, p api.TidyParams, claimed map[string]bool) []api.TidySuggestion {
	var out []api.TidySuggestion
	for _, q := range paths {
		if claimed[q] {
			continue
		}
		sig := t.Signal(q)
		if sig.Maturity != api.MaturityDraft || sig.Importance > p.ArchiveImportance {
			continue
		}
		last := t.Catalog.Changed(q)
		if sig.LastActivity.After(last) {
			last = sig.LastActivity
		}
		if last.IsZero() {
			continue // nothing says when it was last written or used
		}
		days := int(t.Now.Sub(last).Hours() / 24)
		if days < p.StaleDays {
			continue
		}
		claimed[q] = true
		reason := fmt.Sprintf("stale: unchanged and unused for %d days (at least %d), a draft of importance %.0f (at most %.0f)", days, p.StaleDays, sig.Importance, p.ArchiveImportance)
		out = append(out, api.TidySuggestion{Kind: api.TidyArchive, Paths: []string{q}, Reason: reason,
			Operations: []api.Operation{{Type: api.OpMove, Path: q, To: api.ArchiveFolder + "/" + q, Reason: "tidy: " + reason}}})
	}
	return out
}

// uniquePath returns folder/stem.md, or with _2, _3… when that is taken
// in the tree or by an earlier part of the plan.
func uniquePath(cat *catalog.Catalog, taken map[string]bool, folder, stem string) string {
	for i := 1; ; i++ {
		name := stem
		if i > 1 {
			name = fmt.Sprintf("%s_%d", stem, i)
		}
		p := path.Join(folder, name+".md")
		if !taken[tree.FoldKey(p)] && len(cat.Spellings(p)) == 0 && !cat.Has(p) {
			taken[tree.FoldKey(p)] = true
			return p
		}
	}
}

// sortedKeys returns m's keys sorted.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
