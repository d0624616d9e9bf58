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
// others into it, one MERGE each.
func duplicates(t Tree, paths []string, threshold float64, claimed map[string]bool) []api.TidySuggestion {
	shingled := make([][]uint32, len(paths))
	for i, p := range paths {
		t.read(i, len(paths))
		if e, ok := t.Catalog.Get(p); ok {
			shingled[i] = shingles(knowledge(e))
		}
	}
	t.read(len(paths), len(paths))
	pairs := SimilarPairs(shingled, threshold)
	// Union-find over the verified pairs gives the groups; each group
	// keeps its fullest entry (the most shingles, then the first path) and
	// merges into it those as similar to it as the threshold asks.
	parent := make([]int, len(paths))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
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
	var out []api.TidySuggestion
	for _, r := range roots {
		g := groups[r]
		slices.Sort(g)
		keep := g[0]
		for _, x := range g[1:] {
			if len(shingled[x]) > len(shingled[keep]) {
				keep = x
			}
		}
		var dups []int
		low := 1.0
		for _, x := range g {
			if x == keep {
				continue
			}
			if s := sets.Jaccard(shingled[keep], shingled[x]); s >= threshold {
				dups = append(dups, x)
				low = min(low, s)
			}
		}
		if len(dups) == 0 {
			continue
		}
		if s, ok := mergeSuggestion(t, paths[keep], pathsOf(paths, dups), shingled, keep, dups); ok {
			s.Similarity = float64(int(low*10000+0.5)) / 10000
			out = append(out, s)
			for _, q := range s.Paths {
				claimed[q] = true
			}
		}
	}
	return out
}

func pathsOf(paths []string, idx []int) []string {
	out := make([]string, len(idx))
	for i, x := range idx {
		out[i] = paths[x]
	}
	return out
}

// mergeSuggestion is the MERGE of each duplicate into keep. Each carries
// the narrative the merge should leave (mergedNarrative), so that two
// copies of one text become one text rather than the text twice.
func mergeSuggestion(t Tree, keep string, dups []string, shingled [][]uint32, ki int, di []int) (api.TidySuggestion, bool) {
	kept, ok := t.Catalog.Get(keep)
	if !ok {
		return api.TidySuggestion{}, false
	}
	cur := kept.Narrative
	s := api.TidySuggestion{Kind: api.TidyMerge, Paths: append([]string{keep}, dups...)}
	var sims []string
	for i, d := range dups {
		e, ok := t.Catalog.Get(d)
		if !ok {
			return api.TidySuggestion{}, false
		}
		sim := sets.Jaccard(shingled[ki], shingled[di[i]])
		sims = append(sims, fmt.Sprintf("%s %.0f%%", d, 100*sim))
		cur = mergedNarrative(cur, e.Narrative, keep, d)
		op := api.Operation{Type: api.OpMerge, Path: d, MergeTarget: keep,
			Reason: fmt.Sprintf("tidy: near-duplicate of %s (%.0f%% of word shingles shared)", keep, 100*sim)}
		if n := cur; n != (api.Narrative{}) {
			op.Content.Narrative = &n
		}
		s.Operations = append(s.Operations, op)
	}
	s.Reason = fmt.Sprintf("near-duplicates of %s (word-shingle Jaccard similarity: %s): merged into it, facts united by statement, the fuller text kept and differing statements marked", keep, strings.Join(sims, ", "))
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
