package curate

import (
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestMergeRewriteEdgeCases(t *testing.T) {
	files := map[string]string{
		"a/b/src.md":  "---\ntitle: Src\n---\n\n## Narrative\nsource text, see [[src]]\n",
		"a/b/dst.md":  "---\ntitle: Dst\nrelated: [a/b/src.md]\n---\n\n## Narrative\ntarget text\n",
		"a/c/both.md": "---\ntitle: Both\nrelated: [a/b/src.md, a/b/dst.md]\n---\n",
		"a/c/code.md": "---\ntitle: Code\n---\n\n## Narrative\n" +
			"inline `[[a/b/src]]` stays; real [[a/b/src#Part|alias]] and [[A/B/Src]] move.\n\n" +
			"```\n[[a/b/src]] in a fence stays\n```\n\n| x | [[a/b/src\\|y]] |\n",
		"a/d/other.md": "---\ntitle: Other\n---\n\n## Narrative\n[[other]] is not the source.\n",
	}
	e := newEnv(t, files)
	a := one(t, e, api.Operation{Type: "MERGE", Path: "a/b/src.md", MergeTarget: "a/b/dst.md", Reason: "r"})
	mustSucceed(t, a)
	if a.Message != "merged a/b/src.md into a/b/dst.md; rewrote 4 relations" {
		t.Errorf("message %q", a.Message)
	}
	if b := e.entry(t, "a/c/both.md"); !slices.Equal(b.Related, []string{"a/b/dst.md"}) {
		t.Errorf("both: %v", b.Related)
	}
	code, _ := e.fs.ReadFile("a/c/code.md")
	for _, want := range []string{"inline `[[a/b/src]]` stays", "real [[a/b/dst#Part|alias]] and [[a/b/dst]] move", "[[a/b/src]] in a fence stays", `[[a/b/dst\|y]]`} {
		if !strings.Contains(string(code), want) {
			t.Errorf("code.md lacks %q:\n%s", want, code)
		}
	}
	d := e.entry(t, "a/b/dst.md")
	if len(d.Related) != 0 || !strings.Contains(d.Narrative.Text, "target text\n\nsource text, see [[a/b/dst]]") {
		t.Errorf("target %+v", d)
	}
	if bl := e.c.Catalog.Backlinks("a/b/dst.md"); !slices.Equal(bl, []string{"a/b/dst.md", "a/c/both.md", "a/c/code.md"}) {
		t.Errorf("backlinks %v", bl)
	}
}

func TestMergeAmbiguousBaseName(t *testing.T) {
	e := newEnv(t, map[string]string{
		"a/b/src.md":  "---\ntitle: Src\n---\n",
		"a/x/src.md":  "---\ntitle: Other src\n---\n",
		"a/b/dst.md":  "---\ntitle: Dst\n---\n",
		"a/c/note.md": "---\ntitle: Note\n---\n\nsee [[src]] and [[a/b/src]]\n",
	})
	a := one(t, e, api.Operation{Type: "MERGE", Path: "a/b/src.md", MergeTarget: "a/b/dst.md", Reason: "r"})
	mustSucceed(t, a)
	if !strings.HasSuffix(a.Message, "rewrote 1 relation") {
		t.Errorf("message %q", a.Message)
	}
	if b, _ := e.fs.ReadFile("a/c/note.md"); !strings.Contains(string(b), "see [[src]] and [[a/b/dst]]") {
		t.Errorf("note:\n%s", b)
	}
}

func TestUpdateRawConceptCarried(t *testing.T) {
	e := newEnv(t, map[string]string{
		"a/b/x.md": "---\ntitle: X\n---\n\n## Raw Concept\n**Task:** old task\n**Files:** a.go, b.go\n**Author:** bob\n",
	})
	a := one(t, e, api.Operation{Type: "UPDATE", Path: "a/b/x.md", Content: api.Content{RawConcept: &api.RawConcept{Task: "new task"}}, Reason: "r"})
	mustSucceed(t, a)
	if want := []string{"rawConcept.author", "rawConcept.files"}; !slices.Equal(a.Carried, want) {
		t.Errorf("carried %v", a.Carried)
	}
	rc := e.entry(t, "a/b/x.md").RawConcept
	if rc.Task != "new task" || rc.Author != "bob" || !slices.Equal(rc.Files, []string{"a.go", "b.go"}) {
		t.Errorf("raw concept %+v", rc)
	}
}

func TestMiscPaths(t *testing.T) {
	e := newEnv(t, fixture)
	// An entry named without .md and without a title.
	a := one(t, e, api.Operation{Type: "DELETE", Path: "eng/auth/session", Reason: "r"})
	mustSucceed(t, a)
	if a.Path != "eng/auth/session.md" {
		t.Errorf("path %q", a.Path)
	}
	// A file the engine does not load: over the size limit.
	huge := "---\ntitle: Huge\n---\n" + strings.Repeat("x", DefaultMaxFileBytes)
	if err := e.fs.WriteFile("eng/auth/huge.md", []byte(huge)); err != nil {
		t.Fatal(err)
	}
	a = one(t, e, api.Operation{Type: "UPDATE", Path: "eng/auth/huge.md", Reason: "r"})
	if a.Status != api.StatusFailed || !strings.Contains(a.Message, "not loaded") {
		t.Errorf("%+v", a)
	}
	a = one(t, e, api.Operation{Type: "ADD", Path: "eng/auth/huge.md", Reason: "r"})
	if a.Status != api.StatusFailed || a.Message != "already exists: eng/auth/huge.md" {
		t.Errorf("%+v", a)
	}
	// A MERGE into it, or of it, says it is there but not loaded, not that
	// it is missing; both files stay as they were.
	for _, op := range []api.Operation{
		{Type: "MERGE", Path: "eng/auth/login.md", MergeTarget: "eng/auth/huge.md", Reason: "r"},
		{Type: "MERGE", Path: "eng/auth/huge.md", MergeTarget: "eng/auth/login.md", Reason: "r"},
	} {
		before, _ := e.fs.ReadFile("eng/auth/login.md")
		a = one(t, e, op)
		if a.Status != api.StatusFailed || !strings.Contains(a.Message, "eng/auth/huge.md is not loaded (over the size limit or unreadable)") {
			t.Errorf("%s into %s: %+v", op.Path, op.MergeTarget, a)
		}
		if after, _ := e.fs.ReadFile("eng/auth/login.md"); string(after) != string(before) {
			t.Errorf("%s into %s changed login.md", op.Path, op.MergeTarget)
		}
		if b, _ := e.fs.ReadFile("eng/auth/huge.md"); string(b) != huge {
			t.Errorf("%s into %s changed huge.md", op.Path, op.MergeTarget)
		}
	}
	// A folder where the entry would go.
	a = one(t, e, api.Operation{Type: "ADD", Path: "eng", Title: "Billing", Reason: "r"})
	if a.Status != api.StatusFailed || !strings.Contains(a.Message, "entries live under domain/topic") {
		t.Errorf("%+v", a)
	}
	// No catalog: an empty tree.
	c := &Curator{FS: e.fs, Clock: clock}
	mustSucceed(t, c.Apply([]api.Operation{{Type: "ADD", Path: "z/y", Title: "T", Reason: "r"}}).Applied[0])
	// No operations: no audit write, an empty (not null) list.
	if res := c.Apply(nil); res.Applied == nil || len(res.Applied) != 0 {
		t.Errorf("%+v", res)
	}
}

func TestAddAwkwardText(t *testing.T) {
	e := newEnv(t, nil)
	op := api.Operation{Type: "ADD", Path: "a/b", Title: `Foo: "bar" #baz [x] - y`, Summary: "line one\nline two: yes",
		Content: api.Content{
			Narrative: &api.Narrative{Text: "## Not a section\ntext", Rules: "### not a part\n---\nrule"},
			Facts:     []api.Fact{{Subject: "a**b", Statement: "multi\nline", Category: "c]"}},
			Snippets:  []string{"```\nfenced already\n```", "plain ``` code"},
			Tags:      []string{"a, b", "[c]"},
		},
		Reason: "---\nnot front matter"}
	a := one(t, e, op)
	mustSucceed(t, a)
	en := e.entry(t, a.Path)
	if en.Title != op.Title || !strings.Contains(en.Summary, "line two") || en.Reason == "" {
		b, _ := e.fs.ReadFile(a.Path)
		t.Errorf("entry %+v\n%s", en, b)
	}
	if got, _ := e.c.Catalog.Get(a.Path); got == nil || got.Title != op.Title {
		t.Error("catalog")
	}
}
