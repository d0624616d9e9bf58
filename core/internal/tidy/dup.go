package tidy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/merge"
	"github.com/arbormem/arbor/core/internal/sets"
	"github.com/arbormem/arbor/core/internal/tree"
)

// knowledge is the text of an entry that says what it knows: title,
// summary, narrative, facts, snippets, raw concept and the sections curate
// does not know. The reason and the front matter's dates say how it was
// written, which two copies of one note need not share.
func knowledge(e *tree.Entry) string {
	var b strings.Builder
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	add(e.Title)
	add(e.Summary)
	add(e.Preamble)
	for _, p := range api.NarrativeParts {
		add(*p.Get(&e.Narrative))
	}
	for _, f := range e.Facts {
		add(tree.FactText(f))
	}
	for _, s := range e.Snippets {
		add(s)
	}
	add(e.RawConcept.Task)
	add(e.RawConcept.Changes)
	add(e.RawConcept.Flow)
	for _, s := range e.Other {
		add(s.Heading)
		add(s.Body)
	}
	return b.String()
}

// duplicates groups the entries whose similarity with one entry of the
// group, the one kept, is at least threshold, and proposes merging the
// others into it, one MERGE each. sk are the entries' sketches (scan).
// It returns the entries it read again.
func duplicates(t Tree, paths []string, sk []sketch, threshold float64, claimed map[string]bool, emit func(api.TidySuggestion)) int {
	sh := newReshingler(t, paths)
	pairs := similarPairs(sk, threshold, sh.of)
	// Union-find over the verified pairs gives the groups; each group
	// keeps its fullest entry (the most shingles, then the first path) and
	// merges into it those as similar to it as the threshold asks.
	parent := map[int]int{}
	var find func(int) int
	find = func(x int) int {
		if _, ok := parent[x]; !ok {
			parent[x] = x
		}
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, pr := range pairs {
		a, b := find(pr.A), find(pr.B)
		if a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	groups := map[int][]int{}
	for _, pr := range pairs {
		for _, x := range []int{pr.A, pr.B} {
			r := find(x)
			if !slices.Contains(groups[r], x) {
				groups[r] = append(groups[r], x)
			}
		}
	}
	roots := make([]int, 0, len(groups))
	for r := range groups {
		roots = append(roots, r)
	}
	slices.Sort(roots)
	for _, r := range roots {
		g := groups[r]
		slices.Sort(g)
		keep := g[0]
		for _, x := range g[1:] {
			if sk[x].n > sk[keep].n {
				keep = x
			}
		}
		var dups []int
		var sims []float64
		low := 1.0
		for _, x := range g {
			if x == keep {
				continue
			}
			if s := sets.Jaccard(sh.of(keep), sh.of(x)); s >= threshold {
				dups = append(dups, x)
				sims = append(sims, s)
				low = min(low, s)
			}
		}
		if len(dups) == 0 {
			continue
		}
		if s, ok := mergeSuggestion(t, paths[keep], pathsOf(paths, dups), sims); ok {
			s.Similarity = float64(int(low*10000+0.5)) / 10000
			emit(s)
			for _, q := range s.Paths {
				claimed[q] = true
			}
		}
	}
	return sh.reads
}

// reshingler makes the shingles of the entries a candidate pair or a
// group names, reading them again: a plan keeps no entry's shingles
// (sketch), which would grow with the tree. Candidate pairs come ordered
// by their first entry, so the few sets last made are kept for the pairs
// after; reads counts the entries read.
type reshingler struct {
	t     Tree
	paths []string
	made  map[int][]uint32
	order []int // made's keys, oldest first
	reads int
}

// reshingled is how many shingle sets a reshingler keeps.
const reshingled = 256

func newReshingler(t Tree, paths []string) *reshingler {
	return &reshingler{t: t, paths: paths, made: map[int][]uint32{}}
}

// of returns the shingles of the i-th entry (none when it can no longer
// be read).
func (r *reshingler) of(i int) []uint32 {
	if sh, ok := r.made[i]; ok {
		return sh
	}
	r.reads++
	var sh []uint32
	if e, ok := r.t.Catalog.Get(r.paths[i]); ok {
		sh = shingles(knowledge(e))
	}
	if len(r.order) == reshingled {
		delete(r.made, r.order[0])
		r.order = r.order[1:]
	}
	r.made[i] = sh
	r.order = append(r.order, i)
	return sh
}

func pathsOf(paths []string, idx []int) []string {
	out := make([]string, len(idx))
	for i, x := range idx {
		out[i] = paths[x]
	}
	return out
}

// mergeSuggestion is the MERGE of each duplicate into keep (sims: each
// one's similarity with it). Each carries the narrative the merge should
// leave (mergedNarrative), so that two copies of one text become one
// text rather than the text twice.
func mergeSuggestion(t Tree, keep string, dups []string, sims []float64) (api.TidySuggestion, bool) {
	kept, ok := t.Catalog.Get(keep)
	if !ok {
		return api.TidySuggestion{}, false
	}
	cur := kept.Narrative
	s := api.TidySuggestion{Kind: api.TidyMerge, Paths: append([]string{keep}, dups...)}
	var said []string
	for i, d := range dups {
		e, ok := t.Catalog.Get(d)
		if !ok {
			return api.TidySuggestion{}, false
		}
		sim := sims[i]
		said = append(said, fmt.Sprintf("%s %.0f%%", d, 100*sim))
		cur = mergedNarrative(cur, e.Narrative, keep, d)
		op := api.Operation{Type: api.OpMerge, Path: d, MergeTarget: keep,
			Reason: fmt.Sprintf("tidy: near-duplicate of %s (%.0f%% of word shingles shared)", keep, 100*sim)}
		if n := cur; n != (api.Narrative{}) {
			op.Content.Narrative = &n
		}
		s.Operations = append(s.Operations, op)
	}
	s.Reason = fmt.Sprintf("near-duplicates of %s (word-shingle Jaccard similarity: %s): merged into it, facts united by statement, the fuller text kept and differing statements marked", keep, strings.Join(said, ", "))
	return s, true
}

// mergedNarrative is a's and b's narratives as one, part by part: the
// fuller text of each part (ours: the longer), the sentences only the
// other has added where they stand, and where the two say different
// things at one place, ours kept and the other's marked below it
// (merge.Text2, sentence by sentence). aPath and bPath name the entries.
func mergedNarrative(a, b api.Narrative, aPath, bPath string) api.Narrative {
	var out api.Narrative
	for _, p := range api.NarrativeParts {
		*p.Get(&out) = mergeText(*p.Get(&a), *p.Get(&b), aPath, bPath)
	}
	return out
}

// mergeText merges two versions of one part of a narrative.
func mergeText(a, b, aPath, bPath string) string {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case b == "" || a == b:
		return a
	case a == "":
		return b
	}
	otherPath := bPath
	if len([]rune(b)) > len([]rune(a)) {
		a, b = b, a
		otherPath = aPath
	}
	ua, joinA := sentenceLines(a)
	ub, joinB := sentenceLines(b)
	for k, v := range joinB {
		if _, ok := joinA[k]; !ok {
			joinA[k] = v
		}
	}
	text, conflicts := merge.Text2(ua, ub)
	out := strings.TrimSpace(unSentence(text, joinA))
	for _, c := range conflicts {
		said := strings.TrimSpace(unSentence(c.Theirs, joinA))
		out += fmt.Sprintf("\n\n> **Differs in %s** (tidy merge; the text above is kept): %s", otherPath, strings.ReplaceAll(said, "\n", " "))
	}
	return out
}

// sentenceLines puts each sentence of text on a line of its own, for a
// line merge to match sentence by sentence; join says, for each sentence,
// what followed it in text (a space, or a line break), for unSentence.
func sentenceLines(text string) (string, map[string]string) {
	join := map[string]string{}
	var b strings.Builder
	// Code keeps its lines whole and as written.
	code := strings.Contains(text, "```")
	for _, line := range strings.Split(text, "\n") {
		ss := sentences(line)
		if code && strings.TrimSpace(line) != "" {
			ss = []string{line}
		}
		if len(ss) == 0 {
			b.WriteString("\n")
			continue
		}
		for i, s := range ss {
			b.WriteString(s)
			b.WriteString("\n")
			if i < len(ss)-1 {
				join[s] = " "
			} else if _, ok := join[s]; !ok {
				join[s] = "\n"
			}
		}
	}
	return b.String(), join
}

// unSentence undoes sentenceLines.
func unSentence(lines string, join map[string]string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(lines, "\n") {
		s := strings.TrimSuffix(l, "\n")
		if s == "" {
			if l != "" {
				b.WriteString("\n")
			}
			continue
		}
		b.WriteString(s)
		if j, ok := join[s]; ok {
			b.WriteString(j)
		} else {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// sentences cuts a line into its sentences: after ".", "!" or "?"
// followed by a space. A list item or heading stays one line.
func sentences(line string) []string {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i+1 < len(line); i++ {
		if (line[i] == '.' || line[i] == '!' || line[i] == '?') && line[i+1] == ' ' {
			if s := strings.TrimSpace(line[start : i+1]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(line[start:]); s != "" {
		out = append(out, s)
	}
	return out
}
