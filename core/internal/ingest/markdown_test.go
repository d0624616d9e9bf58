package ingest

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestSplitMarkdownTable(t *testing.T) {
	md := api.FormatMarkdown
	runSplit(t, []splitCase{
		{name: "introduction then sections", file: "notes/plan.md", format: md,
			content: "Intro line.\n\n# Goals\nShip it.\n\n## Risks\nNone yet.\n",
			want: []piece{
				// Text before the first heading is titled by the file's base name.
				{path: "documents/notes_plan/plan.md", title: "plan", text: "Intro line.", task: "Introduction (lines 1-2)"},
				// A section's lines run from its heading to the line before the next one.
				{path: "documents/notes_plan/goals.md", title: "Goals", text: "Ship it.", task: "Section Goals (lines 3-5)"},
				{path: "documents/notes_plan/risks.md", title: "Risks", text: "None yet.", task: "Section Goals › Risks (lines 6-7)"},
			}},
		{name: "front matter skipped", file: "plan.md", format: md,
			content: "---\ntitle: Plan\nowner: me\n---\n# Goals\nShip it.\n",
			want:    []piece{{path: "documents/plan/goals.md", title: "Goals", text: "Ship it.", task: "Section Goals (lines 5-6)"}}},
		{name: "front matter closed by dots", file: "memo.md", format: md,
			content: "---\nowner: me\n...\nBody text.\n",
			want:    []piece{{path: "documents/memo/memo.md", title: "memo", text: "Body text.", task: "Introduction (line 4)"}}},
		{name: "unclosed front matter is content", file: "memo.md", format: md,
			content: "---\nowner: me\n",
			want:    []piece{{path: "documents/memo/memo.md", title: "memo", text: "---\nowner: me", task: "Introduction (lines 1-2)"}}},
		{name: "setext headings", file: "s.md", format: md,
			content: "Title\n=====\ntext\n\nSub\n---\nmore\n",
			want: []piece{
				{path: "documents/s/title.md", title: "Title", text: "text", task: "Section Title (lines 1-4)"},
				{path: "documents/s/sub.md", title: "Sub", text: "more", task: "Section Title › Sub (lines 5-7)"},
			}},
		{name: "dashes after a blank line are a rule, not an underline", file: "t.md", format: md,
			content: "Para\n\n---\nafter\n",
			want:    []piece{{path: "documents/t/t.md", title: "t", text: "Para\n\n---\nafter", task: "Introduction (lines 1-4)"}}},
		{name: "an underline under a heading is text", file: "u.md", format: md,
			content: "# A\n---\nx\n",
			want:    []piece{{path: "documents/u/a.md", title: "A", text: "---\nx", task: "Section A (lines 1-3)"}}},
		{name: "headings inside a fence are text", file: "f.md", format: md,
			content: "# A\n```sh\n# not a heading\n```\n## B\nx\n",
			want: []piece{
				{path: "documents/f/a.md", title: "A", text: "```sh\n# not a heading\n```", task: "Section A (lines 1-4)"},
				{path: "documents/f/b.md", title: "B", text: "x", task: "Section A › B (lines 5-6)"},
			}},
		{name: "a shorter fence does not close a longer one", file: "f.md", format: md,
			content: "# A\n~~~~\n~~~\n# B\n~~~~\n# C\nz\n",
			want: []piece{
				{path: "documents/f/a.md", title: "A", text: "~~~~\n~~~\n# B\n~~~~", task: "Section A (lines 1-5)"},
				{path: "documents/f/c.md", title: "C", text: "z", task: "Section C (lines 6-7)"},
			}},
		{name: "an unclosed fence runs to the end", file: "f.md", format: md,
			content: "# A\n```\n# B\n",
			want:    []piece{{path: "documents/f/a.md", title: "A", text: "```\n# B", task: "Section A (lines 1-3)"}}},
		{name: "levels 4 to 6 stay in their section", file: "d.md", format: md,
			content: "# A\nintro\n#### Deep\ndeep text\n###### Deeper\n",
			want:    []piece{{path: "documents/d/a.md", title: "A", text: "intro\n#### Deep\ndeep text\n###### Deeper", task: "Section A (lines 1-5)"}}},
		{name: "ATX variants", file: "v.md", format: md,
			content: "## Title ##\nx\n# C#\ny\n#hashtag\n   ### Indented\nz\n    # code\n",
			want: []piece{
				// Closing hashes go; a hash that ends a word stays.
				{path: "documents/v/title.md", title: "Title", text: "x", task: "Section Title (lines 1-2)"},
				// "#hashtag" has no space: not a heading.
				{path: "documents/v/c.md", title: "C#", text: "y\n#hashtag", task: "Section C# (lines 3-5)"},
				// Up to three spaces indent a heading; four make code.
				{path: "documents/v/indented.md", title: "Indented", text: "z\n    # code", task: "Section C# › Indented (lines 6-8)"},
			}},
		{name: "a heading without text is text", file: "e.md", format: md,
			content: "#\nx\n",
			want:    []piece{{path: "documents/e/e.md", title: "e", text: "#\nx", task: "Introduction (lines 1-2)"}}},
		{name: "a deeper heading pops back to its level", file: "p.md", format: md,
			content: "# A\n### Deep\nd\n## Mid\nm\n# B\nb\n",
			want: []piece{
				{path: "documents/p/deep.md", title: "Deep", text: "d", task: "Section A › Deep (lines 2-3)"},
				{path: "documents/p/mid.md", title: "Mid", text: "m", task: "Section A › Mid (lines 4-5)"},
				{path: "documents/p/b.md", title: "B", text: "b", task: "Section B (lines 6-7)"},
			}},
		{name: "repeated headings", file: "r.md", format: md,
			content: "# A\n## Notes\nx\n# B\n## Notes\ny\n# Same\nz\n# Same\nw\n",
			want: []piece{
				// A repeated subheading is titled with its parent...
				{path: "documents/r/a_notes.md", title: "A › Notes", text: "x", task: "Section A › Notes (lines 2-3)"},
				{path: "documents/r/b_notes.md", title: "B › Notes", text: "y", task: "Section B › Notes (lines 5-6)"},
				// ...a repeated top heading keeps its title and gets a suffix.
				{path: "documents/r/same.md", title: "Same", text: "z", task: "Section Same (lines 7-8)"},
				{path: "documents/r/same_2.md", title: "Same", text: "w", task: "Section Same (lines 9-10)"},
			}},
		{name: "CRLF and byte-order mark", file: "w.md", format: md,
			content: "\uFEFF# A\r\nline one\r\nline two\r\n",
			want:    []piece{{path: "documents/w/a.md", title: "A", text: "line one\nline two", task: "Section A (lines 1-3)"}}},
		{name: "empty file", file: "empty.md", format: md, content: ""},
		{name: "blank file", file: "blank.md", format: md, content: "\n\n  \n\t\n"},
		{name: "headings only", file: "h.md", format: md, content: "# A\n## B\n"},
		{name: "Domain option", file: "notes/plan.md", format: md, opts: api.IngestOptions{Domain: "Team Wiki"},
			content: "# Goals\nShip.\n",
			want:    []piece{{path: "team_wiki/notes_plan/goals.md", title: "Goals", text: "Ship.", task: "Section Goals (lines 1-2)"}}},
		{name: "extension case", file: "Guide.MD", format: md,
			content: "hello",
			want:    []piece{{path: "documents/guide/guide.md", title: "Guide", text: "hello", task: "Introduction (line 1)"}}},
		{name: ".markdown extension", file: "docs/How To.markdown", format: md,
			content: "Steps.\n",
			want:    []piece{{path: "documents/docs_how_to/how_to.md", title: "How To", text: "Steps.", task: "Introduction (line 1)"}}},
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
