package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// copyFixtures copies core/internal/ingest/testdata into dir/name (store.go one
// folder deeper) and adds files the command must skip or refuse.
func copyFixtures(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "core", "internal", "ingest", "testdata")
	list, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "inbox")
	for _, e := range list {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		name := e.Name()
		if name == "store.go" {
			name = filepath.Join("code", name)
		}
		writeFile(t, filepath.Join(in, name), string(b))
	}
	writeFile(t, filepath.Join(in, "photo.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	writeFile(t, filepath.Join(in, ".draft.md"), "# hidden\n")
	writeFile(t, filepath.Join(in, ".git", "config"), "[core]\n")
	writeFile(t, filepath.Join(in, "latin1.txt"), "caf\xe9 cr\xe8me \x93br\xfbl\xe9e\x94\n")
	writeFile(t, filepath.Join(in, "garbled.txt"), "caf\x81\n")
	return in
}

// TestIngestFolder ingests a folder of mixed files into a browsable tree:
// one line per file when not on a terminal, notes for what is skipped, a
// per-file error for bad input (exit 1), nothing written on a second run.
func TestIngestFolder(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	must(t, "", "init", root)
	in := copyFixtures(t, t.TempDir())

	r := arbor(t, "", "--root", root, "--fixed-time", fixedTime, "ingest", in)
	if r.code != 1 || !strings.Contains(r.stderr, "1 of 16 files failed") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"- skipped   inbox/.draft.md: hidden\n",
		"- skipped   inbox/.git: hidden\n",
		"- skipped   inbox/photo.png: binary file\n",
		"✗ failed    inbox/garbled.txt (text): bad input: neither UTF-8 nor Windows-1252 text: byte 0x81 at byte 3 (line 1); convert the file to UTF-8\n",
		"✓ added     inbox/latin1.txt (text): 1 entry, 1 added\n",
		"✓ added     inbox/guide.md (markdown): 1 entry, 1 added\n",
		"✓ added     inbox/invoice.eml (email): 1 entry, 1 added\n",
		"✓ added     inbox/code/store.go (go): 7 entries, 7 added\n",
		"✓ added     inbox/locomo_sample.json (chat): 6 entries, 6 added\n",
		"16 files (1 failed): 46 entries added, 0 updated, 0 deleted, 0 unchanged; 3 skipped\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}

	tree := must(t, "", "--root", root, "tree", "--depth", "2")
	for _, want := range []string{"calendar/", "inbox_team/", "caroline_and_melanie/", "session_01/", "chats/", "inbox_lme_sample/", "code/", "inbox_code_store/", "data/", "inbox_contacts/", "documents/", "inbox_latin1/", "inbox/", "guide/", "mail/", "2026_01/"} {
		if !strings.Contains(tree, want) {
			t.Errorf("tree lacks %s:\n%s", want, tree)
		}
	}
	show := must(t, "", "--root", root, "show", "code/inbox_code_store/method_store_get.md")
	if !strings.Contains(show, "inbox/code/store.go") || !strings.Contains(show, "func (s *Store) Get(id string)") {
		t.Errorf("show:\n%s", show)
	}
	// Windows-1252 is decoded: the quotes and accents are there.
	if show := must(t, "", "--root", root, "show", "documents/inbox_latin1/café_crème_brûlée.md"); !strings.Contains(show, "café crème “brûlée”") {
		t.Errorf("show latin1:\n%s", show)
	}
	q := must(t, "", "--root", root, "--fixed-time", fixedTime, "search", "canary traffic")
	if !strings.Contains(q, "inbox/guide/guide.md") {
		t.Errorf("search:\n%s", q)
	}

	// Again, as JSON: everything unchanged, nothing written.
	os.Remove(filepath.Join(in, "garbled.txt"))
	before := snapshot(t, root)
	out := must(t, "", "--root", root, "--fixed-time", "2026-03-01T00:00:00Z", "ingest", "--json", in)
	var rep struct {
		Files   []api.IngestFile `json:"files"`
		Skipped []struct{ Path, Reason string }
		Summary api.IngestSummary `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Summary != (api.IngestSummary{Files: 15, Unchanged: 46}) || len(rep.Skipped) != 3 {
		t.Errorf("second run: %+v, skipped %v", rep.Summary, rep.Skipped)
	}
	after := snapshot(t, root)
	if len(before) < 45 {
		t.Fatalf("snapshot holds %d files", len(before))
	}
	for p, s := range before {
		if after[p] != s {
			t.Errorf("%s changed on an unchanged ingest", p)
		}
	}
}

func TestIngestUsage(t *testing.T) {
	if r := arbor(t, "", "ingest"); r.code != 2 {
		t.Errorf("no path: exit %d", r.code)
	}
	root := t.TempDir()
	needEngine(t)
	must(t, "", "init", root)
	if r := arbor(t, "", "--root", root, "ingest", "--context-turns", "-1", root); r.code != 2 {
		t.Errorf("negative context: exit %d %s", r.code, r.stderr)
	}
	// The memory root is never ingested into itself.
	writeFile(t, filepath.Join(root, "notes", "a.md"), "# A\n\ntext\n")
	r := arbor(t, "", "--root", root, "ingest", filepath.Join(root, "notes"))
	if r.code != 1 || !strings.Contains(r.stderr, "is inside the memory root") || r.stdout != "" {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestIngestSymlinks compares sources and the root by their real paths:
// no spelling through a symbolic link ingests the root into itself, and a
// linked folder is read, named as written.
func TestIngestSymlinks(t *testing.T) {
	needEngine(t)
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	root := filepath.Join(real, "memory")
	must(t, "", "init", root)
	must(t, "", "--root", root, "add", "--path", "eng/queue", "--title", "Broker", "--narrative", "RabbitMQ.", "--reason", "r")
	writeFile(t, filepath.Join(real, "notes", "plan.md"), "# Plan\n\nShip in May.\n")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	before := snapshot(t, root)
	holds := " holds the memory root " + root + ": ingesting it would copy the memory into itself; give the folders beside the root instead"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"the root through a link, its parent by its real path", []string{"--root", filepath.Join(link, "memory"), "ingest", real}, real + holds},
		{"the root by its real path, its parent through a link", []string{"--root", root, "ingest", link}, link + holds},
		{"a folder, then the root's parent through a link", []string{"--root", root, "ingest", filepath.Join(real, "notes"), link}, link + holds},
		{"the root itself through a link", []string{"--root", root, "ingest", filepath.Join(link, "memory")}, filepath.Join(link, "memory") + " is inside the memory root " + root + ": its files are the memory itself"},
		{"an entry through a link", []string{"--root", root, "ingest", filepath.Join(link, "memory", "eng", "queue", "broker.md")}, "broker.md is inside the memory root " + root},
	} {
		if r := arbor(t, "", tc.args...); r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.name, r.code, r.stderr, tc.want)
		}
	}
	if after := snapshot(t, root); !reflect.DeepEqual(after, before) {
		t.Errorf("a refused ingest changed the root: %d files, %d before", len(after), len(before))
	}

	// A folder reached through a link is read, and named as written.
	linked := filepath.Join(dir, "linked_notes")
	if err := os.Symlink(filepath.Join(real, "notes"), linked); err != nil {
		t.Fatal(err)
	}
	r := arbor(t, "", "--root", root, "ingest", linked)
	if r.code != 0 || !strings.Contains(r.stdout, "✓ added     linked_notes/plan.md (markdown): 1 entry, 1 added") {
		t.Errorf("linked folder: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestProgressBar(t *testing.T) {
	var term, out bytes.Buffer
	p := &barProgress{w: &term, out: &out, total: 4}
	p.sending([]string{"inbox/a.md", "inbox/b.md"})
	p.done(api.IngestFile{Name: "inbox/a.md", Status: "added", Entries: 2, Added: 2})
	p.done(api.IngestFile{Name: "inbox/b.md", Status: "failed", Message: "bad input: malformed JSON"})
	p.finish()
	p.report(ingestReport{Files: []api.IngestFile{{Name: "inbox/b.md", Status: "failed", Message: "bad input: malformed JSON"}}, Summary: api.IngestSummary{Files: 2, FailedFiles: 1}})
	frames := strings.Split(term.String(), "\r\x1b[2K")
	want := []string{"", "░░░░░░░░░░░░░░░░░░░░░░░░░░░░ 0/4 files  inbox/a.md", "███████░░░░░░░░░░░░░░░░░░░░░ 1/4 files  ", "██████████████░░░░░░░░░░░░░░ 2/4 files  ", ""}
	if strings.Join(frames, "|") != strings.Join(want, "|") {
		t.Errorf("frames:\n%q\nwant\n%q", frames, want)
	}
	if got := out.String(); got != "✗ failed    inbox/b.md: bad input: malformed JSON\n2 files (1 failed): 0 entries added, 0 updated, 0 deleted, 0 unchanged\n" {
		t.Errorf("report:\n%s", got)
	}
}

// TestIngestPrune deletes a file from an ingested folder: `ingest --prune`
// removes its entries and keeps every other source's, those of the earlier
// batches and of files not sent (a file turned binary) included.
func TestIngestPrune(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	must(t, "", "init", root)
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	// More files than one batch holds: the prune goes with the last call.
	for i := 1; i <= ingestBatchFiles+8; i++ {
		writeFile(t, filepath.Join(notes, fmt.Sprintf("n%02d.md", i)), fmt.Sprintf("# Note %d\n\nBody of note %d.\n", i, i))
	}
	// A link to a note of a later call: the relation is added when it comes.
	writeFile(t, filepath.Join(notes, "n01.md"), "# Note 1\n\nBody of note 1, before [[n40]].\n")
	writeFile(t, filepath.Join(notes, "b.md"), "## One\n\nFirst thing.\n\n## Two\n\nSecond thing.\n")
	writeFile(t, filepath.Join(notes, "sub", "c.txt"), "A plain text note.\n")
	other := filepath.Join(dir, "other.md")
	writeFile(t, other, "# Other\n\nOutside the folder.\n")
	must(t, "", "--root", root, "--fixed-time", fixedTime, "ingest", notes, other)
	if show := must(t, "", "--root", root, "show", "notes/n01/n01.md"); !strings.Contains(show, "relations:\n  → notes/n40/n40.md\n") {
		t.Errorf("the link to a note of a later call:\n%s", show)
	}

	must(t, "", "--root", root, "show", "notes/b/b.md")
	os.Remove(filepath.Join(notes, "b.md"))
	r := arbor(t, "", "--root", root, "--fixed-time", fixedTime, "ingest", "--prune", notes, other)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"- removed   notes/b.md (1 entry)\n",
		"43 files (1 removed, 0 failed): 0 entries added, 0 updated, 1 deleted, 42 unchanged\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	// Notes go to the folders they came from, plain text by its name.
	tree := must(t, "", "--root", root, "tree", "notes") + must(t, "", "--root", root, "tree", "documents")
	for _, want := range []string{"n01/", "n40/", "notes_sub_c/", "other/"} {
		if !strings.Contains(tree, want) {
			t.Errorf("tree lacks %s:\n%s", want, tree)
		}
	}
	// The emptied topic folder keeps its context.md, as after any DELETE.
	for _, gone := range []string{"notes/b/b.md"} {
		if r := arbor(t, "", "--root", root, "show", gone); r.code != 1 {
			t.Errorf("show %s after the prune: exit %d\n%s", gone, r.code, r.stdout)
		}
	}

	// A file gone, another turned binary (skipped, not sent, yet there):
	// only the gone one is removed; other.md, not under notes/, stays.
	must(t, "", "--root", root, "show", "documents/notes_sub_c/a_plain_text_note.md")
	os.Remove(filepath.Join(notes, "sub", "c.txt"))
	writeFile(t, filepath.Join(notes, "n01.md"), "\x00binary now")
	out := must(t, "", "--root", root, "--fixed-time", fixedTime, "ingest", "--prune", "--json", notes)
	var rep struct {
		Files   []api.IngestFile `json:"files"`
		Skipped []struct{ Path, Reason string }
		Summary api.IngestSummary `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Summary != (api.IngestSummary{Files: 40, Removed: 1, Deleted: 1, Unchanged: 39}) || len(rep.Skipped) != 1 {
		t.Errorf("summary %+v, skipped %v", rep.Summary, rep.Skipped)
	}
	last := rep.Files[len(rep.Files)-1]
	if last.Name != "notes/sub/c.txt" || last.Status != "removed" || last.Deleted != 1 || len(last.Applied) != 1 || last.Applied[0].Type != "DELETE" {
		t.Errorf("removed item: %+v", last)
	}
	if !strings.Contains(out, `"removed": 1`) {
		t.Errorf("--json summary lacks removed:\n%s", out)
	}
	tree = must(t, "", "--root", root, "tree", "notes") + must(t, "", "--root", root, "tree", "documents")
	for _, want := range []string{"n01/", "other/"} {
		if !strings.Contains(tree, want) {
			t.Errorf("tree lacks %s:\n%s", want, tree)
		}
	}
	if r := arbor(t, "", "--root", root, "show", "documents/notes_sub_c/a_plain_text_note.md"); r.code != 1 {
		t.Errorf("c.txt's entry after the prune: exit %d\n%s", r.code, r.stdout)
	}

	// Without --prune nothing is removed; a file argument adds no prefix.
	os.Remove(filepath.Join(notes, "n02.md"))
	for _, args := range [][]string{{notes}, {"--prune", filepath.Join(notes, "n03.md")}} {
		r = arbor(t, "", append([]string{"--root", root, "--fixed-time", fixedTime, "ingest"}, args...)...)
		if r.code != 0 || strings.Contains(r.stdout, "removed") {
			t.Errorf("ingest %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	must(t, "", "--root", root, "show", "notes/n02/n02.md")
}

// TestIngestNotesKeepTheirShape ingests a small folder of notes, end to
// end: each note lands in the folder its file sits in, with its front
// matter, its headings and its links to the other notes as relations; a
// note with a broken front matter is ingested with a warning; a note moved
// with mv is updated where it lives when it is ingested again.
func TestIngestNotesKeepTheirShape(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	must(t, "", "init", root)
	notes := filepath.Join(t.TempDir(), "notes")
	writeFile(t, filepath.Join(notes, "billing", "stripe", "webhooks.md"), "---\ntitle: Stripe webhooks\ntags: [billing, stripe]\n"+
		"date: 2025-06-01\nimportance: 80\nowner: ana\n---\n# Stripe webhooks\n\nEvents are retried: see [retries](../retries.md).\n\n"+
		"## Facts\n\nEvery event is signed.\n\n### Rotation\n\nKeys rotate yearly.\n")
	writeFile(t, filepath.Join(notes, "billing", "retries.md"), "# Retries\n\nThree retries; [[webhooks]] tell us when.\n")
	writeFile(t, filepath.Join(notes, "broken.md"), "---\ntitle: [unclosed\n---\nStill here.\n")

	r := arbor(t, "", "--root", root, "--fixed-time", fixedTime, "ingest", notes)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "✓ added     notes/broken.md (markdown): 1 entry, 1 added — warning: front matter not read") {
		t.Errorf("no warning for the broken front matter:\n%s", r.stdout)
	}
	show := must(t, "", "--root", root, "show", "notes/billing/stripe/webhooks.md")
	for _, want := range []string{
		"title: Stripe webhooks\n", "tags: [billing, stripe]\n", "createdAt: 2025-06-01T00:00:00Z\n", "importance: 80\n", "owner: ana\n",
		"#### Facts\n\nEvery event is signed.\n\n##### Rotation\n", "relations:\n  → notes/billing/retries.md\n", "backlinks:\n  ← notes/billing/retries.md\n",
	} {
		if !strings.Contains(show, want) {
			t.Errorf("show lacks %q:\n%s", want, show)
		}
	}
	if strings.Contains(show, "\n## Facts\n") {
		t.Errorf("a note's heading read as the entry's section:\n%s", show)
	}
	if show := must(t, "", "--root", root, "show", "notes/broken/broken.md"); !strings.Contains(show, "```yaml\ntitle: [unclosed\n```\nStill here.") {
		t.Errorf("broken note:\n%s", show)
	}

	must(t, "", "--root", root, "--fixed-time", fixedTime, "mv", "--reason", "finance owns it", "notes/billing/stripe/webhooks.md", "finance/stripe")
	src := filepath.Join(notes, "billing", "stripe", "webhooks.md")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, src, strings.Replace(string(b), "yearly", "every six months", 1))
	r = arbor(t, "", "--root", root, "--fixed-time", fixedTime, "ingest", notes)
	if r.code != 0 || !strings.Contains(r.stdout, "✓ updated   notes/billing/stripe/webhooks.md (markdown): 1 entry, 1 updated") {
		t.Fatalf("re-ingest after mv: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if show := must(t, "", "--root", root, "show", "finance/stripe/webhooks.md"); !strings.Contains(show, "every six months") {
		t.Errorf("the moved note was not updated:\n%s", show)
	}
	if r := arbor(t, "", "--root", root, "show", "notes/billing/stripe/webhooks.md"); r.code != 1 {
		t.Errorf("written again at its old path:\n%s", r.stdout)
	}
}
