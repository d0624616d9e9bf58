package ingest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"golang.org/x/text/encoding/charmap"
)

// piece is the expected form of one Piece in the table tests of the
// formats: every field Split fills, compared exactly (Source is checked to
// be the file's name).
type piece struct {
	path, title, text, task string
	flow, author, stamp     string
}

// splitCase is one Split call of a table test and the pieces it must give,
// in order.
type splitCase struct {
	name    string
	file    string
	content string
	opts    api.IngestOptions
	format  api.Format
	want    []piece
}

func runSplit(t *testing.T, tests []splitCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps, format, err := Split(api.SourceFile{Name: tc.file, Content: tc.content}, tc.opts)
			if err != nil {
				t.Fatalf("Split(%s): %v", tc.file, err)
			}
			if format != tc.format {
				t.Errorf("format = %s, want %s", format, tc.format)
			}
			comparePieces(t, tc.file, ps, tc.want)
		})
	}
}

func comparePieces(t *testing.T, file string, ps []Piece, want []piece) {
	t.Helper()
	if len(ps) != len(want) {
		for _, p := range ps {
			t.Logf("got %s %q task %q", p.Path(), p.Title, p.Task)
		}
		t.Fatalf("%d pieces, want %d", len(ps), len(want))
	}
	for i, w := range want {
		p := ps[i]
		got := piece{p.Path(), p.Title, p.Text, p.Task, p.Flow, p.Author, p.Timestamp}
		if got != w {
			t.Errorf("piece %d:\n got %#v\nwant %#v", i, got, w)
		}
		if p.Source != file {
			t.Errorf("piece %d: Source = %q, want %q", i, p.Source, file)
		}
		if p.Path() != p.Folder+"/"+p.Name+".md" {
			t.Errorf("piece %d: Path() = %q, want Folder/Name.md from %q and %q", i, p.Path(), p.Folder, p.Name)
		}
	}
}

func intp(n int) *int { return &n }

func TestPieceHash(t *testing.T) {
	base := Piece{
		Folder: "documents/guide", Name: "intro", Title: "Intro", Text: "Hello.",
		Task: "Introduction (line 1)", Flow: "In reply to A: hi", Author: "Ana",
		Timestamp: "2026-01-01T00:00:00Z", Source: "guide.md",
	}
	h := base.Hash()
	if len(h) != 32 || strings.Trim(h, "0123456789abcdef") != "" {
		t.Fatalf("Hash = %q, want 32 hex digits (FNV-128a)", h)
	}
	if again := base.Hash(); again != h {
		t.Errorf("Hash is not stable: %q then %q", h, again)
	}
	tests := []struct {
		name    string
		edit    func(*Piece)
		changes bool
	}{
		{"title", func(p *Piece) { p.Title = "Intro!" }, true},
		{"text", func(p *Piece) { p.Text = "Hello" }, true},
		{"task", func(p *Piece) { p.Task = "Introduction (line 2)" }, true},
		{"flow", func(p *Piece) { p.Flow = "" }, true},
		{"author", func(p *Piece) { p.Author = "Bo" }, true},
		{"timestamp", func(p *Piece) { p.Timestamp = "2026-01-02T00:00:00Z" }, true},
		{"source", func(p *Piece) { p.Source = "other.md" }, true},
		// Fields are separated: moving a byte from one to the next changes it.
		{"field boundary", func(p *Piece) { p.Title, p.Text = "IntroH", "ello." }, true},
		// The place is not content: a moved piece keeps its hash.
		{"folder", func(p *Piece) { p.Folder = "notes/guide" }, false},
		{"name", func(p *Piece) { p.Name = "intro_2" }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := base
			tc.edit(&p)
			if got := p.Hash() != h; got != tc.changes {
				t.Errorf("hash changed = %v, want %v", got, tc.changes)
			}
		})
	}
}

func TestPieceOperation(t *testing.T) {
	p := Piece{
		Folder: "people/session_01", Name: "turn_002", Title: "Bo on 8 May 2023", Text: "Hey",
		Task: "Turn D1:2 of session 1", Flow: "In reply to Ann: Hi", Author: "Bo",
		Timestamp: "2023-05-08T13:56:00Z", Source: "chat.json",
	}
	for _, typ := range []string{api.OpAdd, api.OpUpdate, api.OpUpsert} {
		op := p.Operation(typ, "ingest chat.json")
		want := api.Operation{
			Type: typ, Path: "people/session_01/turn_002.md", Title: "Bo on 8 May 2023", Reason: "ingest chat.json", Stamp: p.Hash(),
			Content: api.Content{
				RawConcept: &api.RawConcept{Task: "Turn D1:2 of session 1", Files: []string{"chat.json"}, Flow: "In reply to Ann: Hi", Author: "Bo", Timestamp: "2023-05-08T13:56:00Z"},
				Narrative:  &api.Narrative{Text: "Hey"},
			},
		}
		if !reflect.DeepEqual(op, want) {
			t.Errorf("Operation(%s) =\n%#v\nwant\n%#v", typ, op, want)
		}
	}
	// Each operation owns its content: changing one does not change the next.
	a := p.Operation(api.OpAdd, "r")
	a.Content.RawConcept.Files[0] = "changed"
	if b := p.Operation(api.OpAdd, "r"); b.Content.RawConcept.Files[0] != "chat.json" {
		t.Errorf("operations share their files: %q", b.Content.RawConcept.Files)
	}
}

func TestShortTitle(t *testing.T) {
	long := "The deployment pipeline promotes every build through staging canary and production stages"
	tests := []struct {
		name, text, fallback, want string
	}{
		{"first line only", "Hello world\nsecond line", "F", "Hello world"},
		{"markup trimmed, spaces collapsed", "  ## Hello   world  ##\n", "F", "Hello world"},
		{"list item", "- buy milk", "F", "buy milk"},
		{"quote", "> quoted", "F", "quoted"},
		{"code span", "`make test`", "F", "make test"},
		{"empty", "", "F", "F"},
		{"only markup", "***\nbody", "F", "F"},
		{"inner tab", "a\tb", "F", "a b"},
		{"exactly 72 runes", strings.Repeat("é", 72), "F", strings.Repeat("é", 72)},
		// Longer: cut at the last space past the middle, punctuation dropped.
		{"cut at a word", long, "F", "The deployment pipeline promotes every build through staging canary and…"},
		{"cut drops punctuation", strings.Repeat("a", 40) + ", " + strings.Repeat("b", 40), "F", strings.Repeat("a", 40) + "…"},
		// No space past the middle: cut at 72 runes, never inside a rune.
		{"no space", strings.Repeat("é", 100), "F", strings.Repeat("é", 72) + "…"},
		{"space too early", "ab " + strings.Repeat("x", 100), "F", "ab " + strings.Repeat("x", 69) + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := shortTitle(tc.text, tc.fallback); got != tc.want {
				t.Errorf("shortTitle(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestCutText(t *testing.T) {
	tests := []struct {
		name string
		text string
		max  int
		want []part
	}{
		{"fits, untouched", "  a\n\nb  ", 10, []part{{text: "  a\n\nb  ", first: 0, last: 2}}},
		{"exactly max", "0123456789", 10, []part{{text: "0123456789", first: 0, last: 0}}},
		// Whole paragraphs are packed while they fit.
		{"at blank lines", "aaaa\n\nbbbb\n\ncccc", 10, []part{{text: "aaaa\n\nbbbb", first: 0, last: 2}, {text: "cccc", first: 4, last: 4}}},
		{"one paragraph per part", "aaaaaaa\n\nbbbbbbb\n\nccccccc", 10, []part{{text: "aaaaaaa", first: 0, last: 0}, {text: "bbbbbbb", first: 2, last: 2}, {text: "ccccccc", first: 4, last: 4}}},
		// A paragraph that cannot end a part starts the next.
		{"a paragraph moves whole", "aa\n\nbbb\nccc", 8, []part{{text: "aa", first: 0, last: 0}, {text: "bbb\nccc", first: 2, last: 3}}},
		// A paragraph too long for one part is cut at its line ends.
		{"at line ends", "one two\nthree\nfour five", 10, []part{{text: "one two", first: 0, last: 0}, {text: "three", first: 1, last: 1}, {text: "four five", first: 2, last: 2}}},
		// A line too long is cut at rune boundaries, never inside a rune.
		{"at runes", "ééééé", 5, []part{{text: "éé", first: 0, last: 0}, {text: "éé", first: 0, last: 0}, {text: "é", first: 0, last: 0}}},
		{"ascii run", "abcdefghijkl", 5, []part{{text: "abcde", first: 0, last: 0}, {text: "fghij", first: 0, last: 0}, {text: "kl", first: 0, last: 0}}},
		{"blank parts dropped", "aaaa\n\n\n\n\n\nbbbb", 5, []part{{text: "aaaa", first: 0, last: 0}, {text: "bbbb", first: 6, last: 6}}},
		// A fenced block is one paragraph, blank lines and all, while it fits.
		{"a fence is one paragraph", "intro\n\n```\na\n\nb\n```\n\nend", 15, []part{{text: "intro", first: 0, last: 0}, {text: "```\na\n\nb\n```", first: 2, last: 6}, {text: "end", first: 8, last: 8}}},
		// Cut through, it is closed and opened again by its opening line.
		{"a fence cut through", "```go\nline one\nline two\nline three\n```", 27, []part{
			{text: "```go\nline one\nline two\n```", first: 0, last: 2},
			{text: "```go\nline three\n```", first: 3, last: 4},
		}},
		{"a tilde fence keeps its marker", "~~~~\naaaa\nbbbb\n~~~~", 15, []part{{text: "~~~~\naaaa\n~~~~", first: 0, last: 1}, {text: "~~~~\nbbbb\n~~~~", first: 2, last: 3}}},
		// A long line inside a fence is cut inside the fence.
		{"a long line in a fence", "```\n" + strings.Repeat("x", 20) + "\n```", 20, []part{
			{text: "```\n" + strings.Repeat("x", 12) + "\n```", first: 0, last: 1},
			{text: "```\n" + strings.Repeat("x", 8) + "\n```", first: 1, last: 2},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := cutText(tc.text, tc.max)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("cutText(%q, %d) =\n%+v\nwant\n%+v", tc.text, tc.max, got, tc.want)
			}
			for _, p := range got {
				if len(p.text) > tc.max {
					t.Errorf("%q: %d bytes", p.text, len(p.text))
				}
			}
		})
	}
}

// Whatever the text, the parts are at most max bytes of valid UTF-8, in
// order, and lose nothing but white space; the lines of each part hold its
// text; every fence a part opens it closes.
func TestCutTextKeepsEverything(t *testing.T) {
	words := []string{"alpha", "β", "γάμμα", "日本語", "x", "\n", "\n\n", " ", "longerwordwithoutspaces", "\n```go\n", "\n```\n", "\n~~~\n"}
	for seed := 1; seed <= 500; seed++ {
		var b strings.Builder
		r := uint32(seed)
		for b.Len() < 400 {
			r = r*1664525 + 1013904223
			b.WriteString(words[int(r>>16)%len(words)])
		}
		text := b.String()
		max := 16 + seed%60 // room for a fence line whole, with the lines that close and reopen its block
		parts := cutText(text, max)
		lines := strings.Split(text, "\n")
		// The text without its fence lines, which cutText adds: squashed of
		// white space, it is the same in the parts as in the text.
		prose := func(ls []string) string {
			var b strings.Builder
			for _, l := range ls {
				if fenceMarker(l) == "" {
					b.WriteString(strings.Join(strings.Fields(l), ""))
				}
			}
			return b.String()
		}
		var whole fence // a text may end inside a block: its last part does too
		for _, l := range lines {
			whole.line(l)
		}
		var all []string
		prev := -1
		for i, p := range parts {
			if len(p.text) > max || !utf8.ValidString(p.text) || p.text == "" || strings.TrimSpace(p.text) != p.text || p.first < prev || p.last < p.first {
				t.Fatalf("seed %d, max %d: bad part %+v", seed, max, p)
			}
			prev = p.first
			pls := strings.Split(p.text, "\n")
			var f fence
			for _, l := range pls {
				f.line(l)
			}
			if f.open() && !(whole.open() && i == len(parts)-1) {
				t.Fatalf("seed %d, max %d: part %q leaves a fence open", seed, max, p.text)
			}
			if own := prose(lines[p.first : p.last+1]); !strings.Contains(own, prose(pls)) {
				t.Fatalf("seed %d, max %d: part %q is not in its lines %d-%d: %q", seed, max, p.text, p.first, p.last, own)
			}
			all = append(all, pls...)
		}
		if got, want := prose(all), prose(lines); got != want {
			t.Fatalf("seed %d, max %d: parts lose text:\n got %q\nwant %q", seed, max, got, want)
		}
	}
}

// source.add names pieces after their titles, makes repeated names unique
// in document order, and cuts a text over maxPieceBytes into numbered parts.
func TestSourceAdd(t *testing.T) {
	s := newSource("notes/a.md", "", api.IngestOptions{})
	para := strings.Repeat("x", 100<<10) // three of them make more than 256 KiB
	big := para + "\n\n" + para + "\n\n" + para
	for _, p := range []Piece{
		{Folder: "d/t", Title: "Same"},
		{Folder: "d/t", Title: "same"}, // same slug
		{Folder: "d/u", Title: "Same"}, // another folder: no suffix
		{Folder: "d/t", Title: "SAME!"},
		{Folder: "d/t", Title: "Named", Name: "custom"},
		{Folder: "d/t", Title: "Other", Name: "custom"},
		{Folder: "d/t", Title: "Big", Text: big},
		{Folder: "d/t", Title: "Big", Text: big},
		{Folder: "d/v", Title: "A 2"}, // a title that looks like a suffix
		{Folder: "d/v", Title: "A"},
		{Folder: "d/v", Title: "A"},
		{Folder: "d/v", Title: "A"},
	} {
		s.add(p)
	}
	type named struct{ path, title string }
	var got []named
	for _, p := range s.pieces {
		got = append(got, named{p.Path(), p.Title})
		if p.Source != "notes/a.md" {
			t.Errorf("%s: Source = %q", p.Path(), p.Source)
		}
		if len(p.Text) > maxPieceBytes {
			t.Errorf("%s: %d bytes", p.Path(), len(p.Text))
		}
	}
	want := []named{
		{"d/t/same.md", "Same"},
		{"d/t/same_2.md", "same"},
		{"d/u/same.md", "Same"},
		{"d/t/same_3.md", "SAME!"},
		{"d/t/custom.md", "Named"},
		{"d/t/custom_2.md", "Other"},
		{"d/t/big_part_01.md", "Big (part 1 of 2)"},
		{"d/t/big_part_02.md", "Big (part 2 of 2)"},
		{"d/t/big_part_01_2.md", "Big (part 1 of 2)"},
		{"d/t/big_part_02_2.md", "Big (part 2 of 2)"},
		{"d/v/a_2.md", "A 2"},
		{"d/v/a.md", "A"},
		{"d/v/a_3.md", "A"},
		{"d/v/a_4.md", "A"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pieces\n got %v\nwant %v", got, want)
	}
	// The first part packs two paragraphs (200 KiB + a blank line), the second the third.
	if n := len(s.pieces[6].Text); n != 2*len(para)+2 {
		t.Errorf("part 1: %d bytes, want %d", n, 2*len(para)+2)
	}
	if s.pieces[7].Text != para {
		t.Errorf("part 2: %d bytes, want the last paragraph", len(s.pieces[7].Text))
	}
}

// Every refusal wraps api.ErrBadInput, says where and why, and returns no
// piece; the format is still reported.
func TestSplitErrors(t *testing.T) {
	nested := "Subject: deep\nContent-Type: multipart/mixed; boundary=b0\n\n"
	for i := 0; i < 10; i++ {
		nested += fmt.Sprintf("--b%d\nContent-Type: multipart/mixed; boundary=b%d\n\n", i, i+1)
	}
	nested += "--b10\n\ntext\n"
	for i := 10; i >= 0; i-- {
		nested += fmt.Sprintf("--b%d--\n", i)
	}
	tests := []struct {
		name, file, content string
		opts                api.IngestOptions
		format              api.Format
		msg                 string
	}{
		// api.SourceText: the name, the size, the encoding.
		{"empty name", "", "x", api.IngestOptions{}, api.FormatText, "name: "},
		{"dot-dot name", "a/../b.md", "x", api.IngestOptions{}, api.FormatMarkdown, `".." is not allowed`},
		{"absolute name", "/etc/x.md", "x", api.IngestOptions{}, api.FormatMarkdown, "absolute paths are not allowed"},
		{"backslash name", `a\b.txt`, "x", api.IngestOptions{}, api.FormatText, "backslashes are not allowed"},
		{"hidden segment", ".git/config.md", "x", api.IngestOptions{}, api.FormatMarkdown, `segment ".git" starts with "."`},
		{"control character in name", "a\tb.md", "x", api.IngestOptions{}, api.FormatMarkdown, "control characters"},
		{"over the limit", "big.txt", strings.Repeat("x", 101), api.IngestOptions{MaxSourceBytes: 100}, api.FormatText, "101 bytes is over the 100-byte limit"},
		{"over the default limit", "big.txt", strings.Repeat("x", api.DefaultMaxSourceBytes+1), api.IngestOptions{}, api.FormatText, fmt.Sprintf("%d bytes is over the %d-byte limit", api.DefaultMaxSourceBytes+1, api.DefaultMaxSourceBytes)},
		{"invalid UTF-8, line 3", "n.md", "ab\ncd\nx\xffy", api.IngestOptions{}, api.FormatMarkdown, "not valid UTF-8 text (at byte 7, line 3)"},
		{"truncated rune", "n.txt", "é\xc3", api.IngestOptions{}, api.FormatText, "(at byte 2, line 1)"},
		{"NUL byte", "blob.csv", "a,b\n\x00,1\n", api.IngestOptions{}, api.FormatCSV, "holds NUL bytes"},

		// JSON and JSON Lines.
		{"JSON syntax", "list.json", "[{\"a\": 1},\n {\"a\": 2,}]", api.IngestOptions{}, api.FormatJSON, "malformed JSON at line 2"},
		{"JSON syntax before any array", "x.json", "\n\n{\"a\" 1}", api.IngestOptions{}, api.FormatJSON, "malformed JSON at line 3"},
		{"JSON cut short", "cut.json", `{"a": [1, 2`, api.IngestOptions{}, api.FormatJSON, "malformed JSON: unexpected end of input"},
		{"JSON array cut short", "cut.json", `[{"a": 1},`, api.IngestOptions{}, api.FormatJSON, "malformed JSON: unexpected end of input"},
		{"JSON empty", "empty.json", "", api.IngestOptions{}, api.FormatJSON, "unexpected end of input"},
		{"JSON two values", "two.json", "{}\n{}", api.IngestOptions{}, api.FormatJSON, "malformed JSON at line 2: more than one value (JSON Lines files end in .jsonl)"},
		{"JSON two arrays", "two.json", "[]\n\n[]", api.IngestOptions{}, api.FormatJSON, "more than one value"},
		{"JSONL bad line", "log.jsonl", "{\"a\":1}\n\n{\"a\":\n", api.IngestOptions{}, api.FormatJSONL, "malformed JSON on line 3"},
		{"JSONL two values on a line", "log.jsonl", "{\"a\":1} {\"b\":2}\n", api.IngestOptions{}, api.FormatJSONL, "malformed JSON on line 1: more than one value on the line"},

		// CSV and TSV.
		{"CSV field count", "rows.csv", "a,b\n1,2\n3\n", api.IngestOptions{}, api.FormatCSV, "malformed CSV: record on line 3: wrong number of fields"},
		{"CSV open quote", "quote.csv", "a,b\n\"1,2\n", api.IngestOptions{}, api.FormatCSV, "malformed CSV"},
		{"CSV bare quote", "bare.csv", "a\nx\"y\n", api.IngestOptions{}, api.FormatCSV, `bare " in non-quoted-field`},
		{"CSV bad header", "head.csv", "a\"b\n1\n", api.IngestOptions{}, api.FormatCSV, "malformed CSV: parse error on line 1"},
		{"TSV field count", "rows.tsv", "a\tb\n1\n", api.IngestOptions{}, api.FormatTSV, "malformed TSV: record on line 2: wrong number of fields"},

		// E-mail.
		{"no headers", "mail.eml", "no headers here", api.IngestOptions{}, api.FormatEmail, "malformed e-mail"},
		{"multipart without boundary", "m.eml", "Subject: x\nContent-Type: multipart/mixed\n\nbody\n", api.IngestOptions{}, api.FormatEmail, "multipart message without a boundary"},
		{"multipart not closed", "m.eml", "Subject: x\nContent-Type: multipart/mixed; boundary=b\n\n--b\n\nhello\n", api.IngestOptions{}, api.FormatEmail, `multipart body not closed by its boundary "b"`},
		{"multipart too deep", "m.eml", nested, api.IngestOptions{}, api.FormatEmail, "multipart nested more than 8 levels"},
		{"bad base64", "m.eml", "Subject: x\nContent-Transfer-Encoding: base64\n\n!!!!\n", api.IngestOptions{}, api.FormatEmail, "malformed e-mail: base64 body: illegal base64 data at input byte 0"},
		{"bad quoted-printable", "m.eml", "Subject: x\nContent-Transfer-Encoding: quoted-printable\n\na\x01b\n", api.IngestOptions{}, api.FormatEmail, "malformed e-mail: quoted-printable body"},
		{"unsupported charset", "m.eml", "Subject: x\nContent-Type: text/plain; charset=koi8-r\n\nhi\n", api.IngestOptions{}, api.FormatEmail, `charset "koi8-r" is not supported (UTF-8, US-ASCII, Latin-1 and Windows-1252 are)`},
		{"body not UTF-8", "m.eml", "Subject: x\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n/w==\n", api.IngestOptions{}, api.FormatEmail, `body is not valid UTF-8 (charset "utf-8")`},
		{"bad part inside a multipart", "m.eml", "Subject: x\nContent-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/plain\nContent-Transfer-Encoding: base64\n\n!!\n--b--\n", api.IngestOptions{}, api.FormatEmail, "base64 body"},

		// iCalendar.
		{"no VCALENDAR", "cal.ics", "BEGIN:VEVENT\nSUMMARY:x\nEND:VEVENT\n", api.IngestOptions{}, api.FormatCalendar, "malformed iCalendar: the file must begin with BEGIN:VCALENDAR"},
		{"blank calendar", "cal.ics", "\n\n", api.IngestOptions{}, api.FormatCalendar, "must begin with BEGIN:VCALENDAR"},
		{"event never closed", "open.ics", "BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:x\nEND:VCALENDAR\n", api.IngestOptions{}, api.FormatCalendar, "malformed iCalendar: the event of line 2 is never closed (END:VEVENT)"},
		{"event inside an event", "cal.ics", "BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:a\nBEGIN:VEVENT\n", api.IngestOptions{}, api.FormatCalendar, "malformed iCalendar at line 4: an event begins inside the event of line 2"},
		{"END without BEGIN", "cal.ics", "BEGIN:VCALENDAR\nEND:VEVENT\nEND:VCALENDAR\n", api.IngestOptions{}, api.FormatCalendar, "malformed iCalendar at line 2: END:VEVENT without BEGIN:VEVENT"},
		{"line without a colon", "cal.ics", "BEGIN:VCALENDAR\nVERSION:2.0\nno colon here\n", api.IngestOptions{}, api.FormatCalendar, `malformed iCalendar at line 3: "no colon here" is not NAME:VALUE`},
		{"line with an empty name", "cal.ics", "BEGIN:VCALENDAR\n:value\n", api.IngestOptions{}, api.FormatCalendar, `at line 2: ":value" is not NAME:VALUE`},
		{"folded line keeps its first line number", "cal.ics", "BEGIN:VCALENDAR\nnot\n a property\n", api.IngestOptions{}, api.FormatCalendar, `at line 2: "nota property"`},

		// Go.
		{"Go syntax", "bad.go", "package x\nfunc {", api.IngestOptions{}, api.FormatGo, "malformed Go: bad.go:2:6"},
		{"Go without package", "np.go", "func f() {}\n", api.IngestOptions{}, api.FormatGo, "malformed Go"},

		// Chat transcripts: a recognized shape that breaks its rules.
		{"LoCoMo session not a list", "chat.json", `{"conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": "oops"}}`, api.IngestOptions{}, api.FormatChat, "chat transcript: conversation 1: session_1 is not a list of turns"},
		{"LoCoMo turn not an object", "chat.json", `[{"conversation": {"speaker_a": "A", "session_1": []}}, {"conversation": {"speaker_a": "A", "session_2": [1]}}]`, api.IngestOptions{}, api.FormatChat, "chat transcript: conversation 2: session_2 turn 1 is not an object"},
		{"shapes mixed", "chat.json", `[{"sessions": []}, {"haystack_sessions": []}]`, api.IngestOptions{}, api.FormatChat, "chat transcript: item 2 does not have the shape of the first (sessions)"},
		{"shape then a record", "chat.json", `[{"speaker_a": "A", "session_1": []}, {"name": "x"}]`, api.IngestOptions{}, api.FormatChat, "item 2 does not have the shape of the first (locomo)"},
		{"LongMemEval sessions not a list", "lme.json", `{"haystack_sessions": {}}`, api.IngestOptions{}, api.FormatChat, "chat transcript: item 1: haystack_sessions is not a list"},
		{"LongMemEval message without role", "lme.json", `[{"haystack_sessions": []}, {"haystack_sessions": [[{"content": "hi"}]]}]`, api.IngestOptions{}, api.FormatChat, "chat transcript: item 2 session 1: message 1 has no role or speaker"},
		{"LongMemEval session not a list", "lme.json", `{"haystack_sessions": ["x"]}`, api.IngestOptions{}, api.FormatChat, "item 1 session 1: not a list of messages"},
		{"sessions without messages", "s.json", `{"sessions": [{"date": "2024-01-02"}]}`, api.IngestOptions{}, api.FormatChat, "chat transcript: item 1: session 1: not a list of messages"},
		{"session message not an object", "s.json", `{"sessions": [[{"role": "user", "content": "a"}, "b"]]}`, api.IngestOptions{}, api.FormatChat, "session 1: message 2 is not an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps, format, err := Split(api.SourceFile{Name: tc.file, Content: tc.content}, tc.opts)
			if err == nil {
				t.Fatalf("Split(%q) = %d pieces, want an error holding %q", tc.file, len(ps), tc.msg)
			}
			if !errors.Is(err, api.ErrBadInput) {
				t.Errorf("error %q does not wrap ErrBadInput", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q, want it to hold %q", err, tc.msg)
			}
			if ps != nil {
				t.Errorf("%d pieces from bad input, want nil", len(ps))
			}
			if format != tc.format {
				t.Errorf("format = %s, want %s", format, tc.format)
			}
		})
	}
}

// Right at the size limit a file is accepted.
func TestSplitAtTheLimit(t *testing.T) {
	content := strings.Repeat("x", 99) + "\n"
	ps, _, err := Split(api.SourceFile{Name: "max.txt", Content: content}, api.IngestOptions{MaxSourceBytes: len(content)})
	if err != nil || len(ps) != 1 {
		t.Fatalf("Split of a %d-byte file at a %d-byte limit: %d pieces, %v", len(content), len(content), len(ps), err)
	}
}

// TestSplitDecodes splits one document sent as text and as the bytes of
// other encodings: the pieces are the same, and an undecodable file is
// refused with the reason.
func TestSplitDecodes(t *testing.T) {
	text := "# Café\r\n\r\n“Quoted” prices in €: 5.\r\n\r\n## Naïve\r\n\r\nDone – really.\r\n"
	want, _, err := Split(api.SourceFile{Name: "n.md", Content: text}, api.IngestOptions{})
	if err != nil || len(want) != 1 || !strings.Contains(want[0].Text, "#### Naïve") {
		t.Fatalf("text: %d pieces, %v", len(want), err)
	}
	le := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(text)) {
		le = append(le, byte(u), byte(u>>8))
	}
	cp1252, err := charmap.Windows1252.NewEncoder().String(text)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"UTF-8": []byte(text), "UTF-8 with a mark": append([]byte("\xEF\xBB\xBF"), text...), "UTF-16LE": le, "Windows-1252": []byte(cp1252)} {
		got, format, err := Split(api.SourceFile{Name: "n.md", Data: data}, api.IngestOptions{})
		if err != nil || format != api.FormatMarkdown || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, %v\n got %+v\nwant %+v", name, format, err, got, want)
		}
	}
	_, format, err := Split(api.SourceFile{Name: "n.csv", Data: []byte("a,b\n\x81,1\n")}, api.IngestOptions{})
	if !errors.Is(err, api.ErrBadInput) || format != api.FormatCSV || !strings.Contains(err.Error(), "neither UTF-8 nor Windows-1252 text: byte 0x81 at byte 4 (line 2)") {
		t.Errorf("undecodable: %v, %v", format, err)
	}
}
