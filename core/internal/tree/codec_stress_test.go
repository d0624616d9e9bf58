package tree

import (
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
)

// stressTokens are the pieces of markdown and YAML syntax the codec has
// to keep apart; random strings built from them reach structure that
// byte-level fuzzing finds only slowly.
var stressTokens = []string{
	"\n", "\n", "\n", " ", " ", "a", "b", "Title", "é", "가", "\t", "\r\n", "\r",
	"## ", "### ", "# ", "#", "## Reason", "## Facts", "## Relations", "## Raw Concept", "## Narrative",
	"## Snippets", "### Rules", "### Structure", "### Notes", "# Title",
	"```", "````", "~~~", "```go", "~~~py", "`",
	"**", "**Task:**", "**Files:**", "**Author**:", "**a**:", "**b:**", "*",
	"- ", "* ", "+ ", "-", "@", "@x.md", "[", "]", "[cat]", " [c]", "[[", "]]", "[[a|b]]", "|",
	":", ": ", " #", ",", ", ", "---", "\"", "'", "\\", "{", "}", "yes", "null", "~", "1", "0.5",
	"\u00a0", "\u2028", "\ufeff", "\x00", "\x7f", "\u0085", "&a", "*a", "!x", ">", "%",
}

func stressString(r *rand.Rand, maxTokens int) string {
	var b strings.Builder
	n := r.Intn(maxTokens + 1)
	for i := 0; i < n; i++ {
		b.WriteString(stressTokens[r.Intn(len(stressTokens))])
	}
	return b.String()
}

func TestRenderStableStress(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	iterations := 6000
	if testing.Short() {
		iterations = 600
	}
	s := func() string { return stressString(r, 12) }
	list := func() []string {
		var l []string
		for i := r.Intn(4); i > 0; i-- {
			l = append(l, s())
		}
		return l
	}
	for i := 0; i < iterations; i++ {
		e := &Entry{
			Path:  []string{"", "a/b/my_note.md", "x/Title.md", s()}[r.Intn(4)],
			Title: s(), Summary: s(), Tags: list(), Related: list(), Keywords: list(),
			Extra:      []KeyValue{{Key: s(), Value: s()}, {Key: "importance", Value: s()}},
			Reason:     s(),
			RawConcept: api.RawConcept{Task: s(), Changes: s(), Files: list(), Flow: s(), Timestamp: s(), Author: s()},
			Narrative: api.Narrative{Text: s(), Structure: s(), Dependencies: s(), Highlights: s(), Rules: s(),
				Examples: s(), Diagrams: s()},
			Snippets:        list(),
			LegacyRelations: list(),
			Preamble:        s(),
		}
		if r.Intn(2) == 0 {
			e.CreatedAt = time.Unix(r.Int63n(1<<35), 0)
		}
		for j := r.Intn(4); j > 0; j-- {
			e.Facts = append(e.Facts, api.Fact{Subject: s(), Statement: s(), Category: s()})
		}
		for j := r.Intn(3); j > 0; j-- {
			e.Other = append(e.Other, Section{Heading: s(), Body: s()})
		}
		checkStable(t, e)

		// The same tokens as a whole hand-written file.
		file := stressString(r, 60)
		if r.Intn(2) == 0 {
			file = "---\ntitle: " + s() + "\n---\n" + file
		}
		if pe, err := ParseEntry("n/hand_written.md", []byte(file)); err == nil {
			checkStable(t, pe)
		}
	}
}
