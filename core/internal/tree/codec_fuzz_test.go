package tree

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
)

// checkStable asserts the codec's contract for one entry: the rendering
// parses, and rendering the parsed entry gives the same bytes.
func checkStable(t *testing.T, e *Entry) {
	t.Helper()
	r1 := Render(e)
	e2, err := ParseEntry(e.Path, r1)
	if err != nil {
		t.Fatalf("rendered entry does not parse: %v\n--- rendered:\n%s", err, r1)
	}
	r2 := Render(e2)
	if !bytes.Equal(r1, r2) {
		t.Fatalf("render not stable: %s\n--- entry: %#v", firstDiff(string(r1), string(r2)), e)
	}
}

// firstDiff shows the first differing line of two renderings, with context.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y || i >= len(la) || i >= len(lb) {
			lo := i - 3
			if lo < 0 {
				lo = 0
			}
			hi := func(l []string) []string {
				if i+3 < len(l) {
					return l[lo : i+3]
				}
				return l[lo:]
			}
			return fmt.Sprintf("line %d\n--- first:\n%q\n--- second:\n%q", i+1, hi(la), hi(lb))
		}
	}
	return "equal"
}

// FuzzRoundTrip builds entries from arbitrary strings and checks
// Render(ParseEntry(Render(e))) == Render(e).
func FuzzRoundTrip(f *testing.F) {
	f.Add("Auth-Billing Circular Dependency", "auth imports billing: a cycle", "architecture|circular-dependency",
		"importance", "82", "why", "Map the cycle\nand more", "src/a.ts|src/b.ts", "text", "## not a section\n### Rules",
		"**auth**: imports billing [project]\nplain", "```go\nx := 1\n```", "a\n```\nb", "a/b.md", "Notes", "body [[link]]",
		"# Auth-Billing Circular Dependency\nintro", "eng/x/auth_billing.md", int64(1770000000))
	f.Add("", "", "", "", "", "", "**Files:** x", "a,b|c", "```\nopen", "", "- [x]", "````\n```", "", "@x", "Facts", "- y",
		"---\nx\n---", "", int64(0))
	f.Add("title: x", "#no", "a: b|[c]|", "k: v", "\n  - a\n  - b", "## Reason", "**Task:** dup", "", "", "### Rules\nr",
		"**a:** b", "~~~py\nx\n~~~", "", "", "Relations", "@a\ntext", "", "n.md", int64(-1))
	f.Fuzz(func(t *testing.T, title, summary, tags, extraKey, extraVal, reason, task, files, narr, rules,
		facts, snip1, snip2, legacy, otherH, otherB, preamble, path string, created int64) {
		e := &Entry{
			Path:     path,
			Title:    title,
			Summary:  summary,
			Tags:     strings.Split(tags, "|"),
			Related:  []string{legacy},
			Keywords: strings.Split(summary, " "),
			Extra:    []KeyValue{{Key: extraKey, Value: extraVal}, {Key: "maturity", Value: extraVal}},
			Comments: []KeyValue{{Key: extraKey, Value: otherB}, {Key: "title", Value: rules}, {Key: "", Value: otherH}},
			Reason:   reason,
			RawConcept: api.RawConcept{Task: task, Changes: reason, Files: strings.Split(files, "|"),
				Flow: narr, Timestamp: title, Author: legacy},
			Narrative:       api.Narrative{Text: narr, Rules: rules, Examples: snip2, Structure: otherB},
			Snippets:        []string{snip1, snip2, narr},
			LegacyRelations: []string{legacy, otherH},
			Preamble:        preamble,
			Other:           []Section{{Heading: otherH, Body: otherB}, {Heading: reason, Body: rules}},
		}
		if created > -1<<40 && created < 1<<37 {
			e.CreatedAt = time.Unix(created, 0)
		}
		for _, l := range strings.Split(facts, "\n") {
			s, st, _ := strings.Cut(l, "|")
			st, cat, _ := strings.Cut(st, "|")
			e.Facts = append(e.Facts, api.Fact{Subject: s, Statement: st, Category: cat})
		}
		e.Facts = append(e.Facts, api.Fact{Statement: facts})
		checkStable(t, e)
	})
}

// FuzzParse feeds arbitrary files to the parser: it must not panic, and
// whatever it accepts must be stable from the first rewrite on.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.md")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(string(data))
		}
	}
	f.Add("## Facts\n- **a**: b [c]\n## Facts\n- x")
	f.Add("# T\n# T\n```\n## x\n")
	f.Add(commentedEntry)
	f.Fuzz(func(t *testing.T, data string) {
		tm := time.AfterFunc(3*time.Second, func() { panic(fmt.Sprintf("SLOW INPUT %q", data)) })
		defer tm.Stop()
		e, err := ParseEntry("notes/some_note.md", []byte(data))
		if err != nil {
			return
		}
		checkStable(t, e)
	})
}
