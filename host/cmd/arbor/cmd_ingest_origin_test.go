package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// TestIngestPruneOfAnEmptyFolder empties a folder ingested before (a share
// not mounted): `ingest --prune` leaves its entries, says how to remove
// them and exits 0, while a folder beside it, sent in several calls, is
// pruned as before; --prune-empty removes them.
func TestIngestPruneOfAnEmptyFolder(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	must(t, "", "init", root)
	dir := t.TempDir()
	notes, share := filepath.Join(dir, "notes"), filepath.Join(dir, "share")
	for i := 1; i <= ingestBatchFiles+8; i++ {
		writeFile(t, filepath.Join(notes, fmt.Sprintf("n%02d.md", i)), fmt.Sprintf("# Note %d\n\nBody of note %d.\n", i, i))
	}
	for _, n := range []string{"a", "b", "c"} {
		writeFile(t, filepath.Join(share, n+".md"), "# "+n+"\n\nShared note "+n+".\n")
	}
	must(t, "", "--root", root, "--fixed-time", fixedTime, "ingest", notes, share)

	// The share is not mounted: its folder is there, empty.
	for _, n := range []string{"a", "b", "c"} {
		os.Remove(filepath.Join(share, n+".md"))
	}
	os.Remove(filepath.Join(notes, "n05.md"))
	r := arbor(t, "", "--root", root, "--fixed-time", fixedTime, "ingest", "--prune", notes, share)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"- removed   notes/n05.md (1 entry)\n",
		"! not pruned share/: the folder " + share + " is empty, and its 3 sources ingested before stayed",
		"run again with --prune-empty, or delete their entries with arbor rm PATH --reason R\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, n := range []string{"a", "b", "c"} {
		must(t, "", "--root", root, "show", "share/"+n+"/"+n+".md")
	}

	out := must(t, "", "--root", root, "--fixed-time", fixedTime, "ingest", "--prune", "--json", share)
	var rep struct {
		Summary  api.IngestSummary   `json:"summary"`
		Warnings []api.IngestWarning `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Summary != (api.IngestSummary{}) || len(rep.Warnings) != 1 || rep.Warnings[0].Code != api.IngestEmptyPrune || rep.Warnings[0].Prefix != "share/" || rep.Warnings[0].Sources != 3 {
		t.Errorf("--json: %+v %+v", rep.Summary, rep.Warnings)
	}

	if r := arbor(t, "", "--root", root, "ingest", "--prune-empty", share); r.code != 2 || !strings.Contains(r.stderr, "--prune-empty goes with --prune") {
		t.Errorf("--prune-empty alone: exit %d\n%s", r.code, r.stderr)
	}
	r = arbor(t, "", "--root", root, "--fixed-time", fixedTime, "ingest", "--prune", "--prune-empty", share)
	if r.code != 0 || !strings.Contains(r.stdout, "3 files (3 removed, 0 failed): 0 entries added, 0 updated, 3 deleted, 0 unchanged\n") || strings.Contains(r.stdout, "not pruned") {
		t.Errorf("--prune-empty: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := arbor(t, "", "--root", root, "show", "share/a/a.md"); r.code != 1 {
		t.Errorf("share/a/a.md after --prune-empty: exit %d", r.code)
	}
}

// TestIngestSecondFolderOfOneName ingests ~/work/notes, then ~/home/notes:
// the second is refused before anything is written (its prune too), the
// first's entries stay as they were, --name ingests it beside them, and
// the first folder reached through a symbolic link is still itself.
// originTree makes a memory and a folder for source folders (its real
// path, as the CLI records origins), and returns an ingest into the memory.
func originTree(t *testing.T) (root, dir string, ingest func(args ...string) result) {
	t.Helper()
	needEngine(t)
	root = t.TempDir()
	must(t, "", "init", root)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root, dir, func(args ...string) result {
		return arbor(t, "", append([]string{"--root", root, "--fixed-time", fixedTime, "ingest"}, args...)...)
	}
}

func TestIngestSecondFolderOfOneName(t *testing.T) {
	root, dir, ingest := originTree(t)
	work, home := filepath.Join(dir, "work", "notes"), filepath.Join(dir, "home", "notes")
	writeFile(t, filepath.Join(work, "todo.md"), "# Todo\n\nRenew the work laptop.\n")
	writeFile(t, filepath.Join(work, "plan.md"), "# Plan\n\nShip in May.\n")
	writeFile(t, filepath.Join(home, "todo.md"), "# Todo\n\nWater the plants.\n")
	if r := ingest(work); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	for _, args := range [][]string{{home}, {"--prune", home}} {
		r := ingest(args...)
		if r.code != 1 || !strings.Contains(r.stderr, "1 of 1 files failed") {
			t.Errorf("ingest %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		for _, want := range []string{
			"✗ failed    notes/todo.md (markdown): \"notes/\" holds the files of " + work + ", and this call's \"notes/\" come from " + home,
			"! not written notes/: this memory holds notes/ from " + work + ", not from " + home + ": ingest " + home + " under another name (arbor ingest --name NAME " + home + ")",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("ingest %v: output lacks %q:\n%s", args, want, r.stdout)
			}
		}
	}
	if show := must(t, "", "--root", root, "show", "notes/todo/todo.md"); !strings.Contains(show, "Renew the work laptop.") {
		t.Errorf("the work note after the refused folder:\n%s", show)
	}
	must(t, "", "--root", root, "show", "notes/plan/plan.md")

	out := must(t, "", "--root", root, "--fixed-time", fixedTime, "ingest", "--name", "home-notes", home)
	if !strings.Contains(out, "✓ added     home-notes/todo.md (markdown)") {
		t.Errorf("--name home-notes:\n%s", out)
	}
	if tree := must(t, "", "--root", root, "tree"); !strings.Contains(tree, "home_notes/") || !strings.Contains(tree, "notes/") {
		t.Errorf("tree:\n%s", tree)
	}

	// The work folder through a symbolic link is the same origin.
	link := filepath.Join(t.TempDir(), "notes")
	if err := os.Symlink(work, link); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "todo.md"), "# Todo\n\nRenew the work laptop by June.\n")
	if r := ingest("--prune", link); r.code != 0 || !strings.Contains(r.stdout, "✓ updated   notes/todo.md") {
		t.Errorf("through a link: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--name", "../x", home}, 2, "--name: "},
		{[]string{"--name", ".hidden", home}, 2, "--name: "},
		{[]string{"--name", "x", home, work}, 2, "--name names one folder"},
		{[]string{"--name", "x", filepath.Join(home, "todo.md")}, 1, "is a file, named by its base name"},
		{[]string{work, home}, 1, "are both named notes: ingest one of them apart, under another name (--name NAME)"},
	} {
		if r := ingest(tc.args...); r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("ingest %v: exit %d, want %d and %q\n%s", tc.args, r.code, tc.code, tc.msg, r.stderr)
		}
	}
}

// A folder moved on disk (mv ~/notes ~/Documents/notes) is refused as a
// second folder of its name until --moved says it moved; then its entries
// follow it, unchanged, and the old place is refused in its turn.
func TestIngestMovedFolder(t *testing.T) {
	root, dir, ingest := originTree(t)
	old, moved := filepath.Join(dir, "notes"), filepath.Join(dir, "Documents", "notes")
	writeFile(t, filepath.Join(old, "todo.md"), "# Todo\n\nRenew the laptop.\n")
	if r := ingest(old); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(old, moved); err != nil {
		t.Fatal(err)
	}
	if r := ingest("--prune", moved); r.code != 1 || !strings.Contains(r.stdout, "or, if the folder moved there, run again with --moved") {
		t.Errorf("moved folder: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := ingest("--prune", "--moved", moved); r.code != 0 || !strings.Contains(r.stdout, "= unchanged notes/todo.md") {
		t.Errorf("--moved: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	writeFile(t, filepath.Join(old, "todo.md"), "# Todo\n\nAnother laptop.\n")
	if r := ingest(old); r.code != 1 || !strings.Contains(r.stdout, "this memory holds notes/ from "+moved) {
		t.Errorf("the old place after --moved: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if show := must(t, "", "--root", root, "show", "notes/todo/todo.md"); !strings.Contains(show, "Renew the laptop.") {
		t.Errorf("the note after the moves:\n%s", show)
	}
}

// A folder of the name under which an agent sent documents to arbor-ingest
// is refused with a line that offers another name, not --moved: no folder
// moved, and --moved would hand the agent's documents to the folder, whose
// prune deletes them.
func TestIngestFolderOfAnAgentsName(t *testing.T) {
	root, dir, ingest := originTree(t)
	ctx := context.Background()
	eng, err := runtime.New(ctx, root, runtime.WithCacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Open(ctx, api.OpenParams{}); err != nil {
		t.Fatal(err)
	}
	// What arbor-ingest sends for an agent's minutes/may.md.
	if _, err := eng.Ingest(ctx, api.IngestParams{Files: []api.SourceFile{{Name: "minutes/may.md", Content: "# May\n\nShip on Friday.\n"}},
		Origins: map[string]string{"minutes/": api.AgentOrigin}}); err != nil {
		t.Fatal(err)
	}
	eng.Close(ctx)
	minutes := filepath.Join(dir, "minutes")
	writeFile(t, filepath.Join(minutes, "june.md"), "# June\n\nNothing.\n")
	r := ingest("--prune", minutes)
	want := "! not written minutes/: this memory holds under minutes/ documents an agent sent to arbor-ingest, which no folder holds: ingest " + minutes + " under another name (arbor ingest --name NAME " + minutes + ")\n"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("output lacks %q:\n%s", want, r.stdout)
	}
	must(t, "", "--root", root, "show", "minutes/may/may.md")
}
