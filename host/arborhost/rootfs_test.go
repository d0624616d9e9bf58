package arborhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/host/rootlock"
)

func newRoot(t *testing.T) (*RootFS, string) {
	t.Helper()
	dir := t.TempDir()
	r, err := NewRootFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, r.Dir()
}

func mustWrite(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, what string, err error, code int32) {
	t.Helper()
	if got := errorCode(err); got != code {
		t.Errorf("%s: code %d, want %d (err: %v)", what, got, code, err)
	}
}

func TestCheckPath(t *testing.T) {
	good := []string{"", "a", "a/b/c.md", ".arbor", ".arbor/state.json", ".arbor/index/0001.seg",
		".arbor/.gitignore", ".arbor/.tmp", "Notes With Spaces/Über.md", "가치관/노트.md", "a..b/c", "a/b.c.d"}
	for _, p := range good {
		if err := checkPath(p); err != nil {
			t.Errorf("checkPath(%q) = %v, want nil", p, err)
		}
	}
	bad := []string{"/etc/passwd", "..", "../x", "a/../b", "a/..", ".", "./a", "a/./b", "a//b", "a/",
		"a\\b", "..\\x", "a\x00b", "a\nb", "a\x7fb", "a\u0085b", "\xff.md", ".git/config", ".obsidian",
		"a/.arbor/x", "a/.hidden.md", ".arborx/y", ".arborx/.gitignore", ".arbor/../.git/config"}
	for _, p := range bad {
		err := checkPath(p)
		if !errors.Is(err, host.ErrInvalid) {
			t.Errorf("checkPath(%q) = %v, want ErrInvalid", p, err)
		}
	}
}

func TestRootFSWriteRead(t *testing.T) {
	r, dir := newRoot(t)
	if err := r.WriteFile("eng/billing/retry.md", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("eng/billing/retry.md", []byte("version 2")); err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadFile("eng/billing/retry.md")
	if err != nil || string(got) != "version 2" {
		t.Fatalf("read = %q, %v", got, err)
	}
	if err := r.WriteFile("empty.md", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ReadFile("empty.md"); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("read empty = %q (nil %v), %v", got, got == nil, err)
	}
	if err := r.WriteFile(".arbor/state.json", []byte("{}")); err != nil {
		t.Fatalf(".arbor must be writable: %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, "eng/billing/retry.md"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v; want 0644", fi.Mode(), err)
	}
	// Atomic writes leave no temporary file behind.
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if strings.HasPrefix(d.Name(), ".arbor-tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return err
	})
}

func TestRootFSInvalidPaths(t *testing.T) {
	r, dir := newRoot(t)
	mustWrite(t, filepath.Join(dir, ".git/config"), "secret")
	for _, p := range []string{"/etc/passwd", "../x", "a/../../x", "a//b", "a\\b", "a/./b", "x\x01", "a\x00b", "a.md\x00", ".git/config", ".obsidian/app.json", "a/.arbor/x"} {
		_, err := r.ReadFile(p)
		wantCode(t, "read "+p, err, codeInvalid)
		wantCode(t, "write "+p, r.WriteFile(p, []byte("x")), codeInvalid)
		wantCode(t, "remove "+p, r.Remove(p), codeInvalid)
		wantCode(t, "rename from "+p, r.Rename(p, "ok.md"), codeInvalid)
		wantCode(t, "rename to "+p, r.Rename("ok.md", p), codeInvalid)
		_, err = r.ReadDir(p)
		wantCode(t, "list "+p, err, codeInvalid)
		_, err = r.Stat(p)
		wantCode(t, "stat "+p, err, codeInvalid)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".git/config")); string(b) != "secret" {
		t.Fatal(".git/config changed")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "x")); err == nil {
		t.Fatal("a file was written outside the root")
	}
}

func TestRootFSSymlinkEscape(t *testing.T) {
	r, dir := newRoot(t)
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "secret.md"), "secret")
	mustWrite(t, filepath.Join(dir, "notes/inside.md"), "inside")
	links := map[string]string{
		"out":            outside,                                  // a folder outside
		"evil.md":        filepath.Join(outside, "secret.md"),      // a file outside
		"notes/up":       "../..",                                  // relative, climbing out
		"dangling":       filepath.Join(outside, "missing", "dir"), // leads nowhere (yet)
		"notes/alias.md": filepath.Join(dir, "notes/inside.md"),    // stays inside
		"notes/same":     ".",                                      // a folder inside
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	for _, p := range []string{"out/secret.md", "evil.md", "notes/up/" + filepath.Base(outside) + "/secret.md", "dangling/x.md"} {
		_, err := r.ReadFile(p)
		wantCode(t, "read "+p, err, codeDenied)
		_, err = r.Stat(p)
		wantCode(t, "stat "+p, err, codeDenied)
		wantCode(t, "remove "+p, r.Remove(p), codeDenied)
		wantCode(t, "rename from "+p, r.Rename(p, "stolen.md"), codeDenied)
	}
	for _, p := range []string{"out/new.md", "out/sub/new.md", "evil.md", "dangling/x.md", "notes/alias.md"} {
		wantCode(t, "write "+p, r.WriteFile(p, []byte("pwned")), codeDenied)
	}
	wantCode(t, "rename to out/", r.Rename("notes/inside.md", "out/moved.md"), codeDenied)
	for _, p := range []string{"out", "dangling"} {
		_, err := r.ReadDir(p)
		wantCode(t, "list "+p, err, codeDenied)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.md")); string(b) != "secret" {
		t.Fatal("the file outside the root changed")
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != 1 {
		t.Fatalf("files appeared outside the root: %v", ents)
	}
	// Links that stay inside the root are not followed either: what they
	// lead to is read under its own name (TestRootFSFollowsNoLinkInTheTree).
	_, err := r.ReadFile("notes/alias.md")
	wantCode(t, "read through an inside link", err, codeDenied)
	_, err = r.ReadFile("notes/same/inside.md")
	wantCode(t, "read through an inside folder link", err, codeDenied)
	// The listing leaves every link out, inside or not.
	list, err := r.ReadDir("notes")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "inside.md" {
		t.Fatalf("listing of links: %+v", list)
	}
	// Writes never pass through a link, even one inside the root: removing
	// notes/same/inside.md would remove notes/inside.md, which a DELETE of
	// the link's folder must never do. The link itself may go.
	wantCode(t, "remove through a link", r.Remove("notes/same/inside.md"), codeDenied)
	wantCode(t, "write through a link", r.WriteFile("notes/same/inside.md", []byte("x")), codeDenied)
	wantCode(t, "append through a link", r.Append("notes/same/log.md", []byte("x")), codeDenied)
	wantCode(t, "rename through a link", r.Rename("notes/same/inside.md", "moved.md"), codeDenied)
	wantCode(t, "rename into a link", r.Rename("notes/inside.md", "notes/same/moved.md"), codeDenied)
	if b, _ := os.ReadFile(filepath.Join(dir, "notes/inside.md")); string(b) != "inside" {
		t.Fatalf("a write through a link changed its target: %q", b)
	}
	if err := r.Remove("notes/same"); err != nil {
		t.Fatalf("remove the link itself: %v", err)
	}
}

func TestRootFSRootThroughSymlink(t *testing.T) {
	real := t.TempDir()
	mustWrite(t, filepath.Join(real, "a.md"), "a")
	link := filepath.Join(t.TempDir(), "root")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	r, err := NewRootFS(link)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := r.ReadFile("a.md"); err != nil || string(b) != "a" {
		t.Fatalf("read = %q, %v", b, err)
	}
	if err := r.WriteFile("b/c.md", []byte("c")); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRootFS(filepath.Join(real, "a.md")); err == nil {
		t.Fatal("a file accepted as root")
	}
	if _, err := NewRootFS(filepath.Join(real, "missing")); err == nil {
		t.Fatal("a missing folder accepted as root")
	}
}

func TestRootFSErrorCodes(t *testing.T) {
	r, dir := newRoot(t)
	mustWrite(t, filepath.Join(dir, "a/b.md"), "b")
	_, err := r.ReadFile("missing.md")
	wantCode(t, "read missing", err, codeNotFound)
	_, err = r.ReadFile("a/b.md/c")
	wantCode(t, "read below a file", err, codeNotFound)
	_, err = r.ReadFile("a")
	wantCode(t, "read a folder", err, codeInvalid)
	_, err = r.ReadDir("a/b.md")
	wantCode(t, "list a file", err, codeInvalid)
	_, err = r.ReadDir("missing")
	wantCode(t, "list missing", err, codeNotFound)
	_, err = r.Stat("missing")
	wantCode(t, "stat missing", err, codeNotFound)
	wantCode(t, "write a folder", r.WriteFile("a", []byte("x")), codeInvalid)
	wantCode(t, "write below a file", r.WriteFile("a/b.md/c.md", []byte("x")), codeInvalid)
	wantCode(t, "write root", r.WriteFile("", []byte("x")), codeInvalid)
	wantCode(t, "remove root", r.Remove(""), codeInvalid)
	wantCode(t, "remove non-empty", r.Remove("a"), codeInvalid)
	wantCode(t, "remove missing", r.Remove("missing.md"), codeNotFound)
	wantCode(t, "rename missing", r.Rename("missing.md", "x.md"), codeNotFound)
	wantCode(t, "rename onto a folder", r.Rename("a/b.md", "a"), codeInvalid)

	if err := r.Rename("a/b.md", "x/y/z.md"); err != nil {
		t.Fatalf("rename creating parents: %v", err)
	}
	mustWrite(t, filepath.Join(dir, "old.md"), "new content")
	mustWrite(t, filepath.Join(dir, "target.md"), "old content")
	if err := r.Rename("old.md", "target.md"); err != nil {
		t.Fatal(err)
	}
	if b, _ := r.ReadFile("target.md"); string(b) != "new content" {
		t.Fatalf("rename did not replace: %q", b)
	}
	wantCode(t, "remove file", r.Remove("target.md"), codeOK)
	wantCode(t, "remove emptied folder", r.Remove("a"), codeOK)
	st, err := r.Stat("")
	if err != nil || !st.IsDir || st.Name != "" {
		t.Fatalf("stat root = %+v, %v", st, err)
	}
}

// sliceMem is a guest memory for the import functions.
type sliceMem []byte

func (m sliceMem) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(m)) {
		return nil, false
	}
	return m[off : off+n], true
}

func (m sliceMem) Write(off uint32, v []byte) bool {
	if uint64(off)+uint64(len(v)) > uint64(len(m)) {
		return false
	}
	copy(m[off:], v)
	return true
}

// put writes s at off and returns its (ptr, len).
func (m sliceMem) put(off uint32, s string) (uint32, uint32) {
	copy(m[off:], s)
	return off, uint32(len(s))
}

func TestABISizeProtocol(t *testing.T) {
	r, dir := newRoot(t)
	content := "---\ntitle: Retry\n---\nbody"
	mustWrite(t, filepath.Join(dir, "eng/retry.md"), content)
	mustWrite(t, filepath.Join(dir, ".arbor/state.json"), "{}")
	os.MkdirAll(filepath.Join(dir, "eng/billing"), 0o755)
	mem := make(sliceMem, 4096)
	pp, pl := mem.put(0, "eng/retry.md")
	const buf = 1024

	// Too small: the size comes back, nothing is copied.
	n := r.abiRead(mem, pp, pl, buf, 4)
	if n != int32(len(content)) || mem[buf] != 0 {
		t.Fatalf("small buffer: n = %d, copied %q", n, mem[buf:buf+4])
	}
	if n = r.abiRead(mem, pp, pl, buf, 0); n != int32(len(content)) {
		t.Fatalf("zero buffer: n = %d", n)
	}
	if n = r.abiRead(mem, pp, pl, buf, uint32(n)); string(mem[buf:buf+n]) != content {
		t.Fatalf("read %d: %q", n, mem[buf:buf+n])
	}
	// A larger buffer: the file's bytes, and nothing written past them.
	clear(mem[buf:])
	if n = r.abiRead(mem, pp, pl, buf, 2048); n != int32(len(content)) || string(mem[buf:buf+n]) != content || mem[buf+n] != 0 {
		t.Fatalf("large buffer: read %d: %q", n, mem[buf:buf+n+1])
	}

	// list: sorted JSON array of {name, dir, size, mtime, ctime, ino}, dot-names included.
	rootP, rootL := uint32(0), uint32(0)
	need := r.abiList(mem, rootP, rootL, buf, 2)
	if need <= 2 {
		t.Fatalf("list size = %d", need)
	}
	if got := r.abiList(mem, rootP, rootL, buf, uint32(need)); got != need {
		t.Fatalf("list = %d, want %d", got, need)
	}
	var root []map[string]any
	if err := json.Unmarshal(mem[buf:buf+need], &root); err != nil {
		t.Fatalf("list JSON: %v: %s", err, mem[buf:buf+need])
	}
	if len(root) != 2 || root[0]["name"] != ".arbor" || root[1]["name"] != "eng" || root[1]["dir"] != true {
		t.Fatalf("root listing: %s", mem[buf:buf+need])
	}
	for _, e := range root {
		if len(e) != 6 || e["size"] == nil || e["mtime"].(float64) <= 0 || e["ctime"].(float64) < e["mtime"].(float64) || e["ino"].(float64) <= 0 {
			t.Fatalf("entry shape: %v", e)
		}
	}
	pp, pl = mem.put(0, "eng")
	need = r.abiList(mem, pp, pl, buf, 3000)
	var eng []struct {
		Name  string `json:"name"`
		Dir   bool   `json:"dir"`
		Size  int64  `json:"size"`
		Mtime int64  `json:"mtime"`
	}
	if err := json.Unmarshal(mem[buf:buf+need], &eng); err != nil {
		t.Fatal(err)
	}
	if len(eng) != 2 || eng[0].Name != "billing" || !eng[0].Dir || eng[0].Size != 0 ||
		eng[1].Name != "retry.md" || eng[1].Dir || eng[1].Size != int64(len(content)) {
		t.Fatalf("eng listing: %+v", eng)
	}
	// An empty folder lists as [].
	pp, pl = mem.put(0, "eng/billing")
	if n := r.abiList(mem, pp, pl, buf, 100); string(mem[buf:buf+n]) != "[]" {
		t.Fatalf("empty listing: %q", mem[buf:buf+n])
	}

	// stat: one object, same protocol.
	pp, pl = mem.put(0, "eng/retry.md")
	need = r.abiStat(mem, pp, pl, buf, 1)
	if need <= 1 || r.abiStat(mem, pp, pl, buf, uint32(need)) != need {
		t.Fatalf("stat size protocol: %d", need)
	}
	var st map[string]any
	if err := json.Unmarshal(mem[buf:buf+need], &st); err != nil || st["name"] != "retry.md" || st["size"].(float64) != float64(len(content)) {
		t.Fatalf("stat = %s (%v)", mem[buf:buf+need], err)
	}
}

func TestABIReadAt(t *testing.T) {
	r, _ := newRoot(t)
	if err := r.WriteFile("notes/digits.md", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	mem := make(sliceMem, 256)
	pp, pl := mem.put(0, "notes/digits.md")
	const buf = 128
	for _, c := range []struct {
		off  int64
		n    uint32
		want string
	}{{3, 4, "3456"}, {8, 4, "89"}, {10, 4, ""}, {20, 4, ""}, {0, 0, ""}} {
		clear(mem[buf:])
		if rc := r.abiReadAt(mem, pp, pl, c.off, buf, c.n); rc != int32(len(c.want)) || string(mem[buf:buf+len(c.want)]) != c.want {
			t.Errorf("at %d, %d bytes: %d %q, want %q", c.off, c.n, rc, mem[buf:buf+rc], c.want)
		}
	}
	if rc := r.abiReadAt(mem, pp, pl, -1, buf, 4); rc != codeInvalid {
		t.Errorf("a negative offset: %d, want %d", rc, codeInvalid)
	}
	dp, dl := mem.put(64, "notes")
	if rc := r.abiReadAt(mem, dp, dl, 0, buf, 4); rc != codeInvalid {
		t.Errorf("a directory: %d, want %d", rc, codeInvalid)
	}
	mp, ml := mem.put(64, "notes/none.md")
	if rc := r.abiReadAt(mem, mp, ml, 0, buf, 4); rc != codeNotFound {
		t.Errorf("a missing file: %d, want %d", rc, codeNotFound)
	}
	if rc := r.abiReadAt(mem, pp, pl, 0, 250, 100); rc != codeInvalid {
		t.Errorf("a buffer past the end of memory: %d, want %d", rc, codeInvalid)
	}
}

func TestABIWriteRemoveRename(t *testing.T) {
	r, dir := newRoot(t)
	mem := make(sliceMem, 4096)
	pp, pl := mem.put(0, "a/b/c.md")
	dp, dl := mem.put(100, "hello")
	if rc := errorCode(r.abiWrite(mem, pp, pl, dp, dl)); rc != 0 {
		t.Fatalf("write rc %d", rc)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a/b/c.md")); string(b) != "hello" {
		t.Fatalf("written %q", b)
	}
	tp, tl := mem.put(200, "d/e.md")
	if rc := errorCode(r.abiRename(mem, pp, pl, tp, tl)); rc != 0 {
		t.Fatalf("rename rc %d", rc)
	}
	if rc := errorCode(r.abiRemove(mem, tp, tl)); rc != 0 {
		t.Fatalf("remove rc %d", rc)
	}
	if rc := errorCode(r.abiRemove(mem, tp, tl)); rc != codeNotFound {
		t.Fatalf("remove again rc %d", rc)
	}
	bp, bl := mem.put(300, "../escape.md")
	if rc := errorCode(r.abiWrite(mem, bp, bl, dp, dl)); rc != codeInvalid {
		t.Fatalf("write ../ rc %d", rc)
	}
}

// fs_append adds to a file (creating it and its folders), refuses what
// fs_write refuses; fs_lock and fs_unlock take and release .arbor/lock.
func TestABIAppendAndLock(t *testing.T) {
	r, dir := newRoot(t)
	mem := make(sliceMem, 4096)
	pp, pl := mem.put(0, ".arbor/audit.jsonl")
	for i, line := range []string{"one\n", "two\n"} {
		dp, dl := mem.put(uint32(100+10*i), line)
		if rc := errorCode(r.abiAppend(mem, pp, pl, dp, dl)); rc != 0 {
			t.Fatalf("append rc %d", rc)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".arbor/audit.jsonl")); string(b) != "one\ntwo\n" {
		t.Fatalf("appended %q", b)
	}
	bp, bl := mem.put(300, "../escape.log")
	if rc := errorCode(r.abiAppend(mem, bp, bl, 100, 4)); rc != codeInvalid {
		t.Fatalf("append ../ rc %d", rc)
	}
	if err := os.Symlink(filepath.Join(dir, "target"), filepath.Join(dir, "link.log")); err != nil {
		t.Fatal(err)
	}
	lp, ll := mem.put(400, "link.log")
	if rc := errorCode(r.abiAppend(mem, lp, ll, 100, 4)); rc != codeDenied {
		t.Fatalf("append through a symbolic link rc %d", rc)
	}

	if err := r.Lock(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".arbor/lock")); err != nil {
		t.Fatalf("no lock file while locked: %v", err)
	}
	other, _ := NewRootFS(dir) // another engine on the same root
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := other.LockContext(ctx); !errors.Is(err, host.ErrBusy) || errorCode(err) != codeBusy {
		t.Fatalf("a second lock: %v", err)
	}
	if err := r.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(); err != nil {
		t.Fatalf("unlocking twice: %v", err)
	}
	if err := other.Lock(); err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	other.Unlock()
}

// fs_swap writes only over what the caller read: a file changed since
// (or created, or removed) is left as it is, with no temporary file.
func TestABISwap(t *testing.T) {
	r, dir := newRoot(t)
	mem := make(sliceMem, 4096)
	pp, pl := mem.put(0, "a/b.md")
	np, nl := mem.put(100, "new")
	op, ol := mem.put(200, "old")
	if rc := errorCode(r.abiSwap(mem, pp, pl, op, ol, 0, 0, 0)); rc != 0 {
		t.Fatalf("create when absent: rc %d", rc)
	}
	if rc := errorCode(r.abiSwap(mem, pp, pl, np, nl, op, ol, 0)); rc != codeChanged {
		t.Fatalf("create over an existing file: rc %d", rc)
	}
	if rc := errorCode(r.abiSwap(mem, pp, pl, np, nl, op, ol, 1)); rc != 0 {
		t.Fatalf("replace what was read: rc %d", rc)
	}
	if rc := errorCode(r.abiSwap(mem, pp, pl, op, ol, op, ol, 1)); rc != codeChanged {
		t.Fatalf("replace what changed: rc %d", rc)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a/b.md")); string(b) != "new" {
		t.Fatalf("content %q", b)
	}
	os.Remove(filepath.Join(dir, "a/b.md"))
	if rc := errorCode(r.abiSwap(mem, pp, pl, np, nl, np, nl, 1)); rc != codeChanged {
		t.Fatalf("replace a removed file: rc %d", rc)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "a")); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}

func TestABIOutOfRange(t *testing.T) {
	r, dir := newRoot(t)
	mustWrite(t, filepath.Join(dir, "a.md"), "a")
	mem := make(sliceMem, 64)
	pp, pl := mem.put(0, "a.md")
	cases := map[string]int32{
		"read: path out of range":   r.abiRead(mem, 60, 10, 0, 0),
		"read: huge path":           r.abiRead(mem, 0, 0xffffffff, 0, 0),
		"read: buffer out of range": r.abiRead(mem, pp, pl, 60, 10),
		"read: buffer wraps":        r.abiRead(mem, pp, pl, 0xfffffff0, 0x20),
		"write: path out of range":  errorCode(r.abiWrite(mem, 100, 4, 0, 1)),
		"write: data out of range":  errorCode(r.abiWrite(mem, pp, pl, 63, 2)),
		"remove: path out of range": errorCode(r.abiRemove(mem, 64, 1)),
		"rename: from out of range": errorCode(r.abiRename(mem, 64, 1, pp, pl)),
		"rename: to out of range":   errorCode(r.abiRename(mem, pp, pl, 0xffffffff, 1)),
		"list: path out of range":   r.abiList(mem, 70, 1, 0, 8),
		"list: buffer out of range": r.abiList(mem, 0, 0, 32, 64),
		"stat: buffer out of range": r.abiStat(mem, pp, pl, 63, 40),
	}
	for what, rc := range cases {
		if rc != codeInvalid {
			t.Errorf("%s: rc %d, want %d", what, rc, codeInvalid)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.md")); string(b) != "a" {
		t.Fatalf("a.md changed: %q", b)
	}
}

// Each kind of path that breaks the ABI's rules, through every import: the
// ABI codes are INVALID for a malformed path, DENIED for one that leaves
// the root through a symbolic link, and nothing changes on disk.
func TestABIRefusesPathsLeavingTheRoot(t *testing.T) {
	r, dir := newRoot(t)
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "secret.md"), "secret")
	mustWrite(t, filepath.Join(dir, "notes/inside.md"), "inside")
	// A folder whose name extends the root's: a string-prefix test of
	// "inside the root" would let it through.
	sibling := dir + "-sibling"
	mustWrite(t, filepath.Join(sibling, "secret.md"), "secret")
	symlinks := true
	for name, target := range map[string]string{
		"notes/file_link.md": filepath.Join(outside, "secret.md"), // a file link, leading out
		"notes/dir_link":     outside,                             // a folder link, leading out
		"notes/climb":        "../..",                             // relative, climbing out
		"notes/hop":          "climb",                             // an inside link to a link leading out
		"parent":             outside,                             // a symlinked parent folder
		"notes/sibling":      sibling,                             // outside, though its name starts like the root's
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			symlinks = false
			break
		}
	}
	up := filepath.Base(outside)
	cases := []struct {
		kind, path string
		code       int32
		symlink    bool
	}{
		{"traversal", "../secret.md", codeInvalid, false},
		{"traversal inside", "notes/../../secret.md", codeInvalid, false},
		{"absolute", filepath.Join(outside, "secret.md"), codeInvalid, false},
		{"absolute slash", "/secret.md", codeInvalid, false},
		{"backslash", `notes\inside.md`, codeInvalid, false},
		{"backslash traversal", `..\secret.md`, codeInvalid, false},
		{"NUL", "notes/inside.md\x00../../secret.md", codeInvalid, false},
		{"NUL alone", "notes/\x00", codeInvalid, false},
		{"file symlink", "notes/file_link.md", codeDenied, true},
		{"directory symlink", "notes/dir_link/secret.md", codeDenied, true},
		{"relative symlink", "notes/climb/" + up + "/secret.md", codeDenied, true},
		{"symlink to a symlink", "notes/hop/" + up + "/secret.md", codeDenied, true},
		{"symlinked parent", "parent/secret.md", codeDenied, true},
		{"new file below a symlinked parent", "parent/new/deeper.md", codeDenied, true},
		{"symlink to a look-alike of the root", "notes/sibling/secret.md", codeDenied, true},
	}
	mem := make(sliceMem, 8192)
	const buf = 4096
	dp, dl := mem.put(6000, "pwned")
	inP, inL := mem.put(7000, "notes/inside.md")
	for _, c := range cases {
		if c.symlink && !symlinks {
			continue
		}
		pp, pl := mem.put(0, c.path)
		got := map[string]int32{
			"fs_read":        r.abiRead(mem, pp, pl, buf, 1024),
			"fs_read_at":     r.abiReadAt(mem, pp, pl, 0, buf, 1024),
			"fs_stat":        r.abiStat(mem, pp, pl, buf, 1024),
			"fs_list":        r.abiList(mem, pp, pl, buf, 1024),
			"fs_write":       errorCode(r.abiWrite(mem, pp, pl, dp, dl)),
			"fs_remove":      errorCode(r.abiRemove(mem, pp, pl)),
			"fs_rename from": errorCode(r.abiRename(mem, pp, pl, inP, inL)),
			"fs_rename to":   errorCode(r.abiRename(mem, inP, inL, pp, pl)),
		}
		for imp, rc := range got {
			if rc != c.code {
				t.Errorf("%s %q: %s = %d, want %d", c.kind, c.path, imp, rc, c.code)
			}
		}
		if mem[buf] != 0 {
			t.Fatalf("%s %q: bytes were copied into the guest buffer: %q", c.kind, c.path, mem[buf:buf+16])
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.md")); string(b) != "secret" {
		t.Fatal("the file outside the root changed")
	}
	for _, d := range []string{outside, sibling} {
		if ents, _ := os.ReadDir(d); len(ents) != 1 {
			t.Fatalf("files appeared outside the root: %v", ents)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes/inside.md")); err != nil || string(b) != "inside" {
		t.Fatalf("notes/inside.md: %q, %v", b, err)
	}
}

// A write that fails after its temporary file is complete leaves the old
// content and no temporary file behind.
func TestRootFSAtomicWriteFailure(t *testing.T) {
	r, dir := newRoot(t)
	mustWrite(t, filepath.Join(dir, "eng/retry.md"), "old content")
	failed := errors.New("injected rename failure")
	renameFile = func(string, string) error { return failed }
	t.Cleanup(func() { renameFile = os.Rename })

	for _, p := range []string{"eng/retry.md", "eng/new.md", "new/folder/entry.md"} {
		err := r.WriteFile(p, []byte("new content"))
		if !errors.Is(err, failed) || errorCode(err) != codeIO {
			t.Errorf("write %s: %v (code %d), want the injected failure as IO", p, err, errorCode(err))
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "eng/retry.md")); string(b) != "old content" {
		t.Fatalf("a failed write changed the file: %q", b)
	}
	// Nor the folders it made for the file (a full disk fails the file
	// after they were made): an empty domain or topic in the tree.
	for _, p := range []string{"eng/new.md", "new/folder/entry.md", "new"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("a failed write created %s", p)
		}
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".arbor-tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return err
	})

	// The temporary file is a sibling of the target, so that the rename
	// stays within one file system and is atomic.
	var from, to string
	renameFile = func(f, t string) error { from, to = f, t; return os.Rename(f, t) }
	if err := r.WriteFile("eng/retry.md", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(from) != filepath.Dir(to) || !strings.HasPrefix(filepath.Base(from), ".arbor-tmp-") {
		t.Fatalf("renamed %s to %s: want a .arbor-tmp- file in the same folder", from, to)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "eng/retry.md")); string(b) != "v2" {
		t.Fatalf("after a good write: %q", b)
	}
}

// A read-only root refuses every write with host.ErrReadOnly (DENIED over
// the ABI) before looking at the path, takes no lock, and serves reads as
// before.
func TestRootFSReadOnly(t *testing.T) {
	w, dir := newRoot(t)
	if err := w.WriteFile("notes/a.md", []byte("a")); err != nil {
		t.Fatal(err)
	}
	r := w.ReadOnly()
	if !r.IsReadOnly() || w.IsReadOnly() {
		t.Fatal("ReadOnly must return a read-only copy and leave the root writable")
	}
	for name, err := range map[string]error{
		"write":        r.WriteFile("notes/b.md", []byte("b")),
		"overwrite":    r.WriteFile("notes/a.md", []byte("changed")),
		"append":       r.Append(".arbor/audit.jsonl", []byte("{}\n")),
		"remove":       r.Remove("notes/a.md"),
		"rename":       r.Rename("notes/a.md", "notes/c.md"),
		"invalid path": r.WriteFile("../x.md", nil),
	} {
		if !errors.Is(err, host.ErrReadOnly) || !errors.Is(err, host.ErrDenied) {
			t.Errorf("%s: %v, want host.ErrReadOnly", name, err)
		}
		wantCode(t, name, err, codeDenied)
	}
	if b, err := r.ReadFile("notes/a.md"); err != nil || string(b) != "a" {
		t.Fatalf("read: %q %v", b, err)
	}
	if ents, err := r.ReadDir("notes"); err != nil || len(ents) != 1 {
		t.Fatalf("list: %v %v", ents, err)
	}
	// The lock is a file: the grant takes none, and writes none.
	if err := r.Lock(); err != nil {
		t.Fatalf("lock: %v", err)
	}
	if err := r.Unlock(); err != nil {
		t.Fatalf("unlock: %v", err)
	}
	for _, p := range []string{"notes/b.md", ".arbor"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s was written: %v", p, err)
		}
	}
}

// ReadAt keeps the files it reads open, but answers for what the path
// names now: a file replaced, rewritten in place or removed since is read
// again, or not found.
func TestReadAtFollowsThePath(t *testing.T) {
	r, dir := newRoot(t)
	const p = ".arbor/index/a.seg"
	full := filepath.Join(dir, filepath.FromSlash(p))
	read := func(want string) {
		t.Helper()
		buf := make([]byte, 4)
		n, err := r.ReadAt(p, buf, 2)
		if (err != nil && !errors.Is(err, io.EOF)) || string(buf[:n]) != want {
			t.Fatalf("ReadAt: %q, %v; want %q", buf[:n], err, want)
		}
	}
	if err := r.WriteFile(p, []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	read("2345")
	read("2345")
	if err := r.WriteFile(p, []byte("abcdefghij")); err != nil { // a new file renamed over it
		t.Fatal(err)
	}
	read("cdef")
	if err := os.WriteFile(full, []byte("ABCDEFGHIJKL"), 0o644); err != nil { // the same file rewritten
		t.Fatal(err)
	}
	read("CDEF")
	if err := os.Remove(full); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAt(p, make([]byte, 4), 2); !errors.Is(err, host.ErrNotFound) {
		t.Fatalf("ReadAt of a removed file: %v", err)
	}
	// A link swapped in for a file read before is checked again.
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile(p, []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	read("2345")
	if err := os.Remove(full); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, full); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAt(p, make([]byte, 4), 2); !errors.Is(err, host.ErrDenied) {
		t.Fatalf("ReadAt through a link out of the root: %v", err)
	}
}

// A listing describes each entry as os.Lstat does, whichever way lstatIn
// asks the system; a symbolic link of the tree is left out.
func TestRootFSListingMatchesLstat(t *testing.T) {
	r, dir := newRoot(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "notes", "sub"), 0o755))
	for i, name := range []string{"b.md", "a.md", "c.txt", "Z.md"} {
		must(os.WriteFile(filepath.Join(dir, "notes", name), bytes.Repeat([]byte("x"), 10*i+1), 0o644))
	}
	when := time.Date(2025, 3, 4, 5, 6, 7, 891_234_567, time.UTC)
	must(os.Chtimes(filepath.Join(dir, "notes", "a.md"), when, when))
	linked := os.Symlink("a.md", filepath.Join(dir, "notes", "link.md")) == nil
	got, err := r.ReadDir("notes")
	must(err)
	ents, err := os.ReadDir(filepath.Join(dir, "notes"))
	must(err)
	ents = slices.DeleteFunc(ents, func(e os.DirEntry) bool { return e.Type()&fs.ModeSymlink != 0 })
	if len(got) != len(ents) {
		t.Fatalf("listed %d entries, the system %d", len(got), len(ents))
	}
	for i, e := range ents {
		fi, err := os.Lstat(filepath.Join(dir, "notes", e.Name()))
		must(err)
		if want := dirEntry(e.Name(), fi); got[i] != want {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want)
		}
	}
	if got[1].Name != "a.md" || got[1].ModTime != when.UnixMilli() {
		t.Errorf("a.md: %+v, want its time %d", got[1], when.UnixMilli())
	}
	if !linked {
		t.Log("no symbolic links here: the link case was not run")
	}
}

// A symbolic link in the tree, to a folder or a file inside the root, is
// not followed: what it leads to is read once, under its own name. Read
// under both names, a linked folder's entries were found twice, and a
// watching engine, which hears an edit under the real name only, kept the
// old text under the other. The engine's own .arbor folder is not the
// tree: a link there is read as before.
func TestRootFSFollowsNoLinkInTheTree(t *testing.T) {
	r, dir := newRoot(t)
	mustWrite(t, filepath.Join(dir, "eng/deploy/deploy.md"), "deploy")
	mustWrite(t, filepath.Join(dir, "misc/plain.md"), "plain")
	mustWrite(t, filepath.Join(dir, "ops/own.md"), "own")
	mustWrite(t, filepath.Join(dir, ".arbor/manifest.json"), "{}")
	for name, target := range map[string]string{
		"ops/alias":          "../eng",           // a folder inside the root
		"ops/plain.md":       "../misc/plain.md", // a file inside the root
		"ops/absolute":       filepath.Join(dir, "eng"),
		"ops/up":             "..",            // the root itself
		".arbor/ingest.json": "manifest.json", // the engine's state, not the tree
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	// Listings and walks leave the links out.
	list, err := r.ReadDir("ops")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "own.md" {
		t.Fatalf("ReadDir(ops) = %+v, want own.md alone", list)
	}
	var walked []string
	if err := r.Walk("", func(d string, l []host.DirEntry) error {
		for _, e := range l {
			walked = append(walked, joinRel(d, e.Name))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"eng", "misc", "ops", "eng/deploy", "eng/deploy/deploy.md", "misc/plain.md", "ops/own.md"}
	if !slices.Equal(walked, want) {
		t.Fatalf("walked %q, want %q", walked, want)
	}
	// A read, a listing or a stat naming a link, or a path through one, is
	// refused, naming the path to read instead.
	for p, real := range map[string]string{
		"ops/alias":                  `"eng"`,
		"ops/alias/deploy":           `"eng/deploy"`,
		"ops/alias/deploy/deploy.md": `"eng/deploy/deploy.md"`,
		"ops/absolute/deploy":        `"eng/deploy"`,
		"ops/plain.md":               `"misc/plain.md"`,
		"ops/up/misc/plain.md":       `"misc/plain.md"`,
	} {
		_, err := r.ReadFile(p)
		wantCode(t, "read "+p, err, codeDenied)
		if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), real) {
			t.Errorf("read %s: %v, want it to name the link and %s", p, err, real)
		}
		_, err = r.ReadAt(p, make([]byte, 4), 0)
		wantCode(t, "read at "+p, err, codeDenied)
		_, err = r.Stat(p)
		wantCode(t, "stat "+p, err, codeDenied)
		_, err = r.ReadDir(p)
		wantCode(t, "list "+p, err, codeDenied)
		err = r.Walk(p, func(string, []host.DirEntry) error { return nil })
		wantCode(t, "walk "+p, err, codeDenied)
	}
	// In .arbor a link inside the root is read as before.
	if b, err := r.ReadFile(".arbor/ingest.json"); err != nil || string(b) != "{}" {
		t.Fatalf("read .arbor/ingest.json = %q, %v", b, err)
	}
	// The link itself may still be removed; nothing it leads to changes.
	if err := r.Remove("ops/alias"); err != nil {
		t.Fatalf("remove the link itself: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "eng/deploy/deploy.md")); err != nil || string(b) != "deploy" {
		t.Fatalf("eng/deploy/deploy.md = %q, %v", b, err)
	}
}

// An append that fails part way (a disk that fills up takes some of the
// bytes) leaves the file as it was: the torn bytes, left, would be read
// with the next append as one line (the audit log's next record lost).
func TestRootFSFailedAppendChangesNothing(t *testing.T) {
	r, dir := newRoot(t)
	full := errors.New("no space left on device")
	appendFile = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2])
		return n, full
	}
	t.Cleanup(func() { appendFile = (*os.File).Write })
	mustWrite(t, filepath.Join(dir, ".arbor/audit.jsonl"), "{\"op\":\"ADD\"}\n")
	for _, p := range []string{".arbor/audit.jsonl", ".arbor/new.jsonl"} {
		if err := r.Append(p, []byte("{\"op\":\"UPDATE\"}\n")); !errors.Is(err, full) || errorCode(err) != codeIO {
			t.Errorf("append %s: %v, want the failure as IO", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".arbor/audit.jsonl")); string(b) != "{\"op\":\"ADD\"}\n" {
		t.Errorf("a failed append left %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, ".arbor/new.jsonl")); err == nil {
		t.Error("a failed append created its file")
	}
	if err := r.Append("logs/day/a.jsonl", []byte("{}\n")); !errors.Is(err, full) {
		t.Fatalf("append in new folders: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "logs")); err == nil {
		t.Error("a failed append left the folders it made")
	}
}

// A write the system fails reaches the engine as a code; the host logs
// why, which the code cannot carry. A full disk or quota has a code of its
// own (NO_SPACE, -8), any other failure is IO.
func TestFailedWriteIsLoggedWithItsCause(t *testing.T) {
	for _, tc := range []struct {
		errno syscall.Errno
		rc    int32
		kind  string
	}{
		{syscall.ENOSPC, codeNoSpace, "no space left on the storage"},
		{syscall.EDQUOT, codeNoSpace, "no space left on the storage"},
		{syscall.EIO, codeIO, "i/o error"},
	} {
		r, _ := newRoot(t)
		failed := fmt.Errorf("rename: %w", tc.errno)
		renameFile = func(string, string) error { return failed }
		t.Cleanup(func() { renameFile = os.Rename })
		var lines []string
		logf := func(_ context.Context, level int, msg string) { lines = append(lines, fmt.Sprint(level, " ", msg)) }
		if rc := r.logged(context.Background(), logf, "fs_write", r.WriteFile("eng/a.md", []byte("a"))); rc != tc.rc {
			t.Fatalf("%v: rc %d, want %d", tc.errno, rc, tc.rc)
		}
		if rc := r.logged(context.Background(), logf, "fs_remove", r.Remove("eng/none.md")); rc != codeNotFound {
			t.Fatalf("rc %d, want NOT_FOUND", rc)
		}
		if len(lines) != 1 || !strings.HasPrefix(lines[0], `2 fs_write: write "eng/a.md": `+tc.kind+": ") || !strings.Contains(lines[0], tc.errno.Error()) {
			t.Fatalf("%v: log: %q", tc.errno, lines)
		}
	}
}

// A root whose lock file cannot be written for want of space is served for
// reading, as one that refuses writes is: the lock is granted, reads are
// answered, and every write of the call is refused as a full disk (-8),
// the tree unchanged, until the lock is released.
func TestFullDiskServesReads(t *testing.T) {
	r, dir := newRoot(t)
	mustWrite(t, filepath.Join(dir, "eng/a.md"), "a")
	acquireLock = func(context.Context, string) (*rootlock.Lock, error) {
		return nil, fmt.Errorf("rootlock: create: %w: %w", rootlock.ErrNoSpace, syscall.ENOSPC)
	}
	t.Cleanup(func() { acquireLock = rootlock.Acquire })
	if err := r.Lock(); err != nil {
		t.Fatalf("lock on a full disk: %v", err)
	}
	if b, err := r.ReadFile("eng/a.md"); err != nil || string(b) != "a" {
		t.Fatalf("read on a full disk: %q, %v", b, err)
	}
	writes := map[string]error{
		"write":  r.WriteFile("eng/b.md", []byte("b")),
		"append": r.Append(".arbor/audit.jsonl", []byte("{}\n")),
		"remove": r.Remove("eng/a.md"),
		"rename": r.Rename("eng/a.md", "eng/c.md"),
	}
	for op, err := range writes {
		if !errors.Is(err, host.ErrNoSpace) || errorCode(err) != codeNoSpace {
			t.Errorf("%s while the lock could not be written: %v, want NO_SPACE", op, err)
		}
	}
	if names, _ := os.ReadDir(filepath.Join(dir, "eng")); len(names) != 1 {
		t.Fatalf("the refused writes changed the tree: %v", names)
	}
	if err := r.Unlock(); err != nil {
		t.Fatal(err)
	}
	acquireLock = rootlock.Acquire
	if err := r.Lock(); err != nil {
		t.Fatal(err)
	}
	defer r.Unlock()
	if err := r.WriteFile("eng/b.md", []byte("b")); err != nil {
		t.Fatalf("write once space is back: %v", err)
	}
}
