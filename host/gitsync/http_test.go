package gitsync_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/arbormem/arbor/host/gitsync"
	"github.com/arbormem/arbor/host/rootlock"
	"github.com/arbormem/arbor/internal/testroot"
)

// httpRemote serves the bare repositories under dir over git's smart HTTP
// protocol, through git's own git-http-backend (the server side every git
// host speaks), with pushes allowed. before, when set, runs on every
// request before git answers it; it may refuse the request by writing a
// response and returning false.
func httpRemote(t *testing.T, dir string, before func(w http.ResponseWriter, r *http.Request) bool) string {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("git is not installed: no git-http-backend to serve a remote")
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skip("no git-http-backend: ", err)
	}
	cgiHandler := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + dir, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=tester"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if before != nil && !before(w, r) {
			return
		}
		cgiHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func bareRepo(t *testing.T, dir, name string) {
	t.Helper()
	if _, err := git.PlainInit(filepath.Join(dir, name), true); err != nil {
		t.Fatal(err)
	}
}

// remoteHead is the bare repository and the head commit of its default
// branch.
func remoteHead(t *testing.T, bare string) (*git.Repository, *object.Commit) {
	t.Helper()
	r, err := git.PlainOpen(bare)
	if err != nil {
		t.Fatal(err)
	}
	head, err := r.Reference(plumbing.NewBranchReferenceName(gitsync.DefaultBranch), true)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.CommitObject(head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	return r, c
}

// pushedFiles lists the files of the remote branch's head.
func pushedFiles(t *testing.T, bare string) map[string]string {
	t.Helper()
	_, c := remoteHead(t, bare)
	tr, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	tr.Files().ForEach(func(f *object.File) error {
		out[f.Name], _ = f.Contents()
		return nil
	})
	return out
}

// While a sync waits for its remote, the root's lock is free: an engine
// writes meanwhile, and the sync commits and pushes that write too. A
// second sync of the root waits its turn.
func TestSyncLeavesTheRootFreeDuringNetwork(t *testing.T) {
	t.Setenv("ARBOR_GIT_TOKEN", "")
	dir := t.TempDir()
	bareRepo(t, dir, "team.git")
	var armed atomic.Bool
	var during []error
	a := filepath.Join(dir, "alice")
	url := httpRemote(t, dir, func(w http.ResponseWriter, r *http.Request) bool {
		if !armed.CompareAndSwap(true, false) {
			return true
		}
		// The sync is on the network: an engine takes the root's lock
		// and writes, and another sync of the root must wait.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		lock, err := rootlock.Acquire(ctx, a)
		if err != nil {
			during = append(during, err)
			return true
		}
		testroot.Write(t, a, "ops/pager/during.md", entry("Written meanwhile", "An engine wrote while the sync fetched.", "Written during the fetch."))
		lock.Release()
		short, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel2()
		if turn, err := rootlock.AcquireFile(short, a, ".arbor/sync.lock"); !errors.Is(err, rootlock.ErrBusy) {
			turn.Release()
			during = append(during, errors.New("a second sync did not have to wait for the first"))
		}
		return true
	}) + "/team.git"
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	testroot.Write(t, a, "ops/pager/rotation.md", entry("Pager rotation", "The pager rotates weekly.", "The pager rotates every Monday."))
	sync(t, a, url, &clock)

	testroot.Write(t, a, "ops/pager/escalation.md", entry("Escalation", "Pages escalate.", "Page the secondary."))
	armed.Store(true)
	rep := sync(t, a, "", &clock)
	if len(during) > 0 {
		t.Fatalf("while the sync was on the network: %v", during)
	}
	if armed.Load() {
		t.Fatal("the sync made no request to its remote")
	}
	if !rep.Pushed {
		t.Fatalf("the sync: %+v", rep)
	}
	pushed := pushedFiles(t, filepath.Join(dir, "team.git"))
	for _, p := range []string{"ops/pager/rotation.md", "ops/pager/escalation.md", "ops/pager/during.md"} {
		if pushed[p] != testroot.Read(t, a, p) {
			t.Errorf("%s: not pushed as the root has it", p)
		}
	}
}

// An HTTPS remote that wants a password gets the one git's credential
// helpers give, when neither the environment nor the URL has one; without
// a helper the sync fails clearly and changes nothing.
func TestSyncAuthFromCredentialHelper(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: no credential helpers")
	}
	t.Setenv("ARBOR_GIT_TOKEN", "")
	dir := t.TempDir()
	bareRepo(t, dir, "team.git")
	url := httpRemote(t, dir, func(w http.ResponseWriter, r *http.Request) bool {
		if user, pass, ok := r.BasicAuth(); ok && user == "alice" && pass == "s3cret" {
			return true
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="team"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return false
	}) + "/team.git"
	a := filepath.Join(dir, "alice")
	testroot.Write(t, a, "ops/pager/rotation.md", entry("Pager rotation", "The pager rotates weekly.", "The pager rotates every Monday."))
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

	// No helper: the user's git configuration is an empty file.
	cfg := filepath.Join(dir, "gitconfig")
	testroot.Write(t, dir, "gitconfig", "")
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	if _, err := gitsync.Sync(context.Background(), a, engine(t, a), gitsync.Options{Remote: url}); err == nil || !strings.Contains(err.Error(), "authentication required") {
		t.Fatalf("a sync without credentials: %v", err)
	}
	if _, err := os.Stat(filepath.Join(a, ".git")); err == nil {
		t.Error("the refused sync made the root a repository")
	}

	// A helper that knows this host (and logs what git asked it).
	asked := filepath.Join(dir, "asked")
	testroot.Write(t, dir, "gitconfig", "[credential]\n\thelper = \"!f() { cat > '"+asked+"'; echo username=alice; echo password=s3cret; }; f\"\n")
	if rep := sync(t, a, url, &clock); !rep.Pushed {
		t.Fatalf("the sync with a helper: %+v", rep)
	}
	if got := testroot.Read(t, dir, "asked"); !strings.Contains(got, "protocol=http\n") || !strings.Contains(got, "host=127.0.0.1:") {
		t.Errorf("git asked the helper:\n%s", got)
	}
	if pushed := pushedFiles(t, filepath.Join(dir, "team.git")); pushed["ops/pager/rotation.md"] != testroot.Read(t, a, "ops/pager/rotation.md") {
		t.Error("the entry was not pushed")
	}
}
