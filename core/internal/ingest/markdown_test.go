package ingest

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestSplitMarkdownTable(t *testing.T) {
	md := api.FormatMarkdown
	runSplit(t, []splitCase{
		{name: "a note is one entry, its headings renested", file: "notes/plan.md", format: md,
			content: "Intro line.\n\n# Goals\nShip it.\n\n## Risks\nNone yet.\n",
			want: []piece{
				// Untitled by front matter or an opening heading: the file's base name.
				// The note's levels 1 and 2 take levels 4 and 5.
				{path: "notes/plan/plan.md", title: "plan", text: "Intro line.\n\n#### Goals\nShip it.\n\n##### Risks\nNone yet.", task: "Note (lines 1-7)"},
			}},
		{name: "an opening level-1 heading titles the note and leaves its text", file: "guide.md", format: md,
			content: "# Guide\n\nRead me.\n\n## Install\nRun it.\n",
			want:    []piece{{path: "documents/guide/guide.md", title: "Guide", text: "Read me.\n\n#### Install\nRun it.", task: "Note (lines 3-6)"}}},
		{name: "front matter read, not text", file: "plan.md", format: md,
			content: "---\ntitle: Plan\nowner: me\n---\n# Goals\nShip it.\n",
			want:    []piece{{path: "documents/plan/plan.md", title: "Plan", text: "#### Goals\nShip it.", task: "Note (lines 5-6)"}}},
		{name: "front matter closed by dots", file: "memo.md", format: md,
			content: "---\nowner: me\n...\nBody text.\n",
			want:    []piece{{path: "documents/memo/memo.md", title: "memo", text: "Body text.", task: "Note (line 4)"}}},
		{name: "unclosed front matter is content", file: "memo.md", format: md,
			content: "---\nowner: me\n",
			want:    []piece{{path: "documents/memo/memo.md", title: "memo", text: "---\nowner: me", task: "Note (lines 1-2)"}}},
		{name: "setext headings become ATX, the underline a blank line", file: "s.md", format: md,
			content: "Intro\n\nTitle\n=====\ntext\n\nSub\n---\nmore\n",
			want:    []piece{{path: "documents/s/s.md", title: "s", text: "Intro\n\n#### Title\n\ntext\n\n##### Sub\n\nmore", task: "Note (lines 1-9)"}}},
		{name: "dashes after a blank line are a rule, not an underline", file: "t.md", format: md,
			content: "Para\n\n---\nafter\n",
			want:    []piece{{path: "documents/t/t.md", title: "t", text: "Para\n\n---\nafter", task: "Note (lines 1-4)"}}},
		{name: "an underline under a heading is text", file: "u.md", format: md,
			content: "x\n# A\n---\ny\n",
			want:    []piece{{path: "documents/u/u.md", title: "u", text: "x\n#### A\n---\ny", task: "Note (lines 1-4)"}}},
		{name: "headings inside a fence are text", file: "f.md", format: md,
			content: "x\n```sh\n# not a heading\n```\n## B\nx\n",
			want:    []piece{{path: "documents/f/f.md", title: "f", text: "x\n```sh\n# not a heading\n```\n#### B\nx", task: "Note (lines 1-6)"}}},
		{name: "a shorter fence does not close a longer one", file: "f.md", format: md,
			content: "x\n~~~~\n~~~\n# B\n~~~~\n# C\nz\n",
			want:    []piece{{path: "documents/f/f.md", title: "f", text: "x\n~~~~\n~~~\n# B\n~~~~\n#### C\nz", task: "Note (lines 1-7)"}}},
		{name: "levels keep their nesting, the fourth and deeper at 6", file: "d.md", format: md,
			content: "intro\n## A\n### B\n#### C\n##### D\nx\n### E\n",
			want:    []piece{{path: "documents/d/d.md", title: "d", text: "intro\n#### A\n##### B\n###### C\n###### D\nx\n##### E", task: "Note (lines 1-7)"}}},
		{name: "reserved section names stay headings of the text", file: "r.md", format: md,
			content: "intro\n## Facts\nf\n## Relations\n@a/b/c.md\n### Rules\nr\n",
			want:    []piece{{path: "documents/r/r.md", title: "r", text: "intro\n#### Facts\nf\n#### Relations\n@a/b/c.md\n##### Rules\nr", task: "Note (lines 1-7)"}}},
		{name: "CRLF and byte-order mark", file: "c.md", format: md,
			content: "\uFEFF# C\r\nline\r\n",
			want:    []piece{{path: "documents/c/c.md", title: "C", text: "line", task: "Note (line 2)"}}},
		{name: "empty file", file: "e.md", format: md, content: ""},
		{name: "blank file", file: "e.md", format: md, content: "\n \n\t\n"},
		{name: "folders are domain, topic and subtopic", file: "notes/billing/stripe/webhooks.md", format: md,
			content: "Retry them.",
			want:    []piece{{path: "notes/billing/stripe/webhooks.md", title: "webhooks", text: "Retry them.", task: "Note (line 1)"}}},
		{name: "deeper folders fold into the subtopic", file: "Notes/Billing/Stripe/EU Region/2026/Hooks.md", format: md,
			content: "x",
			want:    []piece{{path: "notes/billing/stripe_eu_region_2026/hooks.md", title: "Hooks", text: "x", task: "Note (line 1)"}}},
		{name: "Domain option comes before the folders", file: "notes/billing/plan.md", format: md, opts: api.IngestOptions{Domain: "Work"},
			content: "x",
			want:    []piece{{path: "work/notes/billing/plan.md", title: "plan", text: "x", task: "Note (line 1)"}}},
		{name: "Domain option, no folder", file: "plan.md", format: md, opts: api.IngestOptions{Domain: "Work"},
			content: "x",
			want:    []piece{{path: "work/plan/plan.md", title: "plan", text: "x", task: "Note (line 1)"}}},
		{name: "extension case", file: "Notes.MD", format: md,
			content: "x",
			want:    []piece{{path: "documents/notes/notes.md", title: "Notes", text: "x", task: "Note (line 1)"}}},
		{name: ".markdown extension", file: "a/b.markdown", format: md,
			content: "x",
			want:    []piece{{path: "a/b/b.md", title: "b", text: "x", task: "Note (line 1)"}}},
		{name: "a note named context", file: "d/t/Context.md", format: md,
			content: "x",
			want:    []piece{{path: "d/t/context_entry.md", title: "Context", text: "x", task: "Note (line 1)"}}},
		{name: "ATX variants", file: "v.md", format: md,
			content: "x\n## Title ##\n# C#\n#hashtag\n   ### Indented\n    # code\n#\n",
			// Closing hashes go, a hash that ends a word stays; "#hashtag"
			// and "#" are text; up to three spaces indent a heading, four
			// make code.
			want: []piece{{path: "documents/v/v.md", title: "v", text: "x\n##### Title\n#### C#\n#hashtag\n###### Indented\n    # code\n#", task: "Note (lines 1-7)"}}},
	})
}

func TestMarkdownHelpers(t *testing.T) {
	t.Run("atxHeading", func(t *testing.T) {
		tests := []struct {
			line  string
			level int
			text  string
		}{
			{"# A", 1, "A"},
			{"###### Six", 6, "Six"},
			{"####### Seven", 0, ""},
			{"#\tTab", 1, "Tab"},
			{"#NoSpace", 0, ""},
			{"   ## Three spaces", 2, "Three spaces"},
			{"    # Four spaces", 0, ""},
			{"## Closed ##", 2, "Closed"},
			{"## Closed#", 2, "Closed#"},
			{"# ##", 0, ""},
			{"#", 0, ""},
			{"## a # b", 2, "a # b"},
		}
		for _, tc := range tests {
			level, text := atxHeading(tc.line)
			if level != tc.level || text != tc.text {
				t.Errorf("atxHeading(%q) = %d %q, want %d %q", tc.line, level, text, tc.level, tc.text)
			}
		}
	})
	t.Run("setextLevel", func(t *testing.T) {
		tests := []struct {
			line string
			want int
		}{
			{"===", 1}, {"==", 0}, {"---", 2}, {"  ----  ", 2}, {"    ---", 0}, {"=-=", 0}, {"***", 0},
		}
		for _, tc := range tests {
			if got := setextLevel(tc.line); got != tc.want {
				t.Errorf("setextLevel(%q) = %d, want %d", tc.line, got, tc.want)
			}
		}
	})
	t.Run("fenceMarker", func(t *testing.T) {
		tests := []struct{ line, want string }{
			{"```", "```"}, {"```go", "```"}, {"````", "````"}, {"~~~", "~~~"}, {"   ~~~~ x", "~~~~"},
			{"``", ""}, {"    ```", ""}, {"text ```", ""},
		}
		for _, tc := range tests {
			if got := fenceMarker(tc.line); got != tc.want {
				t.Errorf("fenceMarker(%q) = %q, want %q", tc.line, got, tc.want)
			}
		}
	})
	t.Run("frontMatterEnd", func(t *testing.T) {
		tests := []struct {
			text string
			want int
		}{
			{"---\na: 1\n---\nbody", 3},
			{"---\na: 1\n...\nbody", 3},
			{"---\n---", 2},
			{"---\nnever closed", 0},
			{"body\n---\nx\n---", 0},
			{"", 0},
		}
		for _, tc := range tests {
			if got := frontMatterEnd(strings.Split(tc.text, "\n")); got != tc.want {
				t.Errorf("frontMatterEnd(%q) = %d, want %d", tc.text, got, tc.want)
			}
		}
	})
}

func TestSplitTextTable(t *testing.T) {
	txt := api.FormatText
	alpha := "Alpha\n" + strings.Repeat("a", 594) // 600 bytes
	beta := "Beta\n" + strings.Repeat("b", 595)   // 600 bytes
	same := "Same\n" + strings.Repeat("s", 1300)
	runSplit(t, []splitCase{
		{name: "paragraphs grouped, lines trimmed at the right", file: "j.txt", format: txt,
			content: "First para line one\nline two  \n\n\nSecond para\n",
			want: []piece{{path: "documents/j/first_para_line_one.md", title: "First para line one",
				text: "First para line one\nline two\n\nSecond para", task: "Text, lines 1-5"}}},
		// A group holds up to textGroupBytes of paragraphs...
		{name: "1200 bytes stay one group", file: "g.txt", format: txt,
			content: alpha + "\n\n" + beta + "\n",
			want:    []piece{{path: "documents/g/alpha.md", title: "Alpha", text: alpha + "\n\n" + beta, task: "Text, lines 1-5"}}},
		// ...and one more byte starts the next.
		{name: "1201 bytes make two", file: "g.txt", format: txt,
			content: alpha + "\n\n" + beta + "b\n",
			want: []piece{
				{path: "documents/g/alpha.md", title: "Alpha", text: alpha, task: "Text, lines 1-2"},
				{path: "documents/g/beta.md", title: "Beta", text: beta + "b", task: "Text, lines 4-5"},
			}},
		{name: "repeated titles get a suffix", file: "r.txt", format: txt,
			content: same + "\n\n" + same,
			want: []piece{
				{path: "documents/r/same.md", title: "Same", text: same, task: "Text, lines 1-2"},
				{path: "documents/r/same_2.md", title: "Same", text: same, task: "Text, lines 4-5"},
			}},
		{name: "leading blank lines, indentation kept", file: "i.txt", format: txt,
			content: "\n\n  Indented start\t\n",
			want:    []piece{{path: "documents/i/indented_start.md", title: "Indented start", text: "  Indented start", task: "Text, line 3"}}},
		{name: "whitespace-only lines separate paragraphs", file: "w.txt", format: txt,
			content: "one\n \t \ntwo",
			want:    []piece{{path: "documents/w/one.md", title: "one", text: "one\n\ntwo", task: "Text, lines 1-3"}}},
		{name: "title falls back to Text", file: "x.txt", format: txt,
			content: "---\nmore words\n",
			want:    []piece{{path: "documents/x/text.md", title: "Text", text: "---\nmore words", task: "Text, lines 1-2"}}},
		{name: "any other extension", file: "logs/server.log", format: txt,
			content: "boot ok\n",
			want:    []piece{{path: "documents/logs_server/boot_ok.md", title: "boot ok", text: "boot ok", task: "Text, line 1"}}},
		{name: "no extension", file: "README", format: txt,
			content: "Read me.\n",
			want:    []piece{{path: "documents/readme/read_me.md", title: "Read me.", text: "Read me.", task: "Text, line 1"}}},
		{name: "CRLF", file: "c.txt", format: txt,
			content: "a\r\nb\r\n\r\nc\r\n",
			want:    []piece{{path: "documents/c/a.md", title: "a", text: "a\nb\n\nc", task: "Text, lines 1-4"}}},
		{name: "Domain option", file: "c.txt", format: txt, opts: api.IngestOptions{Domain: "journal"},
			content: "day one",
			want:    []piece{{path: "journal/c/day_one.md", title: "day one", text: "day one", task: "Text, line 1"}}},
		{name: "whitespace only", file: "w.txt", format: txt, content: " \n\t\n\n"},
		{name: "empty", file: "e.txt", format: txt, content: ""},
	})
}
