package ingest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/curate"
)

// TestNoteFrontMatter: a note's own front matter becomes its entry's.
func TestNoteFrontMatter(t *testing.T) {
	text := "---\ntitle: Stripe webhooks\ndescription: How we take Stripe's events.\ntags: [billing, stripe]\naliases: [hooks]\n" +
		"date: 2024-03-01\nupdated: 2024-05-02T10:00:00Z\nimportance: 80\nowner: ana\n---\n# Stripe webhooks\n\nRetry them.\n"
	ps, _, err := Split(api.SourceFile{Name: "notes/billing/stripe/webhooks.md", Content: text}, api.IngestOptions{})
	if err != nil || len(ps) != 1 {
		t.Fatalf("%d pieces, %v", len(ps), err)
	}
	p := ps[0]
	day := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	if p.Path() != "notes/billing/stripe/webhooks.md" || p.Title != "Stripe webhooks" || p.Summary != "How we take Stripe's events." ||
		!reflect.DeepEqual(p.Tags, []string{"billing", "stripe"}) || !reflect.DeepEqual(p.Keywords, []string{"hooks"}) ||
		!p.Created.Equal(day("2024-03-01T00:00:00Z")) || !p.Updated.Equal(day("2024-05-02T10:00:00Z")) ||
		p.Timestamp != "2024-03-01T00:00:00Z" || p.Text != "Retry them." || p.Task != "Note (line 13)" {
		t.Errorf("piece %+v", p)
	}
	if want := []api.KeyValue{{Key: "importance", Value: "80"}, {Key: "owner", Value: "ana"}}; !reflect.DeepEqual(p.Extra, want) {
		t.Errorf("extra %q, want %q", p.Extra, want)
	}
	op := p.Operation(api.OpAdd, "ingest x")
	if op.Summary != p.Summary || !reflect.DeepEqual(op.Content.Tags, p.Tags) || op.Note == nil || !op.Note.CreatedAt.Equal(p.Created) || len(op.Note.Extra) != 2 {
		t.Errorf("operation %+v", op)
	}
}

// TestNoteFrontMatterMalformed: a front matter that does not parse is a
// warning, and the note is still ingested with it as text.
func TestNoteFrontMatterMalformed(t *testing.T) {
	text := "---\ntitle: [unclosed\n---\nBody.\n"
	src, _, err := split("n.md", text, api.IngestOptions{})
	if err != nil || len(src.pieces) != 1 {
		t.Fatalf("%v", err)
	}
	if len(src.warnings) != 1 || !strings.Contains(src.warnings[0], "front matter not read") {
		t.Errorf("warnings %q", src.warnings)
	}
	if p := src.pieces[0]; p.Text != "```yaml\ntitle: [unclosed\n```\nBody." || p.Title != "n" {
		t.Errorf("piece %+v", p)
	}
}

// TestNoteLinks: markdown links and wikilinks between the notes of a call
// become relations to the entries the notes became, whichever comes first;
// links to notes not ingested stay text and leave the source without a
// hash, so that the next ingest resolves them.
func TestNoteLinks(t *testing.T) {
	m := newMemory(t)
	files := []api.SourceFile{
		md("notes/a.md", "See [b](billing/b.md), [[c]], [[Cee|the c note]], [gone](gone.md), [web](https://x.io/y.md) and `[[code]]`.\n"),
		md("notes/billing/b.md", "Back to [[notes/a]].\n\n```\n[[in a fence]]\n```\n"),
		md("notes/x/c.md", "---\naliases: [Cee]\n---\nC.\n"),
	}
	pl := m.planner(api.IngestOptions{})
	var plans []FilePlan
	for _, f := range files {
		fp, err := pl.Plan(f)
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, fp)
	}
	pl.Link(plans)
	rels := func(fp FilePlan) []string { return fp.Ops[0].Content.Relations }
	if got, want := rels(plans[0]), []string{"notes/billing/b.md", "notes/x/c.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("a relations %q, want %q", got, want)
	}
	if got, want := rels(plans[1]), []string{"notes/a/a.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("b relations %q, want %q", got, want)
	}
	if want := map[string][]string{"notes/a/a.md": {"gone.md"}}; !reflect.DeepEqual(plans[0].pending, want) || plans[1].pending != nil || plans[2].pending != nil {
		t.Errorf("pending: %v %v %v", plans[0].pending, plans[1].pending, plans[2].pending)
	}
	for _, fp := range plans {
		pl.Record(fp, m.apply(fp.Ops))
	}
	if a := m.man.Sources["notes/a.md"]; a.Hash == "" || !reflect.DeepEqual(a.Pending, map[string][]string{"notes/a/a.md": {"gone.md"}}) {
		t.Errorf("a's record: %+v", a)
	}
	// A later call resolves a link to a note recorded before.
	pl = m.planner(api.IngestOptions{})
	fp, _ := pl.Plan(md("notes/d.md", "[[b]] and [c](x/c.md)"))
	pl.Link([]FilePlan{fp})
	if got, want := rels(fp), []string{"notes/billing/b.md", "notes/x/c.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("d relations %q, want %q", got, want)
	}
}

// TestPendingLinks: a note whose link names a note not yet ingested (the
// CLI sends a folder in calls of 32 files) gets the relation when a later
// call brings that note, in that note's plan; then it is unchanged.
func TestPendingLinks(t *testing.T) {
	m := newMemory(t)
	a := md("notes/a.md", "See [[later]] and [[never]].\n")
	fpA := m.ingest(m.planner(api.IngestOptions{}), a)
	if len(fpA.Ops) != 1 || fpA.Ops[0].Content.Relations != nil {
		t.Fatalf("a: %+v", fpA.Ops)
	}
	pl := m.planner(api.IngestOptions{})
	fp, _ := pl.Plan(md("notes/sub/later.md", "Later.\n"))
	plans := []FilePlan{fp}
	pl.Link(plans)
	pl.Follow(plans, map[string]bool{"notes/sub/later.md": true})
	fp = plans[0]
	if len(fp.Follow) != 1 || fp.Follow[0].Type != api.OpUpdate || fp.Follow[0].Path != "notes/a/a.md" ||
		!reflect.DeepEqual(fp.Follow[0].Content.Relations, []string{"notes/sub/later.md"}) || fp.Follow[0].Reason != "ingest notes/a.md" {
		t.Fatalf("follow: %+v", fp.Follow)
	}
	pl.Record(fp, m.apply(fp.Ops))
	if failed := pl.RecordFollow(fp, []curate.Applied{{Applied: api.Applied{Status: api.StatusSuccess}}}); failed != 0 {
		t.Fatal(failed)
	}
	if rec := m.man.Sources["notes/a.md"]; !reflect.DeepEqual(rec.Pending, map[string][]string{"notes/a/a.md": {"[[never]]"}}) {
		t.Errorf("a still pending: %v", rec.Pending)
	}
	// Sent again, a is planned again while a link is pending, and its piece
	// now carries the relation: an UPDATE, once.
	fpA = m.ingest(m.planner(api.IngestOptions{}), a)
	if got := opList(fpA); !reflect.DeepEqual(got, []string{"UPDATE notes/a/a.md"}) || !reflect.DeepEqual(fpA.Ops[0].Content.Relations, []string{"notes/sub/later.md"}) {
		t.Errorf("a again: %q %+v", got, fpA.Ops)
	}
	if fpA = m.ingest(m.planner(api.IngestOptions{}), a); len(fpA.Ops) != 0 {
		t.Errorf("a a third time: %q", opList(fpA))
	}
}

// TestIngestFollowsMove: a moved ingested entry is updated where it lives
// when its source is ingested again, not written again at its old path.
func TestIngestFollowsMove(t *testing.T) {
	m := newMemory(t)
	m.ingest(m.planner(api.IngestOptions{}), md("notes/plan.md", "Ship it.\n"))
	e, ok := m.cat.Get("notes/plan/plan.md")
	if !ok {
		t.Fatal("not ingested")
	}
	// A MOVE: the same bytes at another path.
	moved := e.Clone()
	moved.Path = "work/q3/plan.md"
	m.cat.Delete(e.Path)
	m.put(moved)
	fp := m.ingest(m.planner(api.IngestOptions{}), md("notes/plan.md", "Ship it on Friday.\n"))
	if got := opList(fp); !reflect.DeepEqual(got, []string{"UPDATE work/q3/plan.md"}) {
		t.Fatalf("ops %q", got)
	}
	if _, ok := m.cat.Get("notes/plan/plan.md"); ok {
		t.Error("written again at its old path")
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for p := range m.man.Sources["notes/plan.md"].Entries {
			yield(p)
		}
	}); !reflect.DeepEqual(got, []string{"work/q3/plan.md"}) {
		t.Errorf("manifest entries %q", got)
	}
	// Unchanged again: nothing to do.
	if fp := m.ingest(m.planner(api.IngestOptions{}), md("notes/plan.md", "Ship it on Friday.\n")); len(fp.Ops) != 0 {
		t.Errorf("ops %q", opList(fp))
	}
}

// TestIngestFollowsMoveWithoutManifest: with the manifest lost, a moved
// entry is still found by its provenance and file name, and updated there;
// an entry renamed as well is the one left for the piece left.
func TestIngestFollowsMoveWithoutManifest(t *testing.T) {
	for _, to := range []string{"work/q3/plan.md", "work/q3/renamed.md"} {
		m := newMemory(t)
		m.ingest(m.planner(api.IngestOptions{}), md("notes/plan.md", "Ship it.\n"))
		e, _ := m.cat.Get("notes/plan/plan.md")
		moved := e.Clone()
		moved.Path = to
		m.cat.Delete(e.Path)
		m.put(moved)
		m.man = NewManifest()
		fp := m.ingest(m.planner(api.IngestOptions{}), md("notes/plan.md", "Ship it on Friday.\n"))
		if got := opList(fp); !reflect.DeepEqual(got, []string{"UPDATE " + to}) {
			t.Errorf("%s: ops %q", to, got)
		}
		if paths := m.cat.Paths(); !reflect.DeepEqual(paths, []string{to}) {
			t.Errorf("%s: entries %q", to, paths)
		}
	}
}

// TestLongNoteIsCutAtHeadings: a note over partBytes is cut into parts of
// whole sections while they fit, each part starting at a heading, with its
// lines, and titled by the sections it holds.
func TestLongNoteIsCutAtHeadings(t *testing.T) {
	body := strings.Repeat("word ", 1400) // 7,000 bytes
	text := "# Guide\n\nIntro.\n\n## One\n\n" + body + "\n\n## Two\n\n" + body + "\n\n## Three\n\n" + body + "\n"
	ps, _, err := Split(api.SourceFile{Name: "g.md", Content: text}, api.IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("%d parts", len(ps))
	}
	if p := ps[0]; !strings.HasPrefix(p.Text, "Intro.\n\n#### One\n\n") || !strings.HasSuffix(p.Text, "#### Two\n\n"+strings.TrimSpace(body)) ||
		p.Title != "Guide: One, Two (part 1 of 2)" || p.Name != "g_part_01" || p.Task != "Note (lines 3-11)" {
		t.Errorf("part 1: %q %q %q, %d bytes", p.Name, p.Title, p.Task, len(p.Text))
	}
	if p := ps[1]; p.Text != "#### Three\n\n"+strings.TrimSpace(body) || p.Title != "Guide: Three (part 2 of 2)" || p.Task != "Note (lines 13-15)" {
		t.Errorf("part 2: %q %q, %d bytes", p.Title, p.Task, len(p.Text))
	}
}

// A part of a long note is titled by the outermost headings among its
// lines and the heading it continues under, at most maxSections of them.
func TestSectionsOfAPart(t *testing.T) {
	heads := []heading{{2, 4, "Setup"}, {8, 5, "Linux"}, {12, 5, "macOS"}, {20, 4, "Deploy"}, {30, 4, "Rollback"}, {40, 4, "Canary"}, {50, 4, "Alerts"}}
	for _, c := range []struct {
		first, last int
		want        string
	}{
		{0, 1, ""},                              // the opening text, under no heading
		{0, 9, "Setup"},                         // the opening text and a section
		{8, 14, "Linux, macOS"},                 // two subsections, the first opening the part
		{9, 14, "Linux, macOS"},                 // continues Linux, and holds macOS
		{20, 45, "Deploy, Rollback, Canary"},    // three
		{20, 55, "Deploy, Rollback, Canary, …"}, // more than three
		{51, 60, "Alerts"},                      // continues the last
	} {
		if got := sections(heads, part{first: c.first, last: c.last}); got != c.want {
			t.Errorf("lines %d-%d: %q, want %q", c.first, c.last, got, c.want)
		}
	}
}

// TestWikilinkPrefersTheNoteNearby: of two notes a name means, a wikilink
// takes the one in the linking note's folder, else the shortest name.
func TestWikilinkPrefersTheNoteNearby(t *testing.T) {
	pl := newMemory(t).planner(api.IngestOptions{})
	var plans []FilePlan
	for _, f := range []api.SourceFile{
		md("work/deep/er/plan.md", "A."), md("home/plan.md", "B."), md("work/deep/er/todo.md", "[[plan]]"), md("todo.md", "[[Plan]]"),
	} {
		fp, err := pl.Plan(f)
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, fp)
	}
	pl.Link(plans)
	if got := plans[2].Ops[0].Content.Relations; !reflect.DeepEqual(got, []string{"work/deep/er/plan.md"}) {
		t.Errorf("nearby: %q", got)
	}
	if got := plans[3].Ops[0].Content.Relations; !reflect.DeepEqual(got, []string{"home/plan/plan.md"}) {
		t.Errorf("shortest: %q", got)
	}
}

// BenchmarkLinkNotes plans and links a folder of 2,000 notes of five links
// each: resolving is by index, not a scan of every note per link.
func BenchmarkLinkNotes(b *testing.B) {
	var files []api.SourceFile
	for i := range 2000 {
		var text strings.Builder
		fmt.Fprintf(&text, "# Note %d\n\n", i)
		for k := 1; k <= 5; k++ {
			fmt.Fprintf(&text, "See [[n%04d]] and more.\n", (i*7+k*13)%2000)
		}
		files = append(files, md(fmt.Sprintf("vault/topic%02d/n%04d.md", i%20, i), text.String()))
	}
	for b.Loop() {
		pl := newMemory(&testing.T{}).planner(api.IngestOptions{})
		plans := make([]FilePlan, len(files))
		for i, f := range files {
			plans[i], _ = pl.Plan(f)
		}
		pl.Link(plans)
	}
}

// TestGonePiecesTakenOverStay: an entry whose piece is gone from its
// source is deleted only while it is still the source's; one the user took
// over, or one that no longer parses, stays, and the record forgets it.
// (A note laid out anew, its sections gone, must not lose what the user
// made of them.)
func TestGonePiecesTakenOverStay(t *testing.T) {
	m := newMemory(t)
	v1 := md("notes.jsonl", `{"title":"Alpha","text":"a"}`+"\n"+`{"title":"Beta","text":"b"}`+"\n"+`{"title":"Gamma","text":"c"}`+"\n")
	m.ingest(m.planner(api.IngestOptions{}), v1)
	beta, _ := m.cat.Get("data/notes/beta.md")
	mine := beta.Clone()
	mine.Reason = "kept by hand"
	m.cat.Put(mine)
	m.cat.MarkBroken("data/notes/gamma.md", fmt.Errorf("bad YAML"))
	fp := m.ingest(m.planner(api.IngestOptions{}), md("notes.jsonl", `{"title":"Alpha","text":"a"}`+"\n"))
	if got := opList(fp); len(got) != 0 {
		t.Errorf("ops %q, want none", got)
	}
	if _, ok := m.cat.Get("data/notes/beta.md"); !ok {
		t.Error("the entry the user took over was deleted")
	}
	if rec := m.man.Sources["notes.jsonl"]; len(rec.Entries) != 1 {
		t.Errorf("record %v", rec.Entries)
	}
}
