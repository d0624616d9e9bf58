package gitsync

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// A file gitDir writes is replaced whole on Close: until then, what was
// there stays (a sync killed mid-write leaves the old reference, never an
// empty or half-written one), and nothing is left beside it.
func TestGitDirReplacesFilesWhole(t *testing.T) {
	dir := t.TempDir()
	g := gitDir{osfs.New(dir)}
	old := "0123456789012345678901234567890123456789\n"
	ref := filepath.Join(dir, "refs", "heads", "main")
	if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ref, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}

	// As go-git's SetRef without an old value: truncate, then write.
	f, err := g.OpenFile("refs/heads/main", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("abcdef")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ref); string(b) != old {
		t.Fatalf("before Close the file holds %q, want the old reference", b)
	}
	if _, err := f.Write([]byte("abcdef0123456789abcdef0123456789abcd\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ref); string(b) != "abcdefabcdef0123456789abcdef0123456789abcd\n" {
		t.Fatalf("after Close: %q", b)
	}

	// As go-git's SetRef with an old value: read, then truncate and write.
	f, err = g.OpenFile("refs/heads/main", os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Lock(); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	if err != nil || !strings.HasPrefix(string(b), "abcdefabcdef") {
		t.Fatalf("read %q, %v", b, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(old)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ref); string(b) != old {
		t.Fatalf("after the second Close: %q", b)
	}

	// A file opened to be made and closed unwritten is not made (go-git
	// opens a reference so before comparing its old value, and a failed
	// comparison left an empty reference); one truncated is; one only
	// read is left as it was.
	f, err = g.OpenFile("refs/heads/new", os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "refs", "heads", "new")); !os.IsNotExist(err) {
		t.Fatalf("a file closed unwritten was made: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shallow"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err = g.Create("shallow"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "shallow")); err != nil || fi.Size() != 0 {
		t.Fatalf("a file truncated: %v, %v", fi, err)
	}
	f, err = g.OpenFile("refs/heads/main", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(ref)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.Stat(ref); !os.SameFile(info, now) {
		t.Fatal("a file only read was replaced")
	}
	if _, err := g.OpenFile("missing", os.O_WRONLY|os.O_TRUNC, 0); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("truncating a missing file: %v", err)
	}

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			t.Errorf("left beside the files: %s", e.Name())
		}
	}
}

// New files of writes a killed process never renamed are removed once
// old; a recent one may be a write running.
func TestGitDirSweepsWhatKilledWritesLeft(t *testing.T) {
	dir := t.TempDir()
	stale, recent := filepath.Join(dir, tmpPrefix+"1-1"), filepath.Join(dir, tmpPrefix+"2-1")
	for _, p := range []string{stale, recent} {
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(stale, time.Now().Add(-2*time.Hour), time.Now().Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	gitDir{osfs.New(dir)}.sweep()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale file: %v", err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("the recent file: %v", err)
	}
}

// A repository opened through gitDir commits, moves its branch and reads
// it back, as go-git does without it.
func TestOpenRepoWritesThroughGitDir(t *testing.T) {
	root := t.TempDir()
	if _, err := git.PlainInit(root, false); err != nil {
		t.Fatal(err)
	}
	r, err := openRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.md"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add("a.md"); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit("a", &git.CommitOptions{Author: &object.Signature{Name: "Test", Email: "test@example.com", When: time.Unix(1700000000, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	again, err := git.PlainOpen(root)
	if err != nil {
		t.Fatal(err)
	}
	head, err := again.Head()
	if err != nil || head.Hash() != h {
		t.Fatalf("HEAD %v, %v; want %v", head, err, h)
	}
	if err := again.Storer.SetReference(plumbing.NewHashReference("refs/heads/other", h)); err != nil {
		t.Fatal(err)
	}
	if ref, err := r.Reference("refs/heads/other", false); err != nil || ref.Hash() != h {
		t.Fatalf("a branch made by go-git as published: %v, %v", ref, err)
	}
	st, err := wt.Status()
	if err != nil || !st.IsClean() {
		t.Fatalf("status after the commit: %v, %v", st, err)
	}
	// A compare-and-swap of a reference that does not exist, refused,
	// leaves no empty reference behind (go-git#2399), which would fail
	// every listing of the references.
	stale := plumbing.NewHashReference("refs/heads/cas", plumbing.NewHash("1111111111111111111111111111111111111111"))
	if err := r.Storer.CheckAndSetReference(plumbing.NewHashReference("refs/heads/cas", h), stale); err == nil {
		t.Fatal("a compare-and-swap against a wrong old value succeeded")
	}
	if _, err := os.Stat(filepath.Join(root, ".git", "refs", "heads", "cas")); !os.IsNotExist(err) {
		t.Fatalf("the refused reference's file: %v", err)
	}
	refs, err := r.References()
	if err != nil {
		t.Fatal(err)
	}
	if err := refs.ForEach(func(*plumbing.Reference) error { return nil }); err != nil {
		t.Fatalf("listing the references: %v", err)
	}
}
