package tree

import (
	"reflect"
	"strings"
	"testing"
)

// A person's front matter, as an editor leaves it: comments above keys,
// beside values, inside a nested map, before a list written at its key's
// indentation and after the last key; "#" inside quoted and block
// scalars and in words ("C#", a URL) is text, not a comment.
const commentedEntry = "---\r\n" +
	"# Why this entry exists: the retry incident of May.\r\n" +
	"title: \"Invoice #42 retry\"   # the number is the ticket\r\n" +
	"owner: alice # moves to bob in June\r\n" +
	"lang: C#\r\n" +
	"url: http://example.com/page#frag\r\n" +
	"meta:\r\n" +
	"  team: billing\r\n" +
	"  # the links were checked in May\r\n" +
	"  links: [a, b]\r\n" +
	"notes: |\r\n" +
	"  # not a comment: the block's first line\r\n" +
	"  second line\r\n" +
	"# the steps, in the order they run\r\n" +
	"steps:\r\n" +
	"- one\r\n" +
	"- two\r\n" +
	"# trailing remark\r\n" +
	"---\r\n" +
	"\r\n" +
	"## Narrative\r\n" +
	"Retries happen.\r\n"

func TestCommentsFound(t *testing.T) {
	e, err := ParseEntry("a/b/c.md", []byte(commentedEntry))
	if err != nil {
		t.Fatal(err)
	}
	want := []KeyValue{
		{Key: "title", Value: " Why this entry exists: the retry incident of May."},
		{Key: "title", Value: " the number is the ticket"},
		{Key: "owner", Value: " moves to bob in June"},
		{Key: "meta", Value: " the links were checked in May"},
		{Key: "steps", Value: " the steps, in the order they run"},
		{Key: "", Value: " trailing remark"},
	}
	if !reflect.DeepEqual(e.Comments, want) {
		t.Fatalf("comments:\n got %q\nwant %q", e.Comments, want)
	}
	if e.Title != "Invoice #42 retry" {
		t.Fatalf("title %q", e.Title)
	}
}

// An engine rewrite keeps every comment and every custom key's value.
func TestCommentsSurviveRewrite(t *testing.T) {
	e, err := ParseEntry("a/b/c.md", []byte(commentedEntry))
	if err != nil {
		t.Fatal(err)
	}
	e.Summary = "Retried three times." // as an UPDATE would
	out := string(Render(e))
	for _, c := range []string{
		"# Why this entry exists: the retry incident of May.\n# the number is the ticket\ntitle: ",
		"# moves to bob in June\nowner: alice\n",
		"# the links were checked in May\nmeta: {team: billing, links: [a, b]}\n",
		"# the steps, in the order they run\nsteps: [one, two]\n",
		"# trailing remark\n---\n",
		"lang: C#\n",
		"url: http://example.com/page#frag\n",
		`notes: "# not a comment: the block's first line\nsecond line\n"`,
	} {
		if !strings.Contains(out, c) {
			t.Errorf("the rewrite lacks %q:\n%s", c, out)
		}
	}
	back, err := ParseEntry("a/b/c.md", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Comments, e.Comments) || !reflect.DeepEqual(back.Extra, e.Extra) {
		t.Fatalf("read back:\ncomments %q\n   extra %q\nwant %q\n     %q", back.Comments, back.Extra, e.Comments, e.Extra)
	}
	if again := string(Render(back)); again != out {
		t.Fatalf("not stable:\n%s\n----\n%s", out, again)
	}
}

// A comment whose key the rewrite drops (an emptied summary) is written
// after the last key rather than lost; a front matter of comments alone
// keeps them too.
func TestCommentsOfDroppedKeys(t *testing.T) {
	e, err := ParseEntry("a/b/c.md", []byte("---\n# keep me\nsummary: old\ntitle: T\n---\nbody\n"))
	if err != nil {
		t.Fatal(err)
	}
	e.Summary = ""
	if out := string(Render(e)); !strings.Contains(out, "title: T\n# keep me\n---\n") {
		t.Fatalf("the comment of the dropped key:\n%s", out)
	}
	e, err = ParseEntry("a/b/c.md", []byte("---\n# only a comment\n---\nbody\n"))
	if err != nil {
		t.Fatal(err)
	}
	if out := string(Render(e)); !strings.Contains(out, "# only a comment\n---\n") {
		t.Fatalf("a front matter of comments alone:\n%s", out)
	}
}

// What cannot be a comment is left to the values: an unclosed quote after
// " #" is text the decoder must see whole, and a file without "#" costs
// no extra decoding.
func TestCommentsNotTaken(t *testing.T) {
	for _, in := range []string{
		"---\ntitle: 'a #b'\n---\n",
		"---\ntitle: \"x\ny #z\"\n---\n",
		"---\nk: |\n  #raw\n---\n",
		"---\ntitle: plain\n---\n# Heading in the body\n",
	} {
		e, err := ParseEntry("a/b/c.md", []byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if len(e.Comments) != 0 {
			t.Errorf("%q: comments %q", in, e.Comments)
		}
	}
}

// TOML front matter ("+++", Hugo's) is not front matter to the tree: the
// file is a note whose text starts with it, and a rewrite keeps it as text.
func TestTOMLFrontMatterKeptAsText(t *testing.T) {
	in := "+++\ntitle = \"Deploys\"\ndraft = true # not yet\n+++\n\nCanary first.\n"
	e, err := ParseEntry("a/b/deploys.md", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	e.Tags = []string{"ops"}
	out := string(Render(e))
	if !strings.Contains(out, "tags: [ops]\n---\n\n+++\ntitle = \"Deploys\"\ndraft = true # not yet\n+++\n\nCanary first.\n") {
		t.Fatalf("rendered:\n%s", out)
	}
}

// A comment the engine makes (a MERGE's "had summary: …") may hold what
// YAML refuses in a comment or reads as a line break: it is written so
// that the file still parses.
func TestCommentOfAnyTextParses(t *testing.T) {
	e := &Entry{Path: "a/b/c.md", Title: "T", Comments: []KeyValue{{Value: " had summary: a\x01b\u2028c\rd\te\xff"}}}
	back, err := ParseEntry(e.Path, Render(e))
	if err != nil {
		t.Fatalf("%v:\n%s", err, Render(e))
	}
	if want := []KeyValue{{Value: " had summary: a b c d\te\uFFFD"}}; !reflect.DeepEqual(back.Comments, want) {
		t.Fatalf("comments %q", back.Comments)
	}
}

// A key spelt "-" is a key, not a list item: its comments stay with it.
func TestCommentsOfADashKey(t *testing.T) {
	e := &Entry{Path: "a/b/c.md", Title: "T", Extra: []KeyValue{{Key: "-", Value: "x"}},
		Comments: []KeyValue{{Key: "-", Value: " dash"}, {Key: "title", Value: " title"}}}
	out := Render(e)
	back, err := ParseEntry(e.Path, out)
	want := []KeyValue{{Key: "title", Value: " title"}, {Key: "-", Value: " dash"}} // in the order written
	if err != nil || !reflect.DeepEqual(back.Comments, want) || string(Render(back)) != string(out) {
		t.Fatalf("%v %q:\n%s", err, back.Comments, out)
	}
}
