package prompt

import (
	"fmt"
	"testing"
)

func TestParseAnswer(t *testing.T) {
	known := func(p string) bool { return p == "a/b/c.md" || p == "a/b/d.md" }
	cases := []struct {
		name, text       string
		summary, sources string
		unknown, problem string
		notCovered       bool
		needsMore        string
	}{
		{name: "markdown headings", text: "## Summary\nYes.\n## Details\nFrom (a/b/d.md).\n## Sources\n- a/b/c.md\n## Gaps\nnone",
			summary: "Yes.", sources: "[a/b/c.md a/b/d.md]", unknown: "[]"},
		{name: "bold and inline", text: "**Summary:** Yes, twice.\n**Sources:** `a/b/c.md`, [x/y.md]\n**Gaps:** none",
			summary: "Yes, twice.", sources: "[a/b/c.md]", unknown: "[x/y.md]"},
		{name: "colon form, @ and leading slash", text: "Summary: ok\nSources:\n* @a/b/c.md\n* /a/b/d.md.",
			summary: "ok", sources: "[a/b/c.md a/b/d.md]", unknown: "[]"},
		{name: "not covered", text: "**NOT COVERED**", notCovered: true, sources: "[]", unknown: "[]"},
		{name: "marker inside the format", text: "## Summary\n**NOT COVERED**\n## Sources\nnone", notCovered: true, sources: "[]", unknown: "[]"},
		{name: "needs more inside the format", text: "Summary: NEEDS MORE - the rota\nGaps: all", needsMore: "the rota", sources: "[]", unknown: "[]"},
		{name: "needs more", text: "NEEDS MORE: the on-call rota", needsMore: "the on-call rota", sources: "[]", unknown: "[]"},
		{name: "prose", text: "Sure! The answer is yes.", problem: "it does not follow the format (no Summary, Details, Sources or Gaps section)", sources: "[]", unknown: "[]"},
		{name: "details header word is not a heading", text: "Summary: ok\nDetails about it follow a/b/c.md", summary: "ok\nDetails about it follow a/b/c.md", sources: "[a/b/c.md]", unknown: "[]"},
		{name: "only unknown", text: "Summary: ok\nSources: z.md", summary: "ok", sources: "[]", unknown: "[z.md]", problem: "it cites only entries that were not given: z.md"},
		{name: "no source", text: "## Summary\nok", summary: "ok", sources: "[]", unknown: "[]", problem: "it cites no entry"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := ParseAnswer(tc.text, known)
			if a.Summary != tc.summary || fmt.Sprint(nonNil(a.Sources)) != tc.sources || fmt.Sprint(nonNil(a.Unknown)) != tc.unknown ||
				a.Problem != tc.problem || a.NotCovered != tc.notCovered || a.NeedsMore != tc.needsMore {
				t.Fatalf("got %+v", a)
			}
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
