package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
)

func writeEntry(t *testing.T, root, rel, title, narrative string) {
	t.Helper()
	full := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte("---\ntitle: "+title+"\n---\n\n## Narrative\n"+narrative+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// atOnce checks that a change made on disk is seen by the next call: a
// watching engine waits for its watcher to hear of what came before the
// call (watch.Sync).
func atOnce(t *testing.T, what string, ok func() bool) {
	t.Helper()
	if !ok() {
		t.Fatalf("%s: not seen by the first call after it", what)
	}
}

// eventually retries a check until it holds: a root the watcher cannot
// be trusted with is scanned every so often.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A watching engine (an MCP server's) answers from what is on disk: an
// entry an editor changes, removes or adds, in a folder that existed or
// one made later, is seen by the very next call, and the query cache does not
// answer from the old text.
func TestWatchFollowsTheDisk(t *testing.T) {
	root := t.TempDir()
	writeEntry(t, root, "ops/pager/rotation.md", "Pager rotation", "The pager rotates weekly on Mondays.")
	e := newEngine(t, root, WithWatch(0))
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	q := api.SearchParams{Query: "when does the pager rotate"}
	says := func(r api.QueryResult, words string) bool {
		if strings.Contains(r.Answer, words) {
			return true
		}
		for _, h := range r.Results {
			if strings.Contains(h.Excerpt, words) {
				return true
			}
		}
		return false
	}
	if r, err := e.Query(ctx, q); err != nil || !says(r, "Mondays") {
		t.Fatalf("first answer: %+v, %v", r, err)
	}
	writeEntry(t, root, "ops/pager/rotation.md", "Pager rotation", "The pager rotates every second Thursday.")
	atOnce(t, "the edit", func() bool {
		r, err := e.Query(ctx, q)
		return err == nil && says(r, "Thursday") && !says(r, "Mondays")
	})
	writeEntry(t, root, "sales/leads/intake.md", "Lead intake", "Leads are qualified within two days.")
	atOnce(t, "a new folder's entry", func() bool {
		r, err := e.Search(ctx, api.SearchParams{Query: "leads qualified"})
		return err == nil && len(r.Results) == 1
	})
	if err := os.Remove(filepath.Join(root, "ops/pager/rotation.md")); err != nil {
		t.Fatal(err)
	}
	atOnce(t, "the removal", func() bool {
		_, err := e.Read(ctx, api.ReadParams{Path: "ops/pager/rotation.md"})
		return err != nil
	})
}

// A save made just before a call is answered by it, in the same process
// a few microseconds on: the watcher takes the kernel's event in a moment
// after the save, and the call waits for it (watch.Sync). Before the
// barrier about one save in four was answered from the old text.
func TestWatchAnswersASaveMadeJustBefore(t *testing.T) {
	root := t.TempDir()
	writeEntry(t, root, "ops/pager/rotation.md", "Pager rotation", "The pager rotates on markeraa days.")
	e := newEngine(t, root, WithWatch(0))
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(root, "ops", "pager", "rotation.md")
	swap := filepath.Join(root, "ops", "pager", ".rotation.md.swp")
	stale := 0
	for i := 1; i <= 30; i++ {
		word := fmt.Sprintf("marker%c%c", 'a'+i/26, 'a'+i%26)
		text := "---\ntitle: Pager rotation\n---\n\n## Narrative\nThe pager rotates on " + word + " days.\n"
		// An editor's save: a new file renamed over the old one.
		if err := os.WriteFile(swap, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(swap, full); err != nil {
			t.Fatal(err)
		}
		r, err := e.Search(ctx, api.SearchParams{Query: word})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Results) == 0 || !strings.Contains(r.Results[0].Excerpt, word) {
			stale++
		}
		time.Sleep(5 * time.Millisecond)
	}
	if stale > 0 {
		t.Fatalf("%d of 30 searches made just after a save answered from the text before it", stale)
	}
}

// Refresh without paths scans the tree: what changed while nobody
// watched is found.
func TestRefreshScan(t *testing.T) {
	root := t.TempDir()
	e := newEngine(t, root)
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	writeEntry(t, root, "ops/pager/rotation.md", "Pager rotation", "The pager rotates weekly.")
	res, err := e.Refresh(ctx, api.RefreshParams{})
	if err != nil || !res.Scanned || res.Added != 1 {
		t.Fatalf("scan: %+v, %v", res, err)
	}
	if r, _ := e.Search(ctx, api.SearchParams{Query: "pager rotates"}); len(r.Results) != 1 {
		t.Fatalf("search after the scan: %+v", r)
	}
}

// A root on a network file system is watched, but what other machines
// change there raises no event here: the engine also scans the tree, at
// most every scanEvery, and answers from what is on disk. The test has no
// network file system, so it says the root is one and silences the
// watcher, as such a file system would for another machine's write.
func TestWatchScansARemoteRoot(t *testing.T) {
	remote := remoteFS
	remoteFS = func(string) (string, bool) { return "NFS", true }
	t.Cleanup(func() { remoteFS = remote })
	root := t.TempDir()
	writeEntry(t, root, "ops/pager/rotation.md", "Pager rotation", "The pager rotates weekly on Mondays.")
	e := newEngine(t, root, WithWatch(20*time.Millisecond))
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	if e.fam.w == nil || !e.fam.remote {
		t.Fatal("the root is not watched as a remote one")
	}
	e.fam.w.Close() // another machine's writes: no event
	writeEntry(t, root, "ops/pager/rotation.md", "Pager rotation", "The pager rotates every second Thursday.")
	eventually(t, "the edit another machine made", func() bool {
		r, err := e.Search(ctx, api.SearchParams{Query: "second thursday"})
		return err == nil && len(r.Results) == 1
	})
}

// A symbolic link to a folder of the tree is not followed: the folder is
// read once, under its own name. Read under both names, every search
// listed its entries twice, and a watching engine, which hears an edit
// under the real name only (inotify follows the link to the one folder),
// kept the old text under the link's name until it restarted. A link made
// while the engine watches is no part of the tree either: its refresh
// failed, and with it the other changes reported.
func TestWatchReadsALinkedFolderOnce(t *testing.T) {
	root := t.TempDir()
	writeEntry(t, root, "eng/deploy/deploy.md", "Deploy steps", "Deploys use the zebracorn pipeline.")
	writeEntry(t, root, "misc/plain.md", "Plain note", "A plain note about quokkafish.")
	if err := os.MkdirAll(filepath.Join(root, "ops"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../eng", filepath.Join(root, "ops/alias")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	var mu sync.Mutex
	var logged strings.Builder
	e := newEngine(t, root, WithWatch(0), WithLogger(func(level int, msg string) {
		if level >= LevelWarn {
			mu.Lock()
			defer mu.Unlock()
			logged.WriteString(msg + "\n")
		}
	}))
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	paths := func(query string) []string {
		t.Helper()
		r, err := e.Search(ctx, api.SearchParams{Query: query})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range r.Results {
			out = append(out, h.Path)
		}
		return out
	}
	if got := paths("zebracorn"); !slices.Equal(got, []string{"eng/deploy/deploy.md"}) {
		t.Fatalf("search before the edit: %q, want eng/deploy/deploy.md once", got)
	}
	writeEntry(t, root, "eng/deploy/deploy.md", "Deploy steps", "Deploys use the okapiline pipeline.")
	atOnce(t, "the edit", func() bool { return slices.Equal(paths("okapiline"), []string{"eng/deploy/deploy.md"}) })
	if got := paths("zebracorn"); len(got) != 0 {
		t.Fatalf("the old text is still found under %q", got)
	}
	// A link to a file, made while the engine watches.
	if err := os.Symlink("../misc/plain.md", filepath.Join(root, "ops/plain.md")); err != nil {
		t.Fatal(err)
	}
	writeEntry(t, root, "misc/plain.md", "Plain note", "A plain note about wombatfish.")
	atOnce(t, "the edit beside the link", func() bool { return slices.Equal(paths("wombatfish"), []string{"misc/plain.md"}) })
	if got := paths("quokkafish"); len(got) != 0 {
		t.Fatalf("the old text is still found under %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if logged.Len() > 0 {
		t.Fatalf("warnings:\n%s", logged.String())
	}
}
