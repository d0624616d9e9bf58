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

// Planned is a plan: its first suggestions, and how many it holds.
type Planned struct {
	// Suggestions are the plan's suggestions in its order: all of them,
	// or the first Plan was asked to keep.
	Suggestions []api.TidySuggestion
	// Counts are every suggestion of the plan by kind (every kind asked
	// for), and Total all of them.
	Counts map[string]int
	Total  int
	// Entries counts the entries the plan looked at.
	Entries int
	// Reads counts the entries read: once each by the pass the
	// near-duplicates and the splits share, and again for a candidate
	// pair, a group or a split.
	Reads int
	keep  int
}

// add counts s, and keeps it unless the plan has kept all it was asked to.
func (pl *Planned) add(s api.TidySuggestion) {
	pl.Counts[s.Kind]++
	pl.Total++
	if pl.keep == 0 || len(pl.Suggestions) < pl.keep {
		pl.Suggestions = append(pl.Suggestions, s)
	}
}

// Plan makes the plan p asks for (p checked: api.TidyParams.Check),
// merges first, then splits, archives and crowded topics, each kind in
// path order, and keeps its first keep suggestions (0: all of them): the
// others are counted, not held, so that the memory of a plan of which a
// few suggestions are shown does not grow with it. An entry is in one
// suggestion at most, so that a plan applies as a whole.
func Plan(t Tree, p api.TidyParams, keep int) Planned {
	var paths []string
	for _, q := range t.Catalog.Paths() {
		if api.IsArchived(q) || (p.Folder != "" && !strings.HasPrefix(q, p.Folder+"/")) {
			continue
		}
		paths = append(paths, q)
	}
	pl := Planned{Counts: map[string]int{}, Entries: len(paths), keep: keep}
	for _, k := range p.Kinds {
		pl.Counts[k] = 0
	}
	sc := scan(t, paths, p)
	pl.Reads = sc.reads
	claimed := map[string]bool{}
	if p.Wants(api.TidyMerge) {
		pl.Reads += duplicates(t, paths, sc.sketches, p.Similarity, claimed, pl.add)
	}
	if p.Wants(api.TidySplit) {
		pl.Reads += splits(t, paths, sc.over, p.SplitBytes, claimed, pl.add)
	}
	if p.Wants(api.TidyArchive) {
		archives(t, paths, p, claimed, pl.add)
	}
	if p.Wants(api.TidyCrowded) {
		crowded(t, paths, p.Crowded, claimed, pl.add)
	}
	return pl
}

// scanned is what the one read of every entry leaves to the kinds that
// need the entries' text.
type scanned struct {
	// sketches are the entries' sketches, by index in paths, when
	// near-duplicates are asked for.
	sketches []sketch
	// over are the entries over the split limit that a split can carry
	// (splittable), in path order, when splits are asked for.
	over  []int
	reads int
}

// scan reads every entry once for the near-duplicates and the splits
// both, keeping of each what those need: its sketch, and whether it is
// over the split limit.
func scan(t Tree, paths []string, p api.TidyParams) scanned {
	var sc scanned
	merge, split := p.Wants(api.TidyMerge), p.Wants(api.TidySplit)
	if !merge && !split {
		return sc
	}
	if merge {
		sc.sketches = make([]sketch, len(paths))
	}
	for i, q := range paths {
		t.read(i, len(paths))
		sc.reads++
		e, ok := t.Catalog.Get(q)
		if !ok {
			continue
		}
		if merge {
			sc.sketches[i] = sketchOf(shingles(knowledge(e)))
		}
		if split && len(tree.Render(e)) > p.SplitBytes && splittable(t, e) {
			sc.over = append(sc.over, i)
		}
	}
	t.read(len(paths), len(paths))
	return sc
}

// Pending counts the suggestions a plan with p's defaults would hold that
// need no entry read: archives, and crowded topics (one each). Status
// reports it; near-duplicates and oversized entries need every entry
// read, which "tidy" does.
func Pending(t Tree, p api.TidyParams) int {
	var paths []string
	for q := range t.Catalog.Unsorted() {
		if !api.IsArchived(q) {
			paths = append(paths, q)
		}
	}
	n := 0
	for _, q := range paths {
		if _, _, ok := stale(t, q, p); ok {
			n++
		}
	}
	for _, c := range topicCounts(paths) {
		if c.n > p.Crowded {
			n++
		}
	}
	return n
}

// archives proposes moving the stale, low-importance drafts under
// api.ArchiveFolder, keeping their path.
func archives(t Tree, paths []string, p api.TidyParams, claimed map[string]bool, emit func(api.TidySuggestion)) {
	for _, q := range paths {
		if claimed[q] {
			continue
		}
		sig, days, ok := stale(t, q, p)
		if !ok {
			continue
		}
		claimed[q] = true
		reason := fmt.Sprintf("stale: unchanged and unused for %d days (at least %d), a draft of importance %.0f (at most %.0f)", days, p.StaleDays, sig.Importance, p.ArchiveImportance)
		emit(api.TidySuggestion{Kind: api.TidyArchive, Paths: []string{q}, Reason: reason,
			Operations: []api.Operation{{Type: api.OpMove, Path: q, To: api.ArchiveFolder + "/" + q, Reason: "tidy: " + reason}}})
	}
}

// stale reports whether q is a draft of low importance unchanged and unused
// for p.StaleDays or more, for how many days, and its signal.
func stale(t Tree, q string, p api.TidyParams) (sig lifecycle.Signal, days int, ok bool) {
	sig = t.Signal(q)
	if sig.Maturity != api.MaturityDraft || sig.Importance > p.ArchiveImportance {
		return sig, 0, false
	}
	last := t.Catalog.Changed(q)
	if sig.LastActivity.After(last) {
		last = sig.LastActivity
	}
	if last.IsZero() {
		return sig, 0, false // nothing says when it was last written or used
	}
	days = int(t.Now.Sub(last).Hours() / 24)
	return sig, days, days >= p.StaleDays
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
