package tidy

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

// minCluster is the fewest entries a proposed subtopic gathers: fewer is
// a folder that does not make the topic easier to read.
const minCluster = 3

type topicCount struct {
	topic string
	n     int
}

// topicCounts counts the entries directly in each topic (domain/topic),
// by topic.
func topicCounts(paths []string) []topicCount {
	m := map[string]int{}
	for _, p := range paths {
		if d := path.Dir(p); strings.Count(d, "/") == 1 {
			m[d]++
		}
	}
	out := make([]topicCount, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, topicCount{k, m[k]})
	}
	return out
}

// crowded proposes, for each topic holding more than max entries
// directly, subtopics that gather entries sharing a tag (the most shared
// first), else a word of their titles, as MOVE operations. A tag all the
// topic's entries share says nothing about how to divide it and is
// passed over.
func crowded(t Tree, paths []string, limit int, claimed map[string]bool, emit func(api.TidySuggestion)) {
	for _, tc := range topicCounts(paths) {
		if tc.n <= limit {
			continue
		}
		var members []string
		for _, p := range paths {
			if path.Dir(p) == tc.topic && !claimed[p] {
				members = append(members, p)
			}
		}
		labels := map[string][]string{} // entry → its candidate labels
		for _, p := range members {
			if e, ok := t.Catalog.Get(p); ok && len(e.Tags) > 0 {
				for _, tag := range e.Tags {
					labels[p] = append(labels[p], tree.Slug(tag))
				}
			}
		}
		by := "shared tags"
		if len(labels) == 0 {
			by = "words of their titles"
			for _, p := range members {
				title, _ := t.Catalog.Title(p)
				for _, w := range words(title) {
					if len([]rune(w)) >= 4 && !titleStop[w] {
						labels[p] = append(labels[p], tree.Slug(w))
					}
				}
			}
		}
		var ops []api.Operation
		var made []string
		left := slices.Clone(members)
		for {
			count := map[string]int{}
			for _, p := range left {
				seen := map[string]bool{}
				for _, l := range labels[p] {
					if !seen[l] {
						seen[l] = true
						count[l]++
					}
				}
			}
			best, bestN := "", 0
			for _, l := range sortedKeys(count) {
				if n := count[l]; n > bestN && n < len(members) && l != path.Base(tc.topic) {
					best, bestN = l, n
				}
			}
			if bestN < minCluster {
				break
			}
			var rest []string
			for _, p := range left {
				if slices.Contains(labels[p], best) {
					ops = append(ops, api.Operation{Type: api.OpMove, Path: p, To: tc.topic + "/" + best,
						Reason: fmt.Sprintf("tidy: %s holds %d entries, over %d; %q gathers the %d that share it", tc.topic, tc.n, limit, best, bestN)})
				} else {
					rest = append(rest, p)
				}
			}
			made = append(made, fmt.Sprintf("%s (%d)", best, bestN))
			left = rest
			if len(left) <= limit/2 {
				break
			}
		}
		if len(ops) == 0 {
			continue
		}
		for _, op := range ops {
			claimed[op.Path] = true
		}
		emit(api.TidySuggestion{Kind: api.TidyCrowded, Paths: []string{tc.topic},
			Reason:     fmt.Sprintf("%s holds %d entries directly, over %d: new subtopics by %s: %s", tc.topic, tc.n, limit, by, strings.Join(made, ", ")),
			Operations: ops})
	}
}

// titleStop are title words too common to name a subtopic by.
var titleStop = map[string]bool{
	"about": true, "after": true, "before": true, "from": true, "into": true, "notes": true, "note": true,
	"that": true, "this": true, "with": true, "what": true, "when": true, "where": true, "which": true,
	"your": true, "their": true, "there": true, "have": true, "session": true, "part": true,
}
