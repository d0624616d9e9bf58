package prompt

import (
	"fmt"
	"reflect"
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

// answerKnown are the entries the model was given in the tests below.
func answerKnown(p string) bool {
	switch p {
	case "eng/billing/retry.md", "eng/billing/refunds.md", "ops/oncall.md":
		return true
	}
	return false
}

func TestParseAnswerForms(t *testing.T) {
	const (
		retry   = "eng/billing/retry.md"
		refunds = "eng/billing/refunds.md"
		oncall  = "ops/oncall.md"
	)
	tests := []struct {
		name string
		text string
		want Answer
	}{
		{"empty", "", Answer{Problem: "the answer is empty"}},
		{"blank", " \n\t\n", Answer{Problem: "the answer is empty"}},
		{"the four sections",
			"## Summary\nRetries run three times.\n\n## Details\n- Three attempts (eng/billing/retry.md).\n- Refunds are separate (eng/billing/refunds.md).\n\n## Sources\n- eng/billing/retry.md\n\n## Gaps\nnone",
			// Sources cited in the Sources section come first, then the others in order.
			Answer{Summary: "Retries run three times.", Details: "- Three attempts (eng/billing/retry.md).\n- Refunds are separate (eng/billing/refunds.md).", Gaps: "none", Sources: []string{retry, refunds}}},
		{"bold capitals, numbered sources", "**SUMMARY**\nYes.\n**SOURCES**\n1. ops/oncall.md",
			Answer{Summary: "Yes.", Sources: []string{oncall}}},
		{"level 3 headings with colons", "### Summary:\nYes.\n### Sources:\n* ops/oncall.md",
			Answer{Summary: "Yes.", Sources: []string{oncall}}},
		// A heading with text after a colon keeps the text, colons included.
		{"inline sections", "Summary: Yes. Details: none\nSources: eng/billing/retry.md; ops/oncall.md",
			Answer{Summary: "Yes. Details: none", Sources: []string{retry, oncall}}},
		{"duplicates and unknown paths", "Summary: see ops/oncall.md and eng/billing/retry.md\nSources:\n- eng/billing/retry.md\n- eng/billing/retry.md\n- nope/x.md\n- nope/x.md",
			Answer{Summary: "see ops/oncall.md and eng/billing/retry.md", Sources: []string{retry, oncall}, Unknown: []string{"nope/x.md"}}},
		{"@ and / prefixes, trailing punctuation", "Summary: ok\nSources: @/eng/billing/retry.md:, /ops/oncall.md.",
			Answer{Summary: "ok", Sources: []string{retry, oncall}}},
		{"links and code spans", "Summary: ok\nSources: [retry](eng/billing/retry.md), `ops/oncall.md`, <eng/billing/refunds.md>",
			Answer{Summary: "ok", Sources: []string{retry, oncall, refunds}}},
		{".mdx is not an entry", "Summary: ok, see notes.mdx\nSources: eng/billing/retry.md",
			Answer{Summary: "ok, see notes.mdx", Sources: []string{retry}}},
		{"CRLF", "## Summary\r\nYes.\r\n## Sources\r\n- eng/billing/retry.md\r\n",
			Answer{Summary: "Yes.", Sources: []string{retry}}},
		{"text before the first section is dropped", "Here you go.\nSummary: ok\nSources: ops/oncall.md",
			Answer{Summary: "ok", Sources: []string{oncall}}},
		{"a repeated section is appended", "Summary: one\nSummary: two\nSources: ops/oncall.md",
			Answer{Summary: "one\ntwo", Sources: []string{oncall}}},
		{"multi-line gaps", "Summary: x (ops/oncall.md)\nGaps: the date\nis unknown",
			Answer{Summary: "x (ops/oncall.md)", Gaps: "the date\nis unknown", Sources: []string{oncall}}},
		// A section word that starts a sentence without a colon is text.
		{"a sentence starting with a section word", "Summary: ok\nSources of truth are listed below\n- ops/oncall.md",
			Answer{Summary: "ok\nSources of truth are listed below\n- ops/oncall.md", Sources: []string{oncall}}},
		{"no summary", "Details: eng/billing/retry.md",
			Answer{Details: "eng/billing/retry.md", Sources: []string{retry}, Problem: "it has no Summary"}},
		{"only unknown entries", "Summary: ok\nDetails: from z/a.md\nSources: z/b.md, z/a.md",
			Answer{Summary: "ok", Details: "from z/a.md", Unknown: []string{"z/b.md", "z/a.md"}, Problem: "it cites only entries that were not given: z/b.md, z/a.md"}},
		{"sources that are not paths", "Summary: ok\nSources: none",
			Answer{Summary: "ok", Problem: "it cites no entry"}},

		// Markers, on the first line only.
		{"not covered, lower case", "not covered", Answer{NotCovered: true}},
		{"not covered in a sentence", "Not covered by these entries.", Answer{NotCovered: true}},
		{"not covered as a heading", "# NOT COVERED", Answer{NotCovered: true}},
		{"not covered in italics", "_NOT COVERED_", Answer{NotCovered: true}},
		{"not covered after blank lines", "\n\n  NOT COVERED\n", Answer{NotCovered: true}},
		{"not covered before a format", "NOT COVERED\n## Summary\nx\n## Sources\n- ops/oncall.md", Answer{NotCovered: true}},
		{"not covered in the summary", "Summary: NOT COVERED\nSources: ops/oncall.md", Answer{NotCovered: true}},
		{"not covered later is text", "The entries have NOT COVERED this.",
			Answer{Problem: "it does not follow the format (no Summary, Details, Sources or Gaps section)"}},
		{"needs more, no note", "NEEDS MORE", Answer{NeedsMore: "the model said more entries are needed"}},
		{"needs more, lower case", "needs more: who approved it", Answer{NeedsMore: "who approved it"}},
		{"needs more, dash", "NEEDS MORE — the rota", Answer{NeedsMore: "the rota"}},
		{"needs more, hyphen", "**NEEDS MORE - the rota**", Answer{NeedsMore: "the rota"}},
		{"needs more, the marker bold", "**NEEDS MORE**: the rota", Answer{NeedsMore: "the rota"}},
		{"needs more in the summary drops the rest", "## Summary\nNEEDS MORE: the rota\n## Sources\n- eng/billing/retry.md",
			Answer{NeedsMore: "the rota"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseAnswer(tc.text, answerKnown); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseAnswer(%q) =\n%#v\nwant\n%#v", tc.text, got, tc.want)
			}
		})
	}
}

// known is asked about the cited paths once trimmed, never about text
// that is not a path.
func TestParseAnswerAsksKnown(t *testing.T) {
	asked := map[string]bool{}
	known := func(p string) bool { asked[p] = true; return p == "a/b.md" }
	ParseAnswer("Summary: see @a/b.md\nDetails: nothing else\nSources:\n- /c/d.md\n- a/b.md", known)
	if want := map[string]bool{"c/d.md": true, "a/b.md": true}; !reflect.DeepEqual(asked, want) {
		t.Errorf("known asked %v, want %v", asked, want)
	}
}

func TestAnswerRender(t *testing.T) {
	tests := []struct {
		name string
		a    Answer
		want string
	}{
		{"everything", Answer{Summary: "S.", Details: "D1\nD2", Sources: []string{"a/b.md", "c/d.md"}, Gaps: "G."},
			"Summary: S.\n\nDetails:\nD1\nD2\n\nSources:\n- a/b.md\n- c/d.md\n\nGaps: G."},
		{"no details, no gaps", Answer{Summary: "S.", Sources: []string{"a/b.md"}},
			"Summary: S.\n\nSources:\n- a/b.md\n\nGaps: none stated"},
		// Only the checked sources are written.
		{"unknown left out", Answer{Summary: "S.", Sources: []string{"a/b.md"}, Unknown: []string{"z/z.md"}, Problem: "p"},
			"Summary: S.\n\nSources:\n- a/b.md\n\nGaps: none stated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Render(); got != tc.want {
				t.Errorf("Render =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// A rendered answer reads back as itself.
func TestAnswerRenderRoundTrip(t *testing.T) {
	for _, text := range []string{
		"**Summary:** Retries run three times.\n**Details:**\n- three attempts (eng/billing/retry.md)\n- refunds apart (eng/billing/refunds.md)\n**Sources:** eng/billing/retry.md\n**Gaps:** the hour",
		"Summary: ok\nSources: ops/oncall.md, x/unknown.md",
	} {
		a := ParseAnswer(text, answerKnown)
		if a.Problem != "" {
			t.Fatalf("ParseAnswer(%q): %s", text, a.Problem)
		}
		b := ParseAnswer(a.Render(), answerKnown)
		if b.Summary != a.Summary || b.Details != a.Details || !reflect.DeepEqual(b.Sources, a.Sources) || b.Problem != "" || len(b.Unknown) != 0 {
			t.Errorf("round trip of %q:\n got %#v\nwant %#v", text, b, a)
		}
		if a.Gaps != "" && b.Gaps != a.Gaps {
			t.Errorf("round trip gaps %q, want %q", b.Gaps, a.Gaps)
		}
	}
}

// The answer format the prompts show is itself a usable answer.
func TestAnswerFormatParses(t *testing.T) {
	a := ParseAnswer(answerFormat, func(p string) bool { return p == "domain/topic/entry.md" })
	if a.Problem != "" || a.Summary != "One or two sentences that answer the question." || !reflect.DeepEqual(a.Sources, []string{"domain/topic/entry.md"}) {
		t.Errorf("ParseAnswer(answerFormat) = %#v", a)
	}
}
