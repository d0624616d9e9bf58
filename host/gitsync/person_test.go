package gitsync_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/gitsync"
	"github.com/arbormem/arbor/internal/testroot"
)

// duringMerge is an engine's merge that runs a person's edit first: the
// edit lands after the sync committed the root and before it writes the
// merge.
type duringMerge struct {
	gitsync.Merger
	edit func()
}

func (d duringMerge) Merge(ctx context.Context, p api.MergeParams) (api.MergeResult, error) {
	d.edit()
	return d.Merger.Merge(ctx, p)
}

// syncErr is a sync that may fail.
func syncErr(t *testing.T, root string, m gitsync.Merger, clock *time.Time) (gitsync.Report, error) {
	t.Helper()
	*clock = clock.Add(time.Minute)
	now := *clock
	return gitsync.Sync(context.Background(), root, m, gitsync.Options{Now: func() time.Time { return now }})
}

// A person edits files while a sync merges: an entry the other side
// deleted, and the .gitignore the other side changed. Neither edit is
// removed or overwritten: the sync stops, and the next one commits the
// edits and merges them (an edit beats a delete; .gitignore line by line).
func TestSyncKeepsWhatAPersonEditsDuringTheMerge(t *testing.T) {
	for _, tc := range []struct {
		name, path, edit string
		want             func(string) bool
	}{
		{"an entry the remote deleted", "ops/x.md", entry("X", "x.", "X, as Alice wrote it during the sync."),
			func(s string) bool { return strings.Contains(s, "as Alice wrote it during the sync") }},
		{"a dot-file the remote changed", ".gitignore", "*.tmp\n*.log\n",
			func(s string) bool { return strings.Contains(s, "*.log") && strings.Contains(s, "*.bak") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, remote, a, b, clock := newTeam(t, "ops/x.md", entry("X", "x.", "X."), ".gitignore", "*.tmp\n")
			os.Remove(filepath.Join(b, "ops/x.md"))
			testroot.Write(t, b, ".gitignore", "*.tmp\n*.bak\n")
			sync(t, b, remote, clock)

			testroot.Write(t, a, "ops/y.md", entry("Y", "y.", "Y.")) // a merge, not a fast-forward
			m := duringMerge{engine(t, a), func() { testroot.Write(t, a, tc.path, tc.edit) }}
			if rep, err := syncErr(t, a, m, clock); err == nil || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("a sync that met an edit made during its merge: %+v, %v", rep, err)
			}
			if got := testroot.Read(t, a, tc.path); got != tc.edit {
				t.Fatalf("%s after the sync: %q, want the edit %q", tc.path, got, tc.edit)
			}
			rep := sync(t, a, remote, clock)
			if got := testroot.Read(t, a, tc.path); !tc.want(got) {
				t.Fatalf("%s after the next sync (%+v): %q", tc.path, rep, got)
			}
			if got := pushedFiles(t, remote)[tc.path]; !tc.want(got) {
				t.Errorf("%s pushed: %q", tc.path, got)
			}
		})
	}
}

// Files a person keeps out of git on one machine (.git/info/exclude,
// core.excludesFile) are never committed nor pushed, and when the other
// side tracks the same paths, the sync stops before writing anything,
// naming them, as git does; once they are moved aside it goes on.
func TestSyncKeepsFilesGitIgnoresHere(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no person's git configuration
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, fastForward := range []bool{true, false} {
		dir, remote, a, b, clock := newTeam(t, "ops/x.md", entry("X", "x.", "X."))

		mine := filepath.Join(dir, "alice-ignores")
		testroot.Write(t, a, ".git/info/exclude", "# Alice's\ndrafts/\n.obsidian/\n")
		testroot.Write(t, dir, "alice-ignores", "secret.txt\n")
		cfg := testroot.Read(t, a, ".git/config")
		testroot.Write(t, a, ".git/config", cfg+"[core]\n\texcludesFile = "+mine+"\n")
		alice := map[string]string{"drafts/plan.md": "Alice's draft\n", ".obsidian/workspace.json": "{\"alice\":1}\n", "secret.txt": "Alice's secret\n"}
		for p, s := range alice {
			testroot.Write(t, a, p, s)
		}
		if !fastForward {
			testroot.Write(t, a, "ops/y.md", entry("Y", "y.", "Y."))
		}
		sync(t, a, remote, clock)
		pushed := pushedFiles(t, remote)
		for p := range alice {
			if _, ok := pushed[p]; ok {
				t.Errorf("%s, which git ignores in Alice's root, was pushed", p)
			}
		}

		for p := range alice {
			testroot.Write(t, b, p, "Bob's "+p+"\n")
		}
		testroot.Write(t, b, "ops/x.md", entry("X", "x.", "X, as Bob wrote it."))
		sync(t, b, remote, clock)
		if !fastForward {
			testroot.Write(t, a, "ops/z.md", entry("Z", "z.", "Z."))
		}
		_, err := syncErr(t, a, engine(t, a), clock)
		if err == nil || !strings.Contains(err.Error(), "drafts/plan.md") || !strings.Contains(err.Error(), "secret.txt") {
			t.Fatalf("fast-forward %v: a sync bringing files that git ignores here: %v", fastForward, err)
		}
		for p, s := range alice {
			if got := testroot.Read(t, a, p); got != s {
				t.Errorf("fast-forward %v: %s: %q, want Alice's %q", fastForward, p, got, s)
			}
		}
		if got := testroot.Read(t, a, "ops/x.md"); strings.Contains(got, "Bob") {
			t.Errorf("fast-forward %v: the stopped sync wrote ops/x.md", fastForward)
		}

		aside := filepath.Join(dir, "aside")
		for p := range alice {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(aside, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(a, p), filepath.Join(aside, p)); err != nil {
				t.Fatal(err)
			}
		}
		sync(t, a, remote, clock)
		if got := testroot.Read(t, a, "secret.txt"); got != "Bob's secret.txt\n" {
			t.Errorf("fast-forward %v: secret.txt after moving Alice's aside: %q", fastForward, got)
		}
	}
}

// A file that is not text, changed differently on both sides twice: the
// second conflict's copy goes beside the first, which the person has not
// resolved yet, instead of replacing it.
func TestSyncKeepsAnEarlierConflictCopy(t *testing.T) {
	const img = "ops/billing/diagram.png"
	_, remote, a, b, clock := newTeam(t, img, "\x89PNG\x00base")
	for round := 1; round <= 2; round++ {
		testroot.Write(t, a, img, fmt.Sprintf("\x89PNG\x00alice %d", round))
		testroot.Write(t, b, img, fmt.Sprintf("\x89PNG\x00bob %d", round))
		sync(t, b, remote, clock)
		if rep := sync(t, a, remote, clock); len(rep.Conflicts) != 1 {
			t.Fatalf("round %d: %+v", round, rep)
		}
	}
	got := files(t, a)
	for round := 1; round <= 2; round++ {
		found := false
		for _, s := range got {
			found = found || s == fmt.Sprintf("\x89PNG\x00bob %d", round)
		}
		if !found {
			t.Errorf("Bob's version of round %d is in no file of Alice's root: %q", round, got)
		}
	}
}

// A person rewrites an entry under its old size and time (cp -p, rsync -a,
// tar x, touch -r) while the other side edits it too. go-git's status
// trusted the file by its size and time: the rewrite was never committed,
// and each sync stopped at the merge, which found the file changed on
// disk. The sync now reads a file whose change time or inode is new, as
// git does, and merges both edits.
func TestSyncCommitsAFileWhoseTimeAToolSetBack(t *testing.T) {
	const p = "ops/pager/rotation.md"
	_, remote, a, b, clock := newTeam(t, p, entry("Pager rotation", "The pager rotates weekly.", "The pager rotates every Monday."))
	rewrite := func(root, old, new string, keepTime bool) {
		t.Helper()
		full := filepath.Join(root, p)
		before, err := os.Stat(full)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if keepTime {
			if err := os.Chtimes(full, before.ModTime(), before.ModTime()); err != nil {
				t.Fatal(err)
			}
		}
	}
	rewrite(a, "Monday", "Sunday", true)
	rewrite(b, "rotates weekly", "rotates each week", false)
	sync(t, b, remote, clock)
	sync(t, a, remote, clock)
	sync(t, b, remote, clock)
	for _, root := range []string{a, b} {
		if got := files(t, root)[p]; !strings.Contains(got, "every Sunday") || !strings.Contains(got, "rotates each week") {
			t.Errorf("%s has %q", filepath.Base(root), got)
		}
	}
}

// An index whose times another tool wrote from milliseconds
// (isomorphic-git: the JS sync of a folder) matched no file to the
// nanosecond, so that go-git's status hashed every file at every sync. A
// sync refreshes it: afterwards each entry holds its file's times.
func TestSyncRefreshesAnIndexOfCoarseTimes(t *testing.T) {
	_, remote, a, _, clock := newTeam(t,
		"ops/pager/rotation.md", entry("Pager rotation", "The pager rotates weekly.", "The pager rotates every Monday."),
		"ops/pager/escalation.md", entry("Escalation", "Pages escalate.", "Page the secondary after fifteen minutes."))
	r, err := git.PlainOpen(a)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := r.Storer.Index()
	if err != nil {
		t.Fatal(err)
	}
	coarse := 0
	for _, e := range idx.Entries {
		if m := e.ModifiedAt.Truncate(time.Millisecond); !m.Equal(e.ModifiedAt) {
			e.ModifiedAt, e.CreatedAt = m, e.CreatedAt.Truncate(time.Millisecond)
			coarse++
		}
	}
	if coarse == 0 {
		t.Skip("this file system keeps times in whole milliseconds")
	}
	if err := r.Storer.SetIndex(idx); err != nil {
		t.Fatal(err)
	}
	if rep := sync(t, a, remote, clock); rep.Committed != "" {
		t.Errorf("a sync of an unchanged root committed %s", rep.Committed)
	}
	r, _ = git.PlainOpen(a)
	idx, _ = r.Storer.Index()
	for _, e := range idx.Entries {
		fi, err := os.Lstat(filepath.Join(a, filepath.FromSlash(e.Name)))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(e.ModifiedAt) {
			t.Errorf("%s: the index holds %v, the file %v", e.Name, e.ModifiedAt, fi.ModTime())
		}
	}
}
