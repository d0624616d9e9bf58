package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
)

// arbor sync through a file remote: the first sync pushes, a second root
// syncs from it, an edit on one reaches the other, and --status says what
// is not synced yet.
func TestSyncCommand(t *testing.T) {
	needEngine(t)
	t.Setenv("ARBOR_NO_SERVE", "1")
	remote := bareRemote(t)
	a := newTree(t)
	out := must(t, "", "--root", a, "sync", "--remote", remote)
	if !strings.Contains(out, "the remote had no branch main") || !strings.Contains(out, "pushed main") {
		t.Fatalf("first sync:\n%s", out)
	}
	b := t.TempDir()
	must(t, "", "init", b)
	var rep syncReport
	if err := json.Unmarshal([]byte(must(t, "", "--root", b, "--json", "sync", "--remote", remote)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Merge != "fast-forward" || rep.Index.Indexed != 2 {
		t.Fatalf("second root's sync: %+v", rep)
	}
	must(t, "", "--root", a, "add", "--path", "engineering/billing", "--title", "Refund limits", "--narrative", "Support refunds up to 100 EUR.", "--reason", "agreed with support")
	st := must(t, "", "--root", a, "sync", "--status", "--offline")
	if !strings.Contains(st, "1 operations audited since") || !strings.Contains(st, "engineering/billing/refund_limits.md") {
		t.Errorf("status before the sync:\n%s", st)
	}
	if out := must(t, "", "--root", a, "sync"); !strings.Contains(out, "committed the root's changes (1 audited operations)") || !strings.Contains(out, "1 commits sent, 0 brought in") {
		t.Errorf("sync of the addition:\n%s", out)
	}
	// The entry and the two context.md files the ADD wrote reach the
	// other root, and its engine re-reads those three alone.
	out = must(t, "", "--root", b, "sync")
	if !strings.Contains(out, "fast-forwarded to origin/main: 3 files changed") || !strings.Contains(out, "0 commits sent, 1 brought in") || !strings.Contains(out, "index: 3 files re-read, 2 reused") {
		t.Errorf("the other root's sync:\n%s", out)
	}
	if q := must(t, "", "--root", b, "search", "refunds"); !strings.Contains(q, "refund_limits.md") {
		t.Errorf("the synced entry is not found:\n%s", q)
	}
	// A root that is no repository yet, synced without a remote, or with
	// one that cannot be reached, is left as it was.
	c := t.TempDir()
	if r := arbor(t, "", "--root", c, "sync"); r.code != 1 || !strings.Contains(r.stderr, "not a git repository yet") {
		t.Errorf("a sync without a remote: %d %s", r.code, r.stderr)
	}
	if r := arbor(t, "", "--root", c, "sync", "--remote", filepath.Join(c, "missing.git")); r.code != 1 {
		t.Errorf("a sync to a missing remote: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(c, ".git")); !os.IsNotExist(err) {
		t.Errorf("a failed first sync made a repository: %v", err)
	}
	// A wrong --remote does not replace the origin a root has.
	if r := arbor(t, "", "--root", a, "sync", "--remote", filepath.Join(c, "missing.git")); r.code != 1 {
		t.Errorf("a sync of a to a missing remote: %d %s", r.code, r.stderr)
	}
	must(t, "", "--root", a, "sync")
}

// bareRemote makes an empty bare repository to sync with (a file remote).
func bareRemote(t *testing.T) string {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "team.git")
	if _, err := git.PlainInit(remote, true); err != nil {
		t.Fatal(err)
	}
	return remote
}
