package catalog

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

func TestCatalogResolve(t *testing.T) {
	c := New()
	for _, p := range []string{"a/b/src.md", "a/x/dup.md", "a/y/dup.md", "n/x.md.md"} {
		c.Put(entryWith(p, nil, ""))
	}
	tests := []struct{ raw, want string }{
		{"a/b/src.md", "a/b/src.md"},
		{" @./a/b/src ", "a/b/src.md"},
		{"//a/b/src.md", "a/b/src.md"},
		{"A/B/SRC", "a/b/src.md"},
		{"Src", "a/b/src.md"},
		{"n/x.md", "n/x.md.md"},
		{"dup", ""},
		{"a/x/dup", "a/x/dup.md"},
		{"", ""},
		{"@", ""},
		{"b/src", ""},
	}
	for _, tt := range tests {
		got, ok := c.Resolve(tt.raw)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tt.raw, got, ok, tt.want)
		}
	}
	var zero Catalog
	if got, ok := zero.Resolve("a"); ok || got != "" {
		t.Errorf("zero Catalog resolves %q", got)
	}
}

// toSrc points the links to a/b/src.md at to, as a catalog would find them.
func toSrc(t *testing.T, to string) tree.Relink {
	c := New()
	c.Put(entryWith("a/b/src.md", nil, ""))
	c.Put(entryWith("a/d/other.md", nil, ""))
	return func(raw string) (string, bool) {
		if raw == "" {
			t.Error("relink called with an empty link")
		}
		p, ok := c.Resolve(raw)
		return to, ok && p == "a/b/src.md"
	}
}

func TestRewriteLinks(t *testing.T) {
	e := &tree.Entry{
		Path:            "a/c/note.md",
		Related:         []string{"a/b/src.md", "other", "@/a/b/src"},
		LegacyRelations: []string{"src", "a/d/other.md"},
		Preamble:        "see [[src]], [[A/B/Src#Part|alias]], ![[src]] and [[other]]; `[[src]]` stays\n| t | [[a/b/src\\|y]] |",
		Reason:          "[[src]]",
		RawConcept:      api.RawConcept{Task: "[[src]]", Changes: "[[src]]", Flow: "[[src]]"},
		Narrative:       api.Narrative{Text: "[[src]]", Rules: "```\n[[src]]\n```\n[[src|r]]", Diagrams: "~~~\n[[src]]"},
		Facts:           []api.Fact{{Subject: "[[src]]", Statement: "is [[src]]"}},
		Other:           []tree.Section{{Heading: "On [[src]]", Body: "[[src]] [[]] [[ ]]"}},
	}
	before := e.Clone()
	got, n := e.RewriteLinks(toSrc(t, "a/b/dst.md"))
	if !reflect.DeepEqual(e, before) {
		t.Fatalf("RewriteLinks changed its receiver: %#v", e)
	}
	want := before.Clone()
	want.Related = []string{"a/b/dst.md", "other", "a/b/dst.md"}
	want.LegacyRelations = []string{"a/b/dst.md", "a/d/other.md"}
	want.Preamble = "see [[a/b/dst]], [[a/b/dst#Part|alias]], ![[a/b/dst]] and [[other]]; `[[src]]` stays\n| t | [[a/b/dst\\|y]] |"
	want.Reason = "[[a/b/dst]]"
	want.RawConcept = api.RawConcept{Task: "[[a/b/dst]]", Changes: "[[a/b/dst]]", Flow: "[[a/b/dst]]"}
	want.Narrative = api.Narrative{Text: "[[a/b/dst]]", Rules: "```\n[[src]]\n```\n[[a/b/dst|r]]", Diagrams: "~~~\n[[src]]"}
	want.Facts = []api.Fact{{Subject: "[[a/b/dst]]", Statement: "is [[a/b/dst]]"}}
	want.Other = []tree.Section{{Heading: "On [[a/b/dst]]", Body: "[[a/b/dst]] [[]] [[ ]]"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RewriteLinks\n%#v\nwant\n%#v", got, want)
	}
	if n != 17 {
		t.Errorf("rewrote %d links, want 17", n)
	}
	if _, n := want.RewriteLinks(toSrc(t, "x.md")); n != 0 {
		t.Errorf("rewrote %d links of an entry without any to src", n)
	}
}

func TestRewriteLinksInText(t *testing.T) {
	text := "---\r\ntitle: Note\r\nrelated: [a/b/src.md, 'other', a/b/src.md.bak]\r\n---\r\n\r\n" +
		"Hand  written: [[src#H|alias]] and `[[src]]`.\r\n" +
		"```\r\n[[src]]\r\n```\r\n\r\n## Relations\r\n- @src\r\n*   @ a/d/other.md\r\n"
	e, err := tree.ParseEntry("a/c/note.md", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := tree.RewriteLinksInText(text, e, toSrc(t, "a/$1/dst.md"))
	want := "---\r\ntitle: Note\r\nrelated: [a/$1/dst.md, 'other', a/b/src.md.bak]\r\n---\r\n\r\n" +
		"Hand  written: [[a/$1/dst#H|alias]] and `[[src]]`.\r\n" +
		"```\r\n[[src]]\r\n```\r\n\r\n## Relations\r\n- @a/$1/dst.md\r\n*   @ a/d/other.md\r\n"
	if !ok || got != want {
		t.Errorf("RewriteLinksInText = %v\n%q\nwant\n%q", ok, got, want)
	}
	// The edit means what RewriteLinks gives.
	pe, err := tree.ParseEntry(e.Path, []byte(got))
	if err != nil {
		t.Fatal(err)
	}
	re, _ := e.RewriteLinks(toSrc(t, "a/$1/dst.md"))
	if !reflect.DeepEqual(pe, re) {
		t.Errorf("edited file parses as\n%#v\nrewrite is\n%#v", pe, re)
	}
	// Nothing to change.
	if s, ok := tree.RewriteLinksInText(want, pe, toSrc(t, "a/b/dst.md")); ok || s != want {
		t.Errorf("changed a file without links to src: %q", s)
	}
	// Without front matter the whole text is body.
	if s, ok := tree.RewriteLinksInText("see [[src]]\n---\nrelated: [src]\n---\n", &tree.Entry{}, toSrc(t, "d.md")); !ok || s != "see [[d]]\n---\nrelated: [src]\n---\n" {
		t.Errorf("no front matter: %v %q", ok, s)
	}
	// A file that is all front matter, its closing line unterminated, is
	// left byte for byte.
	only := "---\ntitle: Only\nrelated: [a/d/other.md]\n---"
	if s, ok := tree.RewriteLinksInText(only, &tree.Entry{Related: []string{"a/d/other.md"}}, toSrc(t, "d.md")); ok || s != only {
		t.Errorf("front matter only: %v %q", ok, s)
	}
}

// The relations built at once from a catalog's cards answer as those kept
// in step entry by entry: shared base names, links repeated, links by
// base name and by path.
func TestRelationsBuiltAtOnceAsInStep(t *testing.T) {
	var ens []*tree.Entry
	for i := range 60 {
		p := fmt.Sprintf("d%d/s%d/message_%d.md", i%3, i%7, i%4)
		ens = append(ens, entryWith(p, []string{"message_1", "message_1", fmt.Sprintf("d%d/s%d/message_%d", (i+1)%3, (i+2)%7, (i+3)%4), "hub"}, ""))
	}
	ens = append(ens, entryWith("hub.md", []string{"d0/s0/message_0"}, ""))
	inStep, atOnce := New(), New()
	inStep.Backlinks("hub.md") // built empty, then kept in step
	for _, en := range ens {
		inStep.Put(en)
		atOnce.Put(en)
	}
	for _, en := range ens {
		for _, q := range []string{en.Path, baseName(en.Path), "message_1", "hub"} {
			if a, b := inStep.Backlinks(q), atOnce.Backlinks(q); !reflect.DeepEqual(a, b) {
				t.Fatalf("Backlinks(%q): in step %q, at once %q", q, a, b)
			}
			a, okA := inStep.Resolve(q)
			b, okB := atOnce.Resolve(q)
			if a != b || okA != okB {
				t.Fatalf("Resolve(%q): in step %q %v, at once %q %v", q, a, okA, b, okB)
			}
		}
	}
}
