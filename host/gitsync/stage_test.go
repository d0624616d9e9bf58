package gitsync

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5"
)

// A sync killed after staging a file's removal and before committing it
// leaves the removal in the index: the next sync stages it again and
// commits it, where go-git's Remove found no entry and failed every sync.
func TestStageARemovalStagedBefore(t *testing.T) {
	root := t.TempDir()
	if _, err := git.PlainInit(root, false); err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(root, "notes", "a.md")
	if err := os.MkdirAll(filepath.Dir(note), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(note, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := open(root, "", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.commitLocal(syncState{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(note); err != nil {
		t.Fatal(err)
	}
	if err := g.stage("notes/a.md", false); err != nil { // the killed sync's staging
		t.Fatal(err)
	}
	g, err = open(root, "", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := g.commitLocal(syncState{})
	if err != nil || h == "" {
		t.Fatalf("the next sync's commit: %q, %v", h, err)
	}
	head, err := g.head()
	if err != nil {
		t.Fatal(err)
	}
	tree, err := treeOf(head)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.File("notes/a.md"); err == nil {
		t.Fatal("the removal was not committed")
	}
	// Staged as present but gone since (removed between the listing and
	// the staging): its removal is what the index holds, and that is done.
	if err := g.stage("notes/a.md", true); err != nil {
		t.Fatalf("staging a file removed meanwhile: %v", err)
	}
}
