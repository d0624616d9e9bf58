package arborhost

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A read opened by openat2 (openQuick) answers as the checks of
// resolveRead do, for every kind of path: the same bytes, or an error of
// the same code saying the same. And the quick open is what reads a plain
// file of the tree, else it would measure nothing.
func TestOpenQuickReadsAsTheChecks(t *testing.T) {
	r, dir := newRoot(t)
	mustWrite(t, filepath.Join(dir, "eng/deploy/deploy.md"), "deploy")
	mustWrite(t, filepath.Join(dir, "misc/plain.md"), "plain")
	mustWrite(t, filepath.Join(dir, "misc/empty.md"), "")
	mustWrite(t, filepath.Join(dir, ".arbor/manifest.json"), "{}")
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "secret.md"), "secret")
	for name, target := range map[string]string{
		"ops/alias":          "../eng",
		"ops/plain.md":       "../misc/plain.md",
		"ops/out":            outside,
		"ops/secret.md":      filepath.Join(outside, "secret.md"),
		"ops/dangling.md":    "nowhere.md",
		".arbor/ingest.json": "manifest.json",
		".arbor/out.json":    filepath.Join(outside, "secret.md"),
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "misc/pipe.md"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	paths := []string{
		"eng/deploy/deploy.md", "misc/plain.md", "misc/empty.md", ".arbor/manifest.json",
		"ops/alias/deploy/deploy.md", "ops/plain.md", "ops/out/secret.md", "ops/secret.md",
		"ops/dangling.md", ".arbor/ingest.json", ".arbor/out.json",
		"misc/pipe.md", "misc", "misc/missing.md", "missing/deeper.md", "../x.md", "/etc/passwd",
	}
	read := func(p string) string {
		b, err := r.ReadFile(p)
		into := make([]byte, 64)
		n, errInto := r.readInto(p, into)
		if err != nil || errInto != nil {
			return fmt.Sprintf("error %d %v; %d %v", errorCode(err), err, errorCode(errInto), errInto)
		}
		return fmt.Sprintf("%q; %q", b, into[:n])
	}
	quick := map[string]string{}
	for _, p := range paths {
		quick[p] = read(p)
	}
	noOpenat2.Store(true)
	defer noOpenat2.Store(false)
	for _, p := range paths {
		if checked := read(p); quick[p] != checked {
			t.Errorf("read %s: openat2 gives %s, the checks %s", p, quick[p], checked)
		}
	}
	noOpenat2.Store(false)
	if _, _, ok := openQuick(filepath.Join(r.dir, "eng/deploy/deploy.md")); !ok {
		t.Fatal("a plain file of the tree was not opened by openat2")
	}
	if noOpenat2.Load() {
		t.Fatal("this kernel has no openat2: the quick open is never taken")
	}
}
