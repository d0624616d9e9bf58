package merge

import (
	"bytes"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

func b(s string) *[]byte {
	x := []byte(s)
	return &x
}

func TestText3(t *testing.T) {
	cases := []struct {
		name, base, ours, theirs, want string
		conflicts                      int
	}{
		{"theirs only", "a\nb\nc\n", "a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n", 0},
		{"ours only", "a\nb\nc\n", "a\nb\nC\n", "a\nb\nc\n", "a\nb\nC\n", 0},
		{"both, apart", "a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nc\nD\n", "A\nb\nc\nD\n", 0},
		{"both alike", "a\nb\n", "a\nx\n", "a\nx\n", "a\nx\n", 0},
		{"both appended", "a\n", "a\nfrom ours\n", "a\nfrom theirs\n", "a\nfrom ours\nfrom theirs\n", 0},
		{"both appended, sorted", "a\n", "a\nzz\n", "a\nyy\n", "a\nyy\nzz\n", 0},
		{"appended, a line shared", "a\n", "a\nshared\nx\n", "a\nshared\ny\n", "a\nshared\nx\ny\n", 0},
		{"a true conflict", "a\nb\nc\n", "a\nB1\nc\n", "a\nB2\nc\n", "a\nB1\nc\n", 1},
		{"delete against change", "a\nb\nc\n", "a\nc\n", "a\nB\nc\n", "a\nc\n", 1},
		{"one deleted, other unchanged", "a\nb\nc\n", "a\nc\n", "a\nb\nc\n", "a\nc\n", 0},
	}
	for _, c := range cases {
		got, cs := Text3(c.base, c.ours, c.theirs)
		if got != c.want || len(cs) != c.conflicts {
			t.Errorf("%s: Text3 = %q with %d conflicts, want %q with %d", c.name, got, len(cs), c.want, c.conflicts)
		}
	}
	_, cs := Text3("a\nb\nc\n", "a\nB1\nc\n", "a\nB2\nc\n")
	if cs[0] != (Conflict{Base: "b\n", Ours: "B1\n", Theirs: "B2\n"}) {
		t.Errorf("conflict = %+v", cs[0])
	}
}

func TestField3LastLineWithoutBreak(t *testing.T) {
	got, cs := field3("a\nb", "a\nb\nc", "a\nb\nd")
	if got != "a\nb\nc\nd" || len(cs) != 0 {
		t.Errorf("field3 = %q, %d conflicts; want both appended lines", got, len(cs))
	}
}

func TestList3(t *testing.T) {
	cases := []struct {
		name                     string
		base, ours, theirs, want []string
	}{
		{"added on both", []string{"a"}, []string{"a", "b"}, []string{"a", "c"}, []string{"a", "b", "c"}},
		{"removed on one", []string{"a", "b"}, []string{"a"}, []string{"a", "b", "c"}, []string{"a", "c"}},
		{"removed on both", []string{"a", "b"}, []string{"a"}, []string{"a"}, []string{"a"}},
		{"no base", nil, []string{"x", "y"}, []string{"y", "z"}, []string{"x", "y", "z"}},
		{"replaced on both", []string{"a", "b", "c"}, []string{"a", "x", "c"}, []string{"a", "y", "c"}, []string{"a", "x", "y", "c"}},
	}
	for _, c := range cases {
		got := list3(c.base, c.ours, c.theirs)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: list3 = %v, want %v", c.name, got, c.want)
		}
		if back := list3(c.base, c.theirs, c.ours); strings.Join(back, ",") != strings.Join(got, ",") {
			t.Errorf("%s: not symmetric: %v and %v", c.name, got, back)
		}
	}
}

const baseEntry = `---
title: Invoice Retry Policy
summary: Failed invoices are retried.
tags: [billing, policy]
related: [eng/billing/webhooks.md]
createdAt: 2025-03-11T14:05:00Z
updatedAt: 2025-03-11T14:05:00Z
importance: 60
owner: billing
---

## Reason
record the policy

## Narrative
### Rules
- A failed invoice is retried three times.
- Then it is marked uncollectible.

## Facts
- **retries**: a failed invoice is retried 3 times [policy]
`

// edit replaces each old with its new in s, failing the test when one is
// missing (so a fixture's typo cannot pass as an unchanged side).
func edit(t *testing.T, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("edit: %q not in the text", pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

func mergeOne(t *testing.T, p string, base, ours, theirs *[]byte) api.MergedFile {
	t.Helper()
	res, err := Files(api.MergeParams{Files: []api.MergeFile{{Path: p, Base: base, Ours: ours, Theirs: theirs}}, Ours: "local", Theirs: "origin/main"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 {
		t.Fatalf("merge of one file answered %d", len(res.Files))
	}
	return res.Files[0]
}

func parse(t *testing.T, f api.MergedFile) *tree.Entry {
	t.Helper()
	if f.Content == nil {
		t.Fatalf("%s: no content (%s: %s)", f.Path, f.Status, f.Message)
	}
	e, err := tree.ParseEntry(f.Path, *f.Content)
	if err != nil {
		t.Fatalf("merged entry does not parse: %v\n%s", err, *f.Content)
	}
	if again := tree.Render(e); !bytes.Equal(again, *f.Content) {
		t.Errorf("the merged entry is not in canonical form:\n%s\nrenders as\n%s", *f.Content, again)
	}
	return e
}

func TestEntryByRule(t *testing.T) {
	ours := edit(t, baseEntry,
		"tags: [billing, policy]", "tags: [billing, policy, dunning]",
		"updatedAt: 2025-03-11T14:05:00Z", "updatedAt: 2025-06-01T00:00:00Z",
		"importance: 60", "importance: 70",
		"- Then it is marked uncollectible.", "- Then it is marked uncollectible.\n- Support is told.",
		"## Facts\n", "## Facts\n- **escalation**: support is told after the last retry\n",
	)
	theirs := edit(t, baseEntry,
		"tags: [billing, policy]", "tags: [billing, stripe]",
		"updatedAt: 2025-03-11T14:05:00Z", "updatedAt: 2025-05-01T00:00:00Z",
		"createdAt: 2025-03-11T14:05:00Z", "createdAt: 2025-01-01T00:00:00Z",
		"importance: 60", "importance: 65",
		"- A failed invoice is retried three times.", "- A failed invoice is retried three times, 1, 3 and 7 days apart.",
		"owner: billing", "owner: payments",
		"[policy]\n", "[policy]\n- **provider**: Stripe sends the failure webhook\n",
	)
	f := mergeOne(t, "eng/billing/invoice_retry_policy.md", b(baseEntry), b(ours), b(theirs))
	if f.Status != api.MergeMerged {
		t.Fatalf("status %s (%s), want merged", f.Status, f.Message)
	}
	e := parse(t, f)
	if got := strings.Join(e.Tags, ","); got != "billing,dunning,stripe" {
		t.Errorf("tags = %s: policy was removed by theirs, dunning and stripe added", got)
	}
	if got := e.UpdatedAt.Format("2006-01-02"); got != "2025-06-01" {
		t.Errorf("updatedAt = %s, want the latest", got)
	}
	if got := e.CreatedAt.Format("2006-01-02"); got != "2025-01-01" {
		t.Errorf("createdAt = %s, want the earliest", got)
	}
	extra := map[string]string{}
	for _, kv := range e.Extra {
		extra[kv.Key] = kv.Value
	}
	if extra["importance"] != "70" || extra["owner"] != "payments" {
		t.Errorf("front matter = %v: importance takes the max, owner theirs' change", extra)
	}
	want := "- A failed invoice is retried three times, 1, 3 and 7 days apart.\n- Then it is marked uncollectible.\n- Support is told."
	if e.Narrative.Rules != want {
		t.Errorf("rules = %q, want %q", e.Narrative.Rules, want)
	}
	var subjects []string
	for _, x := range e.Facts {
		subjects = append(subjects, x.Subject)
	}
	if got := strings.Join(subjects, ","); got != "escalation,retries,provider" {
		t.Errorf("facts = %s, want the union", got)
	}
	if e.Conflicted() {
		t.Error("a clean merge has a conflict section")
	}
}

func TestEntryConflictKeepsBoth(t *testing.T) {
	ours := edit(t, baseEntry, "retried three times.", "retried four times.", "summary: Failed invoices are retried.", "summary: Retried four times.")
	theirs := edit(t, baseEntry, "retried three times.", "retried twice.", "summary: Failed invoices are retried.", "summary: Retried twice, with `backoff`.")
	f := mergeOne(t, "eng/billing/invoice_retry_policy.md", b(baseEntry), b(ours), b(theirs))
	if f.Status != api.MergeConflict || strings.Join(f.Conflicts, ",") != "summary,narrative.rules" {
		t.Fatalf("status %s, conflicts %v; want a conflict in summary and narrative.rules", f.Status, f.Conflicts)
	}
	e := parse(t, f)
	if !e.Conflicted() {
		t.Fatal("no conflict section")
	}
	if e.Summary != "Retried four times." || !strings.Contains(e.Narrative.Rules, "retried four times.") {
		t.Errorf("the entry keeps ours: summary %q, rules %q", e.Summary, e.Narrative.Rules)
	}
	text := string(*f.Content)
	for _, s := range []string{"retried four times.", "retried twice.", "Retried twice, with `backoff`.", "**local**", "**origin/main**"} {
		if !strings.Contains(text, s) {
			t.Errorf("the merged entry lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "<<<<<<<") || strings.Contains(text, ">>>>>>>") {
		t.Error("git conflict markers in the result")
	}
	// Merging it again with a further change keeps one conflict section.
	later := edit(t, theirs, "retried twice.", "retried twice, then escalated.")
	g := mergeOne(t, f.Path, b(theirs), f.Content, b(later))
	if n := strings.Count(string(*g.Content), "## "+tree.ConflictHeading); n != 1 {
		t.Errorf("%d conflict sections after a second merge, want 1:\n%s", n, *g.Content)
	}
	resolved, had := parse(t, g).WithoutConflict()
	if !had || resolved.Conflicted() {
		t.Error("WithoutConflict did not drop the section")
	}
}

func TestEditBeatsDelete(t *testing.T) {
	ours := edit(t, baseEntry, "three times", "four times")
	f := mergeOne(t, "eng/a.md", b(baseEntry), b(ours), nil)
	if f.Status != api.MergeKept || f.Content == nil || string(*f.Content) != ours || !strings.Contains(f.Message, "deleted by origin/main") {
		t.Errorf("edit against delete: %s %q", f.Status, f.Message)
	}
	g := mergeOne(t, "eng/a.md", b(baseEntry), nil, b(ours))
	if g.Status != api.MergeKept || g.Content == nil || string(*g.Content) != ours {
		t.Errorf("delete against edit: %s %q", g.Status, g.Message)
	}
	if d := mergeOne(t, "eng/a.md", b(baseEntry), nil, b(baseEntry)); d.Status != api.MergeDeleted || d.Content != nil {
		t.Errorf("delete against nothing: %s", d.Status)
	}
}

func TestAddedOnBoth(t *testing.T) {
	a := "---\ntitle: Pager\ntags: [ops]\n---\n\n## Facts\n- **pager**: the pager rotates weekly\n"
	c := "---\ntitle: Pager\ntags: [oncall]\n---\n\n## Facts\n- **handover**: handover is on Monday\n"
	e := parse(t, mergeOne(t, "ops/pager.md", nil, b(a), b(c)))
	if strings.Join(e.Tags, ",") != "oncall,ops" && strings.Join(e.Tags, ",") != "ops,oncall" || len(e.Facts) != 2 {
		t.Errorf("add/add: tags %v, %d facts; want both", e.Tags, len(e.Facts))
	}
}

func TestMoveFollowsChange(t *testing.T) {
	changed := edit(t, baseEntry, "three times", "four times")
	res, err := Files(api.MergeParams{Files: []api.MergeFile{
		{Path: "eng/billing/invoice_retry_policy.md", Base: b(baseEntry), Ours: nil, Theirs: b(changed)},
		{Path: "finance/invoice_retry_policy.md", Ours: b(baseEntry)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]api.MergedFile{}
	for _, f := range res.Files {
		byPath[f.Path] = f
	}
	moved := byPath["finance/invoice_retry_policy.md"]
	if moved.Status != api.MergeMoved || moved.From != "eng/billing/invoice_retry_policy.md" || moved.Content == nil || string(*moved.Content) != changed {
		t.Errorf("the moved entry: %+v", moved)
	}
	if old := byPath["eng/billing/invoice_retry_policy.md"]; old.Status != api.MergeDeleted || old.Content != nil {
		t.Errorf("the old path: %+v", old)
	}
}

func TestContextRegenerated(t *testing.T) {
	ctx := "# Billing\n\n## Overview\nInvoices.\n"
	changed := edit(t, baseEntry, "three times", "four times")
	res, err := Files(api.MergeParams{Files: []api.MergeFile{
		{Path: "eng/billing/context.md", Base: b(ctx), Ours: b(ctx)},
		{Path: "eng/billing/a.md", Base: b(baseEntry), Ours: b(changed)},
		{Path: "eng/context.md", Base: b("# Eng\n"), Ours: nil, Theirs: nil},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range res.Files {
		got[f.Path] = f.Status
		if f.Path == "eng/billing/context.md" && (f.Content == nil || string(*f.Content) != ctx) {
			t.Errorf("billing context: %+v", f)
		}
		if f.Path == "eng/context.md" && (f.Content == nil || string(*f.Content) != string(tree.NewContext("eng"))) {
			t.Errorf("eng context: %+v", f)
		}
	}
	if got["eng/billing/context.md"] != api.MergeRegenerated || got["eng/context.md"] != api.MergeRegenerated || got["eng/billing/a.md"] != api.MergeKept {
		t.Errorf("statuses %v", got)
	}
}

func TestContextConflictParses(t *testing.T) {
	base := "# Billing\n\n## Overview\nInvoices.\n"
	f := mergeOne(t, "eng/billing/context.md", b(base), b("# Billing\n\n## Overview\nInvoices and refunds.\n"), b("# Billing\n\n## Overview\nInvoices, monthly.\n"))
	if f.Status != api.MergeConflict {
		t.Fatalf("status %s", f.Status)
	}
	c, err := tree.ParseContext(f.Path, *f.Content)
	if err != nil || !c.Conflicted() || !strings.Contains(c.Body, "Invoices, monthly.") || !strings.Contains(c.Body, "Invoices and refunds.") {
		t.Errorf("context conflict: %v\n%s", err, *f.Content)
	}
}

func TestNotTextGetsACopy(t *testing.T) {
	res, err := Files(api.MergeParams{Files: []api.MergeFile{{Path: "img/logo.png", Base: b("\x89PNG\x00a"), Ours: b("\x89PNG\x00b"), Theirs: b("\x89PNG\x00c")}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 || res.Files[0].Path != "img/logo.conflict.png" || string(*res.Files[0].Content) != "\x89PNG\x00c" ||
		res.Files[1].Status != api.MergeConflict || string(*res.Files[1].Content) != "\x89PNG\x00b" || res.Conflicts != 1 {
		t.Errorf("binary conflict: %+v", res)
	}
}

// A conflict copy is never named after a file the trees hold already: an
// earlier copy a person has not resolved yet stays as it is.
func TestCopyNotNamedAfterATakenPath(t *testing.T) {
	res, err := Files(api.MergeParams{Files: []api.MergeFile{{Path: "img/logo.png", Base: b("\x89PNG\x00a"), Ours: b("\x89PNG\x00b"), Theirs: b("\x89PNG\x00c")}},
		Taken: []string{"img/logo.conflict.png", "img/logo.conflict-2.png"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 || res.Files[0].Path != "img/logo.conflict-3.png" || res.Files[0].Status != api.MergeCopy {
		t.Errorf("copy beside earlier copies: %+v", res.Files)
	}
}

// Nor after a path given later in the files, in any order: the copy
// would take its place and the file given there would be dropped.
func TestCopyNotNamedAfterAGivenPath(t *testing.T) {
	res, err := Files(api.MergeParams{Files: []api.MergeFile{
		{Path: "img/logo.png", Base: b("\x89PNG\x00a"), Ours: b("\x89PNG\x00b"), Theirs: b("\x89PNG\x00c")},
		{Path: "img/logo.conflict.png", Theirs: b("\x89PNG\x00an earlier copy")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range res.Files {
		if f.Content != nil {
			got[f.Path] = string(*f.Content)
		}
	}
	if got["img/logo.conflict.png"] != "\x89PNG\x00an earlier copy" || got["img/logo.conflict-2.png"] != "\x89PNG\x00c" {
		t.Errorf("files: %q", got)
	}
}

// A copy of a file whose name is near the file system's limit of 255
// bytes is named within it: "name.conflict.ext" was longer, its write
// failed (ENAMETOOLONG), and every sync stopped at it until a person
// renamed the file. The cut keeps whole runes and the extension.
func TestCopyOfALongNameFitsTheFileSystem(t *testing.T) {
	long := strings.Repeat("n", 240) + strings.Repeat("é", 5) + ".txt"
	res, err := Files(api.MergeParams{Files: []api.MergeFile{{Path: "ops/" + long, Base: b("base\n"), Ours: b("ours\n"), Theirs: b("theirs\n")}},
		Taken: []string{"ops/" + strings.Repeat("n", 240) + "é.conflict.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	var copies []string
	for _, f := range res.Files {
		if f.Status == api.MergeCopy {
			copies = append(copies, f.Path)
			if string(*f.Content) != "theirs\n" {
				t.Errorf("copy holds %q", *f.Content)
			}
		}
	}
	if len(copies) != 1 {
		t.Fatalf("copies: %q", copies)
	}
	name := path.Base(copies[0])
	if len(name) > 255 || !utf8.ValidString(name) || !strings.HasSuffix(name, ".conflict-2.txt") || !strings.HasPrefix(name, strings.Repeat("n", 240)) {
		t.Errorf("copy named %q (%d bytes)", name, len(name))
	}
}

func TestBadParams(t *testing.T) {
	for _, p := range []string{"", "../x.md", "/abs.md", "a//b.md", "a\\b.md", "a/./b.md"} {
		_, err := Files(api.MergeParams{Files: []api.MergeFile{{Path: p}}})
		if !errors.Is(err, api.ErrInvalidPath) {
			t.Errorf("path %q: err %v, want invalid_path", p, err)
		}
	}
	if _, err := Files(api.MergeParams{Files: []api.MergeFile{{Path: ".gitignore", Ours: b("x\n")}}}); err != nil {
		t.Errorf("a dot-file is a file of the repository: %v", err)
	}
	var ae *api.Error
	if _, err := Files(api.MergeParams{Files: []api.MergeFile{{Path: "a.md"}, {Path: "a.md"}}}); !errors.As(err, &ae) || ae.Code != api.CodeInvalidParams {
		t.Errorf("a path given twice: %v", err)
	}
}

// A comment added on one side and one removed on the other are both in
// the merge of an entry both sides changed.
func TestEntryComments(t *testing.T) {
	kv := func(k, v string) tree.KeyValue { return tree.KeyValue{Key: k, Value: v} }
	base := &tree.Entry{Title: "T", Comments: []tree.KeyValue{kv("title", " old"), kv("", " shared")}}
	ours := &tree.Entry{Title: "T", Summary: "ours", Comments: []tree.KeyValue{kv("title", " old"), kv("", " shared"), kv("owner", " ours")}}
	theirs := &tree.Entry{Title: "T", Tags: []string{"theirs"}, Comments: []tree.KeyValue{kv("", " shared")}}
	e, cs := entries(base, ours, theirs)
	want := []tree.KeyValue{kv("", " shared"), kv("owner", " ours")}
	if len(cs) != 0 || len(e.Comments) != len(want) || e.Comments[0] != want[0] || e.Comments[1] != want[1] {
		t.Fatalf("comments %q, conflicts %v", e.Comments, cs)
	}
}

// Two teammates who ingest one folder write the same piece at different
// times: the entry, added on both sides or changed from an older piece on
// both, is one side whole, still as an ingest wrote it, so that later
// ingests on either machine keep following the source. Different pieces,
// or a version a person edited, merge field by field as before.
func TestSamePieceIngestedOnBoth(t *testing.T) {
	const p = "src/deploy/deploy.md"
	ingested := func(at, text, piece string) []byte {
		t.Helper()
		e, err := tree.ParseEntry(p, []byte("---\ntitle: Deploy\ncreatedAt: "+at+"\nupdatedAt: "+at+"\n---\n\n## Reason\ningest src/deploy.md\n\n## Raw Concept\n**Files:** src/deploy.md\n\n## Narrative\n"+text+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		tree.Stamp(e, piece)
		return tree.Render(e)
	}
	base := ingested("2026-01-01T09:00:00Z", "Send 5% of traffic.", "aa")
	for _, withBase := range []bool{false, true} {
		ours := ingested("2026-02-01T09:00:00Z", "Send 10% of traffic.", "bb")
		theirs := ingested("2026-02-01T09:00:02Z", "Send 10% of traffic.", "bb")
		var bp *[]byte
		if withBase {
			bp = &base
		}
		f := mergeOne(t, p, bp, &ours, &theirs)
		if f.Content == nil || !bytes.Equal(*f.Content, ours) && !bytes.Equal(*f.Content, theirs) {
			t.Fatalf("base %v: %s %q\n%s", withBase, f.Status, f.Message, deref(f.Content))
		}
		if _, intact, piece := tree.Ingested(*f.Content); !intact || piece != "bb" {
			t.Errorf("base %v: the merged entry is not as an ingest wrote it", withBase)
		}
		// Which side is ours does not change the result.
		if g := mergeOne(t, p, bp, &theirs, &ours); g.Content == nil || !bytes.Equal(*g.Content, *f.Content) {
			t.Errorf("base %v: the sides swapped give another version", withBase)
		}
	}
	// Another piece on one side: merged by fields (a conflict here).
	ours := ingested("2026-02-01T09:00:00Z", "Send 10% of traffic.", "bb")
	theirs := ingested("2026-02-01T09:00:02Z", "Send 20% of traffic.", "cc")
	if f := mergeOne(t, p, &base, &ours, &theirs); f.Status != api.MergeConflict {
		t.Errorf("two pieces: %s %q", f.Status, f.Message)
	}
	// A person's edit on one side is not the ingest's.
	edited := append(slices.Clone(ours), "\nA line of my own.\n"...)
	theirs = ingested("2026-02-01T09:00:02Z", "Send 10% of traffic.", "bb")
	if f := mergeOne(t, p, &base, &edited, &theirs); f.Status == api.MergeTheirs || !strings.Contains(deref(f.Content), "A line of my own.") {
		t.Errorf("an edit against the same piece: %s %q\n%s", f.Status, f.Message, deref(f.Content))
	}
}

func deref(b *[]byte) string {
	if b == nil {
		return "<nil>"
	}
	return string(*b)
}
