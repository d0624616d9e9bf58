package curate

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/tree"
)

func TestValidationFailures(t *testing.T) {
	ok := api.Content{Narrative: &api.Narrative{Text: "x"}}
	cases := []struct {
		name string
		op   api.Operation
		want string
	}{
		{"unknown type", api.Operation{Type: "FOO", Path: "a/b", Title: "t", Reason: "r"}, `unknown operation type "FOO": want ADD, UPDATE, UPSERT, MERGE, DELETE or MOVE`},
		{"missing reason", api.Operation{Type: "ADD", Path: "a/b", Title: "t", Content: ok}, "reason is required"},
		{"blank reason", api.Operation{Type: "ADD", Path: "a/b", Title: "t", Reason: "  "}, "reason is required"},
		{"dotdot", api.Operation{Type: "ADD", Path: "../etc", Title: "t", Reason: "r"}, `invalid path "../etc"`},
		{"absolute", api.Operation{Type: "ADD", Path: "/a/b", Title: "t", Reason: "r"}, `invalid path "/a/b"`},
		{"empty", api.Operation{Type: "ADD", Path: "", Title: "t", Reason: "r"}, `invalid path ""`},
		{"dot segment", api.Operation{Type: "ADD", Path: "a/.hidden", Title: "t", Reason: "r"}, `invalid path "a/.hidden"`},
		{"arbor", api.Operation{Type: "DELETE", Path: ".arbor", Reason: "r"}, `invalid path ".arbor"`},
		{"backslash", api.Operation{Type: "ADD", Path: `a\b`, Title: "t", Reason: "r"}, `invalid path`},
		{"no title", api.Operation{Type: "ADD", Path: "a/b", Reason: "r"}, "title is required when path is a folder (a/b)"},
		{"no title update", api.Operation{Type: "UPDATE", Path: "a/b", Reason: "r"}, "title is required when path is a folder"},
		{"no title upsert", api.Operation{Type: "UPSERT", Path: "a/b", Reason: "r"}, "title is required when path is a folder"},
		{"one level", api.Operation{Type: "ADD", Path: "eng", Title: "t", Reason: "r"}, "entries live under domain/topic"},
		{"root", api.Operation{Type: "ADD", Path: "x.md", Reason: "r"}, "entries live under domain/topic"},
		{"too deep", api.Operation{Type: "ADD", Path: "a/b/c/d", Title: "t", Reason: "r"}, "4 folder levels, at most 3"},
		{"too deep upsert", api.Operation{Type: "UPSERT", Path: "a/b/c/d/e.md", Reason: "r"}, "4 folder levels"},
		{"utf8 title", api.Operation{Type: "ADD", Path: "a/b", Title: "bad\xff", Reason: "r"}, "invalid UTF-8 in title"},
		{"utf8 rule", api.Operation{Type: "ADD", Path: "a/b", Title: "t", Reason: "r", Content: api.Content{Narrative: &api.Narrative{Rules: "\xc3"}}}, "invalid UTF-8 in narrative.rules"},
		{"utf8 tag", api.Operation{Type: "ADD", Path: "a/b", Title: "t", Reason: "r", Content: api.Content{Tags: []string{"ok", "\xfe"}}}, "invalid UTF-8 in tags"},
		{"bad relation", api.Operation{Type: "ADD", Path: "a/b", Title: "t", Reason: "r", Content: api.Content{Relations: []string{"../x.md"}}}, `invalid relation "../x.md"`},
		{"context path", api.Operation{Type: "UPDATE", Path: "eng/context.md", Reason: "r"}, "eng/context.md is a context file"},
		{"multiline title", api.Operation{Type: "ADD", Path: "a/b", Title: "a\nb", Reason: "r"}, "title must be a single line"},
		{"merge no target", api.Operation{Type: "MERGE", Path: "eng/billing/old_retry.md", Reason: "r"}, "mergeTarget is required"},
		{"merge self", api.Operation{Type: "MERGE", Path: "eng/billing/old_retry.md", MergeTarget: "eng/billing/old_retry", Reason: "r"}, "cannot merge eng/billing/old_retry.md into itself"},
		{"merge bad target", api.Operation{Type: "MERGE", Path: "eng/billing/old_retry.md", MergeTarget: "a//b.md", Reason: "r"}, `invalid mergeTarget "a//b.md"`},
		{"merge no source", api.Operation{Type: "MERGE", Path: "eng/billing/nope.md", MergeTarget: "eng/billing/invoice_retry.md", Reason: "r"}, "source not found: eng/billing/nope.md"},
		{"merge no target entry", api.Operation{Type: "MERGE", Path: "eng/billing/old_retry.md", MergeTarget: "eng/billing/nope.md", Reason: "r"}, "target not found: eng/billing/nope.md"},
		{"merge broken", api.Operation{Type: "MERGE", Path: "eng/billing/broken.md", MergeTarget: "eng/billing/invoice_retry.md", Reason: "r"}, "source cannot be parsed: eng/billing/broken.md"},
		{"add exists", api.Operation{Type: "ADD", Path: "eng/billing", Title: "Invoice retry", Reason: "r"}, "already exists: eng/billing/invoice_retry.md"},
		{"add broken", api.Operation{Type: "ADD", Path: "eng/billing/broken.md", Reason: "r"}, "already exists: eng/billing/broken.md (it cannot be parsed"},
		{"upsert broken", api.Operation{Type: "UPSERT", Path: "eng/billing/broken.md", Reason: "r"}, "cannot upsert eng/billing/broken.md"},
		{"update missing", api.Operation{Type: "UPDATE", Path: "eng/billing", Title: "Nope", Reason: "r"}, "not found: eng/billing/nope.md"},
		{"delete missing", api.Operation{Type: "DELETE", Path: "eng/billing/nope.md", Reason: "r"}, "not found: eng/billing/nope.md"},
		{"delete missing folder", api.Operation{Type: "DELETE", Path: "eng/nope", Reason: "r"}, "not found: eng/nope"},
		{"size", api.Operation{Type: "ADD", Path: "a/b", Title: "big", Reason: "r", Content: api.Content{Narrative: &api.Narrative{Text: strings.Repeat("x", 5000)}}}, "over the 4096-byte limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fixture)
			e.c.MaxFileBytes = 4096
			before, cat := treeFiles(e.fs), catalogState(e.c.Catalog)
			res := e.c.Apply([]api.Operation{tc.op})
			a := res.Applied[0]
			if a.Status != api.StatusFailed || !strings.Contains(a.Message, tc.want) {
				t.Fatalf("got %s %q, want failed %q", a.Status, a.Message, tc.want)
			}
			if res.Summary != (api.Summary{Failed: 1}) {
				t.Errorf("summary %+v", res.Summary)
			}
			if d := diffFiles(before, treeFiles(e.fs)); d != "" {
				t.Errorf("tree changed:\n%s", d)
			}
			if catalogState(e.c.Catalog) != cat {
				t.Error("catalog changed")
			}
			if len(e.changes) != 0 {
				t.Errorf("OnChange called: %+v", e.changes)
			}
			lines := auditLines(t, e.fs)
			if len(lines) != 1 || lines[0].Status != api.StatusFailed || lines[0].Message != a.Message || lines[0].Reason != tc.op.Reason {
				t.Errorf("audit %+v", lines)
			}
		})
	}
}

func TestAdd(t *testing.T) {
	e := newEnv(t, fixture)
	a := one(t, e, api.Operation{
		Type: "add", Path: "engineering/billing/retries", Title: "Invoice Retry Policy!", Summary: "how invoices retry",
		Content: api.Content{
			Narrative:  &api.Narrative{Rules: "Failed invoices are retried three times, then escalated."},
			RawConcept: &api.RawConcept{Task: "document", Files: []string{"billing/retry.go"}},
			Facts:      []api.Fact{{Subject: "retry", Statement: "three times", Category: "policy"}},
			Relations:  []string{"@eng/billing/invoice_retry.md", "eng/billing/invoice_retry.md"},
			Tags:       []string{"billing", "billing", " "}, Keywords: []string{"invoice", "retry"},
			Snippets: []string{"retry(3)"},
		},
		Reason: "record the agreed retry policy",
	})
	mustSucceed(t, a)
	p := "engineering/billing/retries/invoice_retry_policy.md"
	if a.Path != p || a.Type != api.OpAdd || a.Message != "added" {
		t.Fatalf("applied %+v", a)
	}
	en := e.entry(t, p)
	if en.Title != "Invoice Retry Policy!" || en.Summary != "how invoices retry" || en.Reason != "record the agreed retry policy" {
		t.Errorf("entry %+v", en)
	}
	if !en.CreatedAt.Equal(tNow) || !en.UpdatedAt.Equal(tNow) {
		t.Errorf("times %v %v", en.CreatedAt, en.UpdatedAt)
	}
	if !slices.Equal(en.Related, []string{"eng/billing/invoice_retry.md"}) || !slices.Equal(en.Tags, []string{"billing"}) {
		t.Errorf("related %v tags %v", en.Related, en.Tags)
	}
	if en.Narrative.Rules == "" || en.RawConcept.Task != "document" || len(en.Facts) != 1 || len(en.Snippets) != 1 {
		t.Errorf("content %+v", en)
	}
	for _, cp := range []string{"engineering/context.md", "engineering/billing/context.md", "engineering/billing/retries/context.md"} {
		data, err := e.fs.ReadFile(cp)
		if err != nil {
			t.Fatalf("%s: %v", cp, err)
		}
		if _, err := tree.ParseContext(cp, data); err != nil {
			t.Errorf("%s: %v", cp, err)
		}
		if _, ok := e.c.Catalog.Context(cp); !ok {
			t.Errorf("catalog lacks %s", cp)
		}
	}
	if got, ok := e.c.Catalog.Get(p); !ok || got.Title != en.Title {
		t.Errorf("catalog entry %v", got)
	}
	if bl := e.c.Catalog.Backlinks("eng/billing/invoice_retry.md"); !slices.Contains(bl, p) {
		t.Errorf("backlinks %v", bl)
	}
	var paths []string
	for _, ch := range e.changes {
		paths = append(paths, ch.Path)
		if (ch.Context == nil) == (ch.Entry == nil) || ch.Removed {
			t.Errorf("change %+v", ch)
		}
	}
	if !slices.Equal(paths, []string{"engineering/context.md", "engineering/billing/context.md", "engineering/billing/retries/context.md", p}) {
		t.Errorf("changes %v", paths)
	}

	// Existing context files are not rewritten; a full .md path works and
	// names the title after the file when none is given.
	e.changes = nil
	ctxBefore, _ := e.fs.ReadFile("eng/context.md")
	a = one(t, e, api.Operation{Type: "ADD", Path: "eng/billing/sub/hand_named.md", Reason: "r"})
	mustSucceed(t, a)
	if ctxAfter, _ := e.fs.ReadFile("eng/context.md"); string(ctxAfter) != string(ctxBefore) {
		t.Error("existing context.md rewritten")
	}
	if en := e.entry(t, "eng/billing/sub/hand_named.md"); en.Title != "hand named" {
		t.Errorf("title %q", en.Title)
	}
	if len(e.changes) != 2 || e.changes[0].Path != "eng/billing/sub/context.md" {
		t.Errorf("changes %+v", e.changes)
	}
}

// TestAddTitledContext adds an entry titled "Context" to a folder: it is
// an entry beside the folder's context.md, which stays as it was.
func TestAddTitledContext(t *testing.T) {
	e := newEnv(t, fixture)
	before, err := e.fs.ReadFile("eng/billing/context.md")
	if err != nil {
		t.Fatal(err)
	}
	a := one(t, e, api.Operation{Type: "ADD", Path: "eng/billing", Title: "Context", Content: api.Content{Narrative: &api.Narrative{Text: "Why the team exists."}}, Reason: "r"})
	mustSucceed(t, a)
	if a.Path != "eng/billing/context_entry.md" {
		t.Fatalf("applied %+v", a)
	}
	if en := e.entry(t, a.Path); en.Title != "Context" || en.Narrative.Text != "Why the team exists." {
		t.Errorf("entry %+v", en)
	}
	if after, _ := e.fs.ReadFile("eng/billing/context.md"); string(after) != string(before) {
		t.Errorf("context.md rewritten:\n%s", after)
	}
}

func TestUpdateCarriesOver(t *testing.T) {
	e := newEnv(t, fixture)
	p := "eng/billing/invoice_retry.md"
	a := one(t, e, api.Operation{
		Type: "UPDATE", Path: "eng/billing", Title: "Invoice retry",
		Content: api.Content{
			Narrative: &api.Narrative{Text: "Retries happen every four hours."},
			Relations: []string{"eng/auth/session.md"},
			Tags:      []string{"payments"},
		},
		Reason: "policy changed",
	})
	mustSucceed(t, a)
	if a.Path != p || a.Message != "updated" {
		t.Errorf("applied %+v", a)
	}
	wantCarried := []string{"relations", "snippets", "facts", "tags", "keywords", "narrative.rules"}
	if !slices.Equal(a.Carried, wantCarried) {
		t.Errorf("carried %v, want %v", a.Carried, wantCarried)
	}
	en := e.entry(t, p)
	if en.Narrative.Text != "Retries happen every four hours." || en.Narrative.Rules != "Three retries, then escalate." {
		t.Errorf("narrative %+v", en.Narrative)
	}
	if !slices.Equal(en.Related, []string{"eng/auth/session.md", "eng/billing/old_retry.md", "eng/auth/login.md"}) {
		t.Errorf("related %v", en.Related)
	}
	if !slices.Equal(en.Tags, []string{"payments", "billing"}) || !slices.Equal(en.Keywords, []string{"invoice", "retry"}) {
		t.Errorf("tags %v keywords %v", en.Tags, en.Keywords)
	}
	if len(en.Snippets) != 1 || len(en.Facts) != 1 || en.Summary != "invoices are retried" {
		t.Errorf("snippets %v facts %v summary %q", en.Snippets, en.Facts, en.Summary)
	}
	if !en.CreatedAt.Equal(day(2026, 2, 10)) || !en.UpdatedAt.Equal(tNow) || en.Reason != "policy changed" {
		t.Errorf("created %v updated %v reason %q", en.CreatedAt, en.UpdatedAt, en.Reason)
	}
	if len(en.Extra) != 1 || en.Extra[0].Key != "owner" {
		t.Errorf("extra %+v", en.Extra)
	}
	// The fixture's reason was written by hand (the audit log has none).
	if len(en.Other) != 2 || en.Other[0].Heading != "Notes" || en.Other[1] != (tree.Section{Heading: EarlierReasons, Body: "first write"}) {
		t.Errorf("other %+v", en.Other)
	}
	if len(e.changes) != 1 || e.changes[0].Entry == nil || e.changes[0].Entry.Narrative.Text == "" {
		t.Errorf("changes %+v", e.changes)
	}
	if got, _ := e.c.Catalog.Get(p); got.Narrative.Text != en.Narrative.Text {
		t.Error("catalog not updated")
	}

	// Legacy relations are kept (and carried) too; the Obsidian preamble survives.
	a = one(t, e, api.Operation{Type: "UPDATE", Path: "eng/auth/login.md", Summary: "login flow", Reason: "r"})
	mustSucceed(t, a)
	if !slices.Contains(a.Carried, "relations") || !slices.Contains(a.Carried, "narrative.text") {
		t.Errorf("carried %v", a.Carried)
	}
	if l := e.entry(t, "eng/auth/login.md"); len(l.Links()) != 1 || l.Links()[0] != "eng/billing/old_retry.md" {
		t.Errorf("login links %v", l.Links())
	}
	a = one(t, e, api.Operation{Type: "UPDATE", Path: "notes/Daily Note.md", Content: api.Content{Tags: []string{"daily"}}, Reason: "tag it"})
	mustSucceed(t, a)
	if n := e.entry(t, "notes/Daily Note.md"); !strings.Contains(n.Preamble+n.Narrative.Text, "[[old_retry]]") || n.Title != "Daily Note" {
		t.Errorf("note %+v", n)
	}
}

func TestUpdateResolvesMergeConflict(t *testing.T) {
	files := maps.Clone(fixture)
	p := "eng/billing/invoice_retry.md"
	files[p] += "\n## " + tree.ConflictHeading + "\nBoth sides changed this entry.\n\n### summary\n\n**theirs**: invoices are retried twice\n"
	e := newEnv(t, files)
	if !e.entry(t, p).Conflicted() {
		t.Fatal("the fixture has no conflict section")
	}
	a := one(t, e, api.Operation{Type: "UPDATE", Path: p, Summary: "invoices are retried twice", Reason: "resolve the sync conflict"})
	mustSucceed(t, a)
	if !strings.Contains(a.Message, "merge conflict is resolved") {
		t.Errorf("message %q", a.Message)
	}
	en := e.entry(t, p)
	if en.Conflicted() || en.Summary != "invoices are retried twice" {
		t.Errorf("after the update: conflicted %v, summary %q", en.Conflicted(), en.Summary)
	}
	if !slices.ContainsFunc(en.Other, func(s tree.Section) bool { return s.Heading == "Notes" }) {
		t.Error("the update dropped another section")
	}
}

func TestUpdateReplacesBroken(t *testing.T) {
	e := newEnv(t, fixture)
	a := one(t, e, api.Operation{Type: "UPDATE", Path: "eng/billing/broken.md", Title: "Fixed", Content: api.Content{Narrative: &api.Narrative{Text: "ok"}}, Reason: "repair"})
	mustSucceed(t, a)
	if !strings.Contains(a.Message, "replaced an unparseable file") {
		t.Errorf("message %q", a.Message)
	}
	if e.entry(t, "eng/billing/broken.md").Title != "Fixed" {
		t.Error("not replaced")
	}
	if _, broken := e.c.Catalog.Broken("eng/billing/broken.md"); broken {
		t.Error("still broken in catalog")
	}
	if _, ok := e.c.Catalog.Get("eng/billing/broken.md"); !ok {
		t.Error("not in catalog")
	}
}

func TestUpsert(t *testing.T) {
	e := newEnv(t, fixture)
	res := e.c.Apply([]api.Operation{
		{Type: "UPSERT", Path: "eng/billing", Title: "Dunning", Content: api.Content{Narrative: &api.Narrative{Text: "v1"}}, Reason: "r"},
		{Type: "upsert", Path: "eng/billing", Title: "Dunning", Content: api.Content{Narrative: &api.Narrative{Text: "v2"}}, Reason: "r"},
	})
	if res.Applied[0].Message != "added new" || res.Applied[1].Message != "updated existing" {
		t.Fatalf("%+v", res.Applied)
	}
	if res.Summary != (api.Summary{Added: 1, Updated: 1}) {
		t.Errorf("summary %+v", res.Summary)
	}
	en := e.entry(t, "eng/billing/dunning.md")
	if en.Narrative.Text != "v2" || !en.CreatedAt.Equal(tNow) {
		t.Errorf("%+v", en)
	}
}

func TestMerge(t *testing.T) {
	e := newEnv(t, fixture)
	src, dst := "eng/billing/old_retry.md", "eng/billing/invoice_retry.md"
	a := one(t, e, api.Operation{Type: "MERGE", Path: src, MergeTarget: "eng/billing/invoice_retry", Reason: "deduplicate",
		Content: api.Content{Keywords: []string{"dunning"}}})
	mustSucceed(t, a)
	if a.Path != src || !strings.HasPrefix(a.Message, "merged "+src+" into "+dst+"; rewrote ") {
		t.Fatalf("applied %+v", a)
	}
	// login (legacy @path), session (related:) and the note (two wikilinks).
	if a.Message != "merged "+src+" into "+dst+"; rewrote 4 relations" {
		t.Errorf("message %q", a.Message)
	}
	if _, err := e.fs.ReadFile(src); err == nil {
		t.Error("source still on disk")
	}
	m := e.entry(t, dst)
	if m.Title != "Invoice retry" || m.Summary != "invoices are retried" || m.Reason != "deduplicate" {
		t.Errorf("merged %+v", m)
	}
	if !slices.Equal(m.Related, []string{"eng/auth/login.md", "eng/auth/session.md"}) {
		t.Errorf("related %v", m.Related)
	}
	if !slices.Equal(m.Tags, []string{"billing", "legacy"}) || !slices.Equal(m.Keywords, []string{"dunning", "invoice", "retry", "cron"}) {
		t.Errorf("tags %v keywords %v", m.Tags, m.Keywords)
	}
	if len(m.Facts) != 2 || m.Facts[0].Subject != "retry" || m.Facts[1].Subject != "cron" {
		t.Errorf("facts %+v", m.Facts)
	}
	if m.Narrative.Text != "Retries happen nightly.\n\nRetries used to run hourly." || m.Narrative.Examples != "retry at 01:00" || m.Narrative.Rules == "" {
		t.Errorf("narrative %+v", m.Narrative)
	}
	if !m.CreatedAt.Equal(day(2026, 1, 5)) || !m.UpdatedAt.Equal(tNow) {
		t.Errorf("created %v updated %v", m.CreatedAt, m.UpdatedAt)
	}
	// Both reasons were written by hand (the audit log has none).
	if len(m.Other) == 2 && m.Other[1] != (tree.Section{Heading: EarlierReasons, Body: "first write\n\nhistory"}) {
		t.Errorf("earlier reasons %+v", m.Other[1])
	}
	if len(m.Extra) != 1 || len(m.Other) != 2 || len(m.Snippets) != 1 {
		t.Errorf("extra %v other %v snippets %v", m.Extra, m.Other, m.Snippets)
	}
	if l := e.entry(t, "eng/auth/login.md"); !slices.Equal(l.Links(), []string{dst}) {
		t.Errorf("login links %v", l.Links())
	}
	if s := e.entry(t, "eng/auth/session.md"); !slices.Equal(s.Related, []string{dst}) || !s.UpdatedAt.Equal(day(2026, 1, 1)) {
		t.Errorf("session %v %v", s.Related, s.UpdatedAt)
	}
	note, _ := e.fs.ReadFile("notes/Daily Note.md")
	if want := "See [[eng/billing/invoice_retry]] and [[eng/billing/invoice_retry|the old one]] and [[Unrelated]]."; !strings.Contains(string(note), want) {
		t.Errorf("note:\n%s", note)
	}
	cat := e.c.Catalog
	if _, ok := cat.Get(src); ok {
		t.Error("source in catalog")
	}
	if bl := cat.Backlinks(src); len(bl) != 0 {
		t.Errorf("backlinks to source %v", bl)
	}
	for _, r := range []string{"eng/auth/login.md", "eng/auth/session.md", "notes/Daily Note.md"} {
		if !slices.Contains(cat.Backlinks(dst), r) {
			t.Errorf("%s does not link to the target: %v", r, cat.Backlinks(dst))
		}
	}
	if catalogState(cat) != catalogState(load(t, e.fs)) {
		t.Errorf("catalog differs from a fresh load:\n%s\n---\n%s", catalogState(cat), catalogState(load(t, e.fs)))
	}
	var removed []string
	for _, ch := range e.changes {
		if ch.Removed {
			removed = append(removed, ch.Path)
		}
	}
	if len(e.changes) != 5 || !slices.Equal(removed, []string{src}) {
		t.Errorf("changes %+v", e.changes)
	}
}

func TestMergeFolderTitleForm(t *testing.T) {
	e := newEnv(t, fixture)
	a := one(t, e, api.Operation{Type: "MERGE", Path: "eng/billing", Title: "Old retry", MergeTarget: "eng/billing/invoice_retry.md", Reason: "r"})
	mustSucceed(t, a)
	if e.entry(t, "eng/billing/invoice_retry.md").Title != "Invoice retry" {
		t.Error("title form changed the target's title")
	}
}

func TestDelete(t *testing.T) {
	e := newEnv(t, fixture)
	a := one(t, e, api.Operation{Type: "DELETE", Path: "eng/billing", Title: "Old retry", Reason: "obsolete"})
	mustSucceed(t, a)
	want := []string{"eng/auth/login.md", "eng/auth/session.md", "eng/billing/invoice_retry.md", "notes/Daily Note.md"}
	if !slices.Equal(a.BrokenRelations, want) {
		t.Errorf("broken relations %v, want %v", a.BrokenRelations, want)
	}
	if _, err := e.fs.ReadFile("eng/billing/old_retry.md"); err == nil {
		t.Error("still on disk")
	}
	if _, ok := e.c.Catalog.Get("eng/billing/old_retry.md"); ok {
		t.Error("still in catalog")
	}
	if len(e.changes) != 1 || !e.changes[0].Removed {
		t.Errorf("changes %+v", e.changes)
	}
	// A broken file can be deleted by naming it.
	mustSucceed(t, one(t, e, api.Operation{Type: "DELETE", Path: "eng/billing/broken.md", Reason: "junk"}))
	if _, broken := e.c.Catalog.Broken("eng/billing/broken.md"); broken {
		t.Error("still broken")
	}
}

// A folder DELETE removes the entries and context files below it, and the
// folders they leave empty; what the engine does not read (an image, a
// note it cannot parse) stays, with the folders holding it.
func TestDeleteFolder(t *testing.T) {
	files := fixtureWithSubtopic()
	files["eng/billing/attachments/image.png"] = "PNG"
	e := newEnv(t, files)
	a := one(t, e, api.Operation{Type: "DELETE", Path: "eng/billing", Reason: "drop billing"})
	mustSucceed(t, a)
	if a.Path != "eng/billing" || a.Message != "deleted folder eng/billing: 3 entries, 2 context files; "+
		"kept 2 files the engine does not read, and the folders holding them: eng/billing/attachments/image.png, eng/billing/broken.md; "+
		"removed entries still linked from 3 entries" {
		t.Errorf("applied %+v", a)
	}
	if want := []string{"eng/auth/login.md", "eng/auth/session.md", "notes/Daily Note.md"}; !slices.Equal(a.BrokenRelations, want) {
		t.Errorf("broken %v", a.BrokenRelations)
	}
	var left []string
	for p := range treeFiles(e.fs) {
		if strings.HasPrefix(p, "eng/billing/") {
			left = append(left, p)
		}
	}
	slices.Sort(left)
	if want := []string{"eng/billing/attachments/image.png", "eng/billing/broken.md"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	if _, err := e.fs.Stat("eng/billing/sub"); err == nil {
		t.Error("a folder left empty was kept")
	}
	if b, _ := e.fs.ReadFile("eng/billing/broken.md"); string(b) != files["eng/billing/broken.md"] {
		t.Error("the unparseable note changed")
	}
	if _, err := e.fs.Stat("eng/auth/login.md"); err != nil {
		t.Error("sibling removed")
	}
	if catalogState(e.c.Catalog) != catalogState(load(t, e.fs)) {
		t.Error("catalog differs from a fresh load")
	}
	removed := 0
	for _, ch := range e.changes {
		if ch.Removed {
			removed++
		}
	}
	if removed != 5 || len(e.changes) != 5 {
		t.Errorf("changes %+v", e.changes)
	}
}

// fifoReads reads the file at one path as the hosts read a FIFO or a
// socket named like a note: an invalid argument (RootFS and nodeFs read
// regular files only).
type fifoReads struct {
	host.FS
	at string
}

func (f fifoReads) ReadFile(p string) ([]byte, error) {
	if p == f.at {
		return nil, fmt.Errorf("read %s: not a regular file: %w", p, host.ErrInvalid)
	}
	return f.FS.ReadFile(p)
}

// A folder MOVE carries a FIFO or a socket named like a note by a rename,
// which reads nothing, where it failed whole reading it ("invalid
// argument", then "not a regular file"). A MOVE that must copy (its
// renames cannot reach another device) cannot read it: it fails whole,
// changing nothing, and says why.
func TestMoveFolderCarriesAFIFO(t *testing.T) {
	files := map[string]string{
		"ops/pager/rotation.md": "---\ntitle: Rotation\n---\n\n## Narrative\nThe pager rotates weekly.\n",
		"ops/pager/fifo.md":     "",
	}
	op := api.Operation{Type: "MOVE", Path: "ops/pager", To: "eng/pager", Reason: "eng owns it"}
	e := newEnv(t, files)
	e.c.FS = fifoReads{FS: e.fs, at: "ops/pager/fifo.md"}
	e.c.Catalog = load(t, e.c.FS)
	a := one(t, e, op)
	mustSucceed(t, a)
	if want := "moved folder ops/pager to eng/pager: 1 entry, 0 context files, 1 other file; rewrote 0 links in 0 entries"; a.Message != want {
		t.Errorf("message %q\nwant %q", a.Message, want)
	}
	if _, err := e.fs.Stat("eng/pager/fifo.md"); err != nil {
		t.Errorf("the FIFO was not carried: %v", err)
	}
	if _, err := e.fs.Stat("ops/pager"); err == nil {
		t.Error("the emptied folder ops/pager is left")
	}

	e = newEnv(t, files)
	before := treeFiles(e.fs)
	e.c.FS = otherDevice{FS: fifoReads{FS: e.fs, at: "ops/pager/fifo.md"}, mount: "eng"}
	e.c.Catalog = load(t, e.c.FS)
	a = one(t, e, op)
	if a.Status != "failed" || !strings.Contains(a.Message, "cannot carry ops/pager/fifo.md: a rename cannot carry it to eng/pager/fifo.md, on another device (a mount inside the tree), and it is not a regular file") {
		t.Errorf("MOVE to another device of a folder holding a FIFO: %s %q", a.Status, a.Message)
	}
	if d := diffFiles(before, treeFiles(e.fs)); d != "" {
		t.Errorf("the refused MOVE changed the tree: %s", d)
	}
}

// A FIFO or a socket named like a note (x.md) is a file the engine does
// not read: a folder DELETE keeps it, with its folder, where the DELETE
// failed whole reading it ("read ops/pager/fifo.md: invalid argument").
func TestDeleteFolderKeepsAFIFO(t *testing.T) {
	e := newEnv(t, map[string]string{
		"ops/pager/rotation.md": "---\ntitle: Rotation\n---\n\n## Narrative\nThe pager rotates weekly.\n",
		"ops/pager/fifo.md":     "",
	})
	e.c.FS = fifoReads{FS: e.fs, at: "ops/pager/fifo.md"}
	e.c.Catalog = load(t, e.c.FS)
	a := one(t, e, api.Operation{Type: "DELETE", Path: "ops/pager", Reason: "drop the pager"})
	mustSucceed(t, a)
	if want := "deleted folder ops/pager: 1 entry, 0 context files; kept 1 file the engine does not read, and the folders holding them: ops/pager/fifo.md"; a.Message != want {
		t.Errorf("message %q\nwant %q", a.Message, want)
	}
	if _, err := e.fs.Stat("ops/pager/fifo.md"); err != nil {
		t.Errorf("the FIFO is gone: %v", err)
	}
}

// A folder that holds what the host does not list to the engine (a
// dot-file, a symbolic link) cannot be removed; the DELETE says why in
// words, where it gave the host's code ("invalid argument").
func TestDeleteFolderKeptSaysWhy(t *testing.T) {
	e := newEnv(t, map[string]string{
		"ops/pager.md": "---\ntitle: Pager\n---\n\n## Narrative\nThe pager rotates weekly.\n",
		"ops/.keep":    "",
	})
	a := one(t, e, api.Operation{Type: "DELETE", Path: "ops", Reason: "drop ops"})
	mustSucceed(t, a)
	if want := "deleted folder ops: 1 entry, 0 context files (folder ops kept: it holds files the engine does not list, such as dot-files and symbolic links)"; a.Message != want {
		t.Errorf("message %q\nwant %q", a.Message, want)
	}
}

func TestSummaryAndAudit(t *testing.T) {
	e := newEnv(t, fixture)
	res := e.c.Apply([]api.Operation{
		{Type: "ADD", Path: "ops/oncall", Title: "Pager", Reason: "r1"},
		{Type: "UPDATE", Path: "ops/oncall/pager.md", Summary: "s", Reason: "r2"},
		{Type: "UPSERT", Path: "ops/oncall", Title: "Pager", Reason: "r3"},
		{Type: "MERGE", Path: "eng/billing/old_retry.md", MergeTarget: "eng/billing/invoice_retry.md", Reason: "r4"},
		{Type: "DELETE", Path: "ops/oncall/pager.md", Reason: "r5"},
		{Type: "DELETE", Path: "ops/oncall/pager.md", Reason: "r6"},
		{Type: "BOGUS", Path: "x", Reason: "r7"},
	})
	if res.Summary != (api.Summary{Added: 1, Updated: 2, Merged: 1, Deleted: 1, Failed: 2}) {
		t.Errorf("summary %+v", res.Summary)
	}
	lines := auditLines(t, e.fs)
	if len(lines) != 7 {
		t.Fatalf("audit %d lines", len(lines))
	}
	for i, l := range lines {
		a := res.Applied[i]
		if l.Op != a.Type || l.Path != a.Path || l.Status != a.Status || l.Message != a.Message || l.Time != "2026-03-01T08:00:00Z" || l.Reason == "" {
			t.Errorf("line %d %+v vs %+v", i, l, a)
		}
	}
	if lines[5].Status != api.StatusFailed || lines[6].Op != "BOGUS" {
		t.Errorf("%+v", lines[5:])
	}
	// A second call appends.
	e.c.Apply([]api.Operation{{Type: "DELETE", Path: "nope/x.md", Reason: "r8"}})
	if lines = auditLines(t, e.fs); len(lines) != 8 || lines[7].Reason != "r8" {
		t.Errorf("append: %+v", lines)
	}
	if b, _ := json.Marshal(res.API()); !strings.Contains(string(b), `"summary":{"added":1,"updated":2,"merged":1,"deleted":1,"moved":0,"failed":2}`) {
		t.Errorf("json %s", b)
	}
}

func TestSizeLimitOnUpdate(t *testing.T) {
	e := newEnv(t, fixture)
	e.c.MaxFileBytes = 2000
	a := one(t, e, api.Operation{Type: "UPDATE", Path: "eng/auth/session.md", Content: api.Content{Snippets: []string{strings.Repeat("y", 3000)}}, Reason: "r"})
	if a.Status != api.StatusFailed || !strings.Contains(a.Message, "over the 2000-byte limit") {
		t.Errorf("%+v", a)
	}
}

// A log grown past auditRotateBytes is renamed to a dated file before the
// next curate writes, and two rotations in one second keep both logs.
func TestAuditRotation(t *testing.T) {
	e := newEnv(t, fixture)
	big := strings.Repeat(`{"op":"ADD","path":"x/y/z.md","status":"success"}`+"\n", auditRotateBytes/50+1)
	if err := e.fs.WriteFile(AuditPath, []byte(big)); err != nil {
		t.Fatal(err)
	}
	e.c.Apply([]api.Operation{{Type: "DELETE", Path: "nope/x.md", Reason: "r1"}})
	rotated := ".arbor/" + RotatedAuditName(tNow)
	if data, err := e.fs.ReadFile(rotated); err != nil || string(data) != big {
		t.Fatalf("rotated log %s: %d bytes, %v; want the old log unchanged", rotated, len(data), err)
	}
	if lines := auditLines(t, e.fs); len(lines) != 1 || lines[0].Reason != "r1" {
		t.Fatalf("new log %+v, want the one new line", lines)
	}
	if err := e.fs.WriteFile(AuditPath, []byte(big)); err != nil {
		t.Fatal(err)
	}
	e.c.Apply([]api.Operation{{Type: "DELETE", Path: "nope/x.md", Reason: "r2"}})
	second := strings.TrimSuffix(rotated, ".jsonl") + "_2.jsonl"
	if data, err := e.fs.ReadFile(second); err != nil || string(data) != big {
		t.Fatalf("second rotation %s: %d bytes, %v", second, len(data), err)
	}
	if data, _ := e.fs.ReadFile(rotated); string(data) != big {
		t.Fatal("the first rotated log was overwritten")
	}
}

// hugeFiles is an FS whose Stat says the files of sizes are that large,
// and which fails the test when one of them is read whole.
type hugeFiles struct {
	host.FS
	t     *testing.T
	sizes map[string]int64
}

func (f hugeFiles) Stat(p string) (host.DirEntry, error) {
	fi, err := f.FS.Stat(p)
	if n, ok := f.sizes[p]; ok && err == nil {
		fi.Size = n
	}
	return fi, err
}

func (f hugeFiles) ReadFile(p string) ([]byte, error) {
	if _, ok := f.sizes[p]; ok {
		f.t.Errorf("%s was read whole", p)
		return nil, fmt.Errorf("read %s: out of memory: %w", p, host.ErrIO)
	}
	return f.FS.ReadFile(p)
}

// A folder MOVE carries the files it does not edit by renames, unread:
// a 1.5 GB video, or 300 MiB of stills, move to their new place, where
// reading them ran the engine out of memory part way and left a copy
// beside the original (then refused them). A MOVE whose renames cannot
// reach the destination (another device) copies, reading each file: one
// too large for that, or files too large together, refuse it before
// anything is read or written, the renames it made undone. An UPDATE of
// a note grown past the size limit does not read it either.
func TestLargeFilesAreNotReadWhole(t *testing.T) {
	const note = "---\ntitle: Clip notes\n---\n\n## Narrative\nThe launch video.\n"
	files := map[string]string{
		"media/clips/clip_notes.md": note,
		"media/clips/launch.mp4":    "x",
		"media/stills/a.png":        "x",
		"media/stills/b.png":        "x",
		"media/stills/c.png":        "x",
		"media/stills/d.png":        "x",
		"media/stills/e.png":        "x",
		"ops/log.md":                "---\ntitle: Log\n---\n\n## Narrative\nStarted.\n",
	}
	sizes := map[string]int64{"media/clips/launch.mp4": 1500 << 20}
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		sizes["media/stills/"+p+".png"] = 60 << 20
	}
	for p, n := range maps.Clone(sizes) {
		sizes[strings.Replace(p, "media/", "archive/", 1)] = n // read at its new place, it counts too
	}
	e := newEnv(t, files)
	before := treeFiles(e.fs)
	e.c.FS = hugeFiles{FS: e.fs, t: t, sizes: sizes}
	mustSucceed(t, one(t, e, api.Operation{Type: "MOVE", Path: "media/clips", To: "archive/clips", Reason: "archive"}))
	mustSucceed(t, one(t, e, api.Operation{Type: "MOVE", Path: "media/stills", To: "archive/stills", Reason: "archive"}))
	got := treeFiles(e.fs)
	for p, s := range before {
		if np := strings.Replace(p, "media/", "archive/", 1); got[np] != s {
			t.Errorf("%s is not at %s as it was", p, np)
		}
		if _, ok := got[p]; ok && strings.HasPrefix(p, "media/") {
			t.Errorf("%s is left at its old place", p)
		}
	}

	e = newEnv(t, files)
	e.c.FS = otherDevice{FS: hugeFiles{FS: e.fs, t: t, sizes: sizes}, mount: "media/clips"}
	a := one(t, e, api.Operation{Type: "MOVE", Path: "media/clips", To: "archive/clips", Reason: "archive"})
	if want := "cannot move media/clips to archive/clips: a rename cannot carry its files there, on another device (a mount inside the tree), and a copy reads each file whole: media/clips/launch.mp4 is 1500.0 MiB, over the 64.0 MiB a MOVE copies; move that file by hand first"; a.Status != "failed" || !strings.HasPrefix(a.Message, want) {
		t.Errorf("MOVE to another device of a folder holding 1.5 GB: %s %q", a.Status, a.Message)
	}
	e.c.FS = otherDevice{FS: hugeFiles{FS: e.fs, t: t, sizes: sizes}, mount: "archive"}
	a = one(t, e, api.Operation{Type: "MOVE", Path: "media/stills", To: "archive/stills", Reason: "archive"})
	if a.Status != "failed" || !strings.Contains(a.Message, "a copy reads each file whole: its files hold 300.0 MiB, over the 256.0 MiB a MOVE copies at once") {
		t.Errorf("MOVE to another device of a folder of 300 MiB: %s %q", a.Status, a.Message)
	}
	if d := diffFiles(before, treeFiles(e.fs)); d != "" {
		t.Errorf("the refused MOVEs changed the tree: %s", d)
	}
	e.c.FS = hugeFiles{FS: e.fs, t: t, sizes: map[string]int64{"ops/log.md": 1500 << 20}}
	a = one(t, e, api.Operation{Type: "UPDATE", Path: "ops/log.md", Content: api.Content{Narrative: &api.Narrative{Text: "Stopped."}}, Reason: "r"})
	if a.Status != "conflict" || !strings.Contains(a.Message, "ops/log.md grew to 1500.0 MiB on disk since this session read it, over the 1.0 MiB limit of an entry") {
		t.Errorf("UPDATE of a note grown past the limit: %s %q", a.Status, a.Message)
	}
}
