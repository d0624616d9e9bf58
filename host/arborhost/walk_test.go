package arborhost

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/host"
)

// walkRecord is one folder of a walk.
type walkRecord struct {
	Dir  string
	List []host.DirEntry
}

// readDirWalk is the walk the engine made before fs_walk, folder by folder
// with ReadDir, with the walk's rules: dot-names left out, a folder that
// is one above it (a link back up the tree) listed but not walked.
func readDirWalk(t *testing.T, r *RootFS, dir string, above []string) []walkRecord {
	t.Helper()
	real, err := filepath.EvalSymlinks(filepath.Join(r.Dir(), filepath.FromSlash(dir)))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range above {
		if a == real {
			return nil
		}
	}
	list, err := r.ReadDir(dir)
	if err != nil {
		t.Fatalf("ReadDir %q: %v", dir, err)
	}
	kept := []host.DirEntry{}
	for _, de := range list {
		if !strings.HasPrefix(de.Name, ".") {
			kept = append(kept, de)
		}
	}
	out := []walkRecord{{dir, kept}}
	for _, de := range kept {
		if de.IsDir {
			out = append(out, readDirWalk(t, r, joinRel(dir, de.Name), append(above, real))...)
		}
	}
	return out
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// nativeWalk collects RootFS.Walk.
func nativeWalk(t *testing.T, r *RootFS, dir string) []walkRecord {
	t.Helper()
	var out []walkRecord
	if err := r.Walk(dir, func(d string, list []host.DirEntry) error {
		if list == nil {
			list = []host.DirEntry{}
		}
		out = append(out, walkRecord{d, list})
		return nil
	}); err != nil {
		t.Fatalf("Walk %q: %v", dir, err)
	}
	return out
}

// abiWalk collects the walk of dir through fs_walk with a buffer of capacity
// bytes, resuming after each answer as the guest does, growing the buffer
// when a record does not fit. between runs before every call but the first.
func abiWalkAll(t *testing.T, r *RootFS, dir string, capacity uint32, between func(call int)) (out []walkRecord, calls, grown int) {
	t.Helper()
	after := ""
	for {
		mem := make(sliceMem, 1024+capacity)
		pp, pl := mem.put(0, dir)
		ap, al := mem.put(512, after)
		if calls > 0 && between != nil {
			between(calls)
		}
		calls++
		n := r.abiWalk(mem, pp, pl, ap, al, 1024, capacity)
		switch {
		case n < 0:
			t.Fatalf("fs_walk %q after %q: code %d", dir, after, n)
		case n == 0:
			return out, calls, grown
		case uint32(n) > capacity:
			if mem[1024] != 0 {
				t.Fatal("an answer too large was copied")
			}
			capacity = uint32(n)
			grown++
			continue
		}
		last, err := host.DecodeWalk(mem[1024:1024+n], func(d string, list []host.DirEntry) error {
			if list == nil {
				list = []host.DirEntry{}
			}
			out = append(out, walkRecord{d, list})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		after = last + "/"
		if calls > 100000 {
			t.Fatal("the walk does not end")
		}
	}
}

// randomTree writes a tree of folders, files, dot-names and links (inside
// the root, leaving it, and back up the tree) under dir.
func randomTree(t *testing.T, rng *rand.Rand, dir, outside string) {
	t.Helper()
	var folders []string
	var mk func(rel string, depth int)
	mk = func(rel string, depth int) {
		folders = append(folders, rel)
		full := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(full, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range rng.IntN(6) {
			name := fmt.Sprintf("f%d-%s.md", i, strings.Repeat("x", rng.IntN(20)))
			if rng.IntN(8) == 0 {
				name = "." + name
			}
			mustWrite(t, filepath.Join(full, name), strings.Repeat("y", rng.IntN(300)))
		}
		if depth < 4 {
			for i := range rng.IntN(4) {
				name := fmt.Sprintf("d%d", i)
				if rng.IntN(7) == 0 {
					name = ".hidden" + name
				}
				mk(joinRel(rel, name), depth+1)
			}
		}
	}
	mk("", 0)
	for i, f := range folders {
		if strings.Contains(f, ".") || rng.IntN(3) != 0 {
			continue
		}
		full := filepath.Join(dir, filepath.FromSlash(f))
		var target string
		switch rng.IntN(4) {
		case 0: // a folder elsewhere in the root
			target = filepath.Join(dir, filepath.FromSlash(folders[rng.IntN(len(folders))]))
		case 1: // a file or folder outside the root
			target = outside
		case 2: // back up the tree: a cycle
			target = dir
		case 3: // a file inside the root
			target = filepath.Join(full, "f0-.md")
			mustWrite(t, target, "z")
		}
		if err := os.Symlink(target, filepath.Join(full, fmt.Sprintf("link%d", i))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWalkEqualsReadDirWalk(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r, dir := newRoot(t)
			outside := t.TempDir()
			mustWrite(t, filepath.Join(outside, "secret.md"), "no")
			randomTree(t, rand.New(rand.NewPCG(seed, 7)), dir, outside)
			for _, from := range []string{"", "d0"} {
				if _, err := os.Stat(filepath.Join(dir, from)); err != nil {
					continue
				}
				want := readDirWalk(t, r, from, nil)
				if got := nativeWalk(t, r, from); !reflect.DeepEqual(got, want) {
					t.Fatalf("Walk %q:\n got %v\nwant %v", from, got, want)
				}
				for _, capacity := range []uint32{1 << 20, 200, 16} {
					got, calls, _ := abiWalkAll(t, r, from, capacity, nil)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("fs_walk %q in %d bytes:\n got %v\nwant %v", from, capacity, got, want)
					}
					if capacity == 16 && len(want) > 3 && calls <= 2 {
						t.Errorf("%d calls for %d records in 16 bytes: the walk was not resumed", calls, len(want))
					}
				}
			}
		})
	}
}

// A record larger than the buffer comes back as its size, nothing copied;
// the walk goes on with a buffer that large.
func TestWalkRecordLargerThanBuffer(t *testing.T) {
	r, dir := newRoot(t)
	for i := range 50 {
		mustWrite(t, filepath.Join(dir, "big", fmt.Sprintf("entry-with-a-long-name-%03d.md", i)), "x")
	}
	mustWrite(t, filepath.Join(dir, "a.md"), "x")
	want := readDirWalk(t, r, "", nil)
	got, _, grown := abiWalkAll(t, r, "", 64, nil)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if grown == 0 {
		t.Fatal("the buffer never had to grow")
	}
}

// Folders created and removed between the calls of one walk: those gone
// are left out, those that come after the point reached are walked, and
// the walk neither loops nor stops early.
func TestWalkTreeChangedBetweenCalls(t *testing.T) {
	r, dir := newRoot(t)
	for _, f := range []string{"a/1.md", "b/x/2.md", "b/y/3.md", "c/4.md", "d/5.md"} {
		mustWrite(t, filepath.Join(dir, f), "x")
	}
	got, _, _ := abiWalkAll(t, r, "", 16, func(call int) {
		// The changes below are another process's: the answer listed ahead
		// may have been listed before them (walkAnswer), so it is dropped
		// here to have the next call derive the walk from its after, which
		// is what this test is about.
		defer r.dropAhead("")
		switch call {
		case 2: // after "" and "a": b goes, bb comes
			if err := os.RemoveAll(filepath.Join(dir, "b")); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(dir, "bb/6.md"), "x")
		case 4: // the folder last received goes: what follows it comes next
			if err := os.RemoveAll(filepath.Join(dir, "c")); err != nil {
				t.Fatal(err)
			}
		}
	})
	var dirs []string
	for _, rec := range got {
		dirs = append(dirs, rec.Dir)
	}
	if want := []string{"", "a", "bb", "c", "d"}; !reflect.DeepEqual(dirs, want) {
		t.Fatalf("folders walked %q, want %q", dirs, want)
	}
	// Natively, a folder removed by fn during the walk is left out too.
	var native []string
	mustWrite(t, filepath.Join(dir, "c/4.md"), "x")
	err := r.Walk("", func(d string, _ []host.DirEntry) error {
		native = append(native, d)
		if d == "a" {
			return os.RemoveAll(filepath.Join(dir, "bb"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"", "a", "c", "d"}; !reflect.DeepEqual(native, want) {
		t.Fatalf("Walk: folders %q, want %q", native, want)
	}
}

// The path rules and codes of fs_list.
func TestWalkPathRules(t *testing.T) {
	r, dir := newRoot(t)
	mustWrite(t, filepath.Join(dir, "a/b.md"), "x")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	mem := make(sliceMem, 4096)
	for _, c := range []struct {
		path, after string
		code        int32
	}{
		{"../x", "", codeInvalid},
		{"/etc", "", codeInvalid},
		{"a/../..", "", codeInvalid},
		{".git", "", codeInvalid},
		{"missing", "", codeNotFound},
		{"a/b.md", "", codeInvalid},
		{"out", "", codeDenied},
		{"a", "b/", codeInvalid},   // not a folder of the walk
		{"a", "a", codeInvalid},    // no "/"
		{"", "../", codeInvalid},   // a path the rules refuse
		{"", "/etc/", codeInvalid}, // absolute
	} {
		pp, pl := mem.put(0, c.path)
		ap, al := mem.put(256, c.after)
		if got := r.abiWalk(mem, pp, pl, ap, al, 1024, 2048); got != c.code {
			t.Errorf("fs_walk(%q, %q) = %d, want %d", c.path, c.after, got, c.code)
		}
	}
	// Resuming a walk whose folder is gone ends it.
	pp, pl := mem.put(0, "gone")
	ap, al := mem.put(256, "gone/")
	if got := r.abiWalk(mem, pp, pl, ap, al, 1024, 2048); got != 0 {
		t.Errorf("resume a walk of a folder gone: %d, want 0", got)
	}
	// Outside guest memory.
	if got := r.abiWalk(mem, 0, 0, 0, 0, 4000, 2048); got != codeInvalid {
		t.Errorf("buffer outside memory: %d", got)
	}
}

// A folder this user may not list is left out of a walk, as one removed
// is: it failed the walk, and with it the open of the whole memory (one
// private folder, and not a search answered). Root lists every folder:
// the test runs for other users only.
func TestWalkLeavesOutAFolderItMayNotList(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may list any folder")
	}
	dir := t.TempDir()
	for _, p := range []string{"ops/pager/rotation.md", "ops/private/salaries.md", "zz/last.md"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "ops/private"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "ops/private"), 0o755) })
	r, err := NewRootFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	if err := r.Walk("", func(d string, _ []host.DirEntry) error { dirs = append(dirs, d); return nil }); err != nil {
		t.Fatalf("walk: %v", err)
	}
	if want := []string{"", "ops", "ops/pager", "zz"}; !reflect.DeepEqual(dirs, want) {
		t.Errorf("walked %q, want %q", dirs, want)
	}
	if got, want := r.takeLeftOut(), []string{"ops/private: left out of the memory: " + denied}; !reflect.DeepEqual(got, want) {
		t.Errorf("left out: %q, want %q", got, want)
	}
}

// A folder whose name the rules refuse (not UTF-8: a name from an old
// archive) is left out of a walk, and said once for the host to warn of,
// however many walks meet it.
func TestWalkSaysOnceWhatItLeavesOut(t *testing.T) {
	r, dir := newRoot(t)
	mustWrite(t, filepath.Join(dir, "ops/pager/rotation.md"), "x")
	mustWrite(t, filepath.Join(dir, "ops/caf\xe9/menu.md"), "x")
	for i := range 2 {
		var dirs []string
		if err := r.Walk("", func(d string, _ []host.DirEntry) error { dirs = append(dirs, d); return nil }); err != nil {
			t.Fatalf("walk: %v", err)
		}
		if want := []string{"", "ops", "ops/pager"}; !reflect.DeepEqual(dirs, want) {
			t.Errorf("walk %d: walked %q, want %q", i, dirs, want)
		}
		got := r.takeLeftOut()
		switch {
		case i == 0 && (len(got) != 1 || !strings.HasPrefix(got[0], "ops/caf\xe9: left out of the memory: the engine refuses its name") || !strings.Contains(got[0], "not valid UTF-8")):
			t.Errorf("walk %d: left out %q", i, got)
		case i > 0 && len(got) != 0:
			t.Errorf("walk %d: said again: %q", i, got)
		}
	}
}

// The next answer of a walk is listed ahead, on another thread, and is the
// answer the next call would get: the walk is the same whether or not it
// is used, a call that asks for another answer (another resume point or
// size) gets its own, and a write, removal or rename through the RootFS
// drops it, so that the guest sees its own changes in the rest of the walk.
func TestWalkListsTheNextAnswerAhead(t *testing.T) {
	r, dir := newRoot(t)
	folders := strings.Split("abcdefghijklmnopqrstuvwx", "")
	for _, f := range folders {
		mustWrite(t, filepath.Join(dir, f, "1.md"), "x")
	}
	call := func(after string, max int) ([]byte, string) {
		t.Helper()
		out, need, err := r.walkAnswer("", after, max)
		if err != nil || need != 0 {
			t.Fatalf("fs_walk after %q: need %d, %v", after, need, err)
		}
		last, err := host.DecodeWalk(out, func(string, []host.DirEntry) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return out, last + "/"
	}
	ahead := func() *walkAhead {
		r.aheadMu.Lock()
		defer r.aheadMu.Unlock()
		return r.ahead
	}
	fresh := func(after string, max int) []byte {
		t.Helper()
		out, _, _, err := r.walkChunk(nil, "", after, max)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	// Started before the guest asks, as a host does for an open.
	first := fresh("", 400)
	r.WalkAhead("", 400)
	got, after := call("", 400)
	if !bytes.Equal(got, first) {
		t.Fatalf("the first answer listed ahead differs from one listed now:\n got %q\nwant %q", got, first)
	}
	if a := ahead(); a == nil || a.next != after || a.max != 400 {
		t.Fatalf("after the first answer, ahead is %+v, want the answer after %q", a, after)
	}
	want := fresh(after, 400)
	got, next := call(after, 400)
	if !bytes.Equal(got, want) {
		t.Fatalf("the answer listed ahead differs from one listed now:\n got %q\nwant %q", got, want)
	}
	if a := ahead(); a == nil || a.next != next {
		t.Fatalf("after the second answer, ahead is %+v, want the answer after %q", a, next)
	}

	// Another size: answered afresh, and the next listed ahead for it.
	want = fresh(next, 45)
	if got, _ = call(next, 45); !bytes.Equal(got, want) {
		t.Fatalf("an answer of another size:\n got %q\nwant %q", got, want)
	}
	if a := ahead(); a == nil || a.max != 45 {
		t.Fatalf("ahead is %+v, want an answer of 45 bytes", a)
	}

	// A write through r drops what was listed ahead: the folder it makes
	// after the point reached is in the rest of the walk.
	if err := r.WriteFile("ca/new.md", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if a := ahead(); a != nil {
		t.Fatalf("a write left the answer listed ahead (%+v)", a)
	}
	rest, _, _ := abiWalkAll(t, r, "", 1<<20, nil)
	var dirs []string
	for _, rec := range rest {
		dirs = append(dirs, rec.Dir)
	}
	if want := append([]string{"", "a", "b", "c", "ca"}, folders[3:]...); !reflect.DeepEqual(dirs, want) {
		t.Fatalf("folders walked %q, want %q", dirs, want)
	}
	// A write in a folder walks leave out (.arbor/) keeps them.
	call("", 400)
	if err := r.WriteFile(".arbor/state.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if ahead() == nil {
		t.Fatal("a write in .arbor/ dropped the answers listed ahead")
	}
	for _, change := range []func() error{
		func() error { return r.Append("ca/log.md", []byte("x")) },
		func() error { return r.Rename("ca/log.md", "ca/log2.md") },
		func() error { return r.Remove("ca/log2.md") },
	} {
		call("", 400)
		if ahead() == nil {
			t.Fatal("nothing listed ahead")
		}
		if err := change(); err != nil {
			t.Fatal(err)
		}
		if a := ahead(); a != nil {
			t.Fatalf("a change left the answer listed ahead (%+v)", a)
		}
	}
}

// A walk listed ahead from its start is split among workers (listSplit):
// its answers are walkChunk's, byte for byte, whatever the tree (links,
// cycles, dot-names, names the rules refuse, at every depth) and the
// answers' size, the folders it leaves out are said in the walk's order,
// and a walk stopped early ends and closes every folder it opened.
func TestWalkListedAheadInPieces(t *testing.T) {
	type answer struct {
		out        string
		need       int
		more, fail string
	}
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			_, dir := newRoot(t)
			outside := t.TempDir()
			mustWrite(t, filepath.Join(outside, "secret.md"), "no")
			rng := rand.New(rand.NewPCG(seed, 11))
			randomTree(t, rng, dir, outside)
			for _, bad := range []string{"caf\xe9", "d0/caf\xe9", "d0/d1/caf\xe9", "d1/d0/b\xffd"} {
				if _, err := os.Stat(filepath.Join(dir, filepath.Dir(bad))); err == nil {
					mustWrite(t, filepath.Join(dir, bad, "menu.md"), "x")
				}
			}
			for _, from := range []string{"", "d0"} {
				if _, err := os.Stat(filepath.Join(dir, from)); err != nil {
					continue
				}
				for _, capacity := range []int{1 << 20, 600, 200, 16} {
					r1, err := NewRootFS(dir)
					if err != nil {
						t.Fatal(err)
					}
					var want []answer
					for after := ""; ; {
						out, need, more, err := r1.walkChunk(nil, from, after, capacity)
						a := answer{out: string(out), need: need, more: more}
						if err != nil {
							a.fail = err.Error()
						}
						want = append(want, a)
						if more == "" {
							break
						}
						after = more
					}
					r2, err := NewRootFS(dir)
					if err != nil {
						t.Fatal(err)
					}
					a := &walkAhead{dir: from, max: capacity, answers: make(chan walkAnswer, 1), stop: make(chan struct{})}
					go r2.listSplit(a, 3)
					var got []answer
					for b := range a.answers {
						g := answer{out: string(b.out), need: b.need, more: b.more}
						if b.err != nil {
							g.fail = b.err.Error()
						}
						got = append(got, g)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("walk of %q in answers of %d bytes:\n got %+v\nwant %+v", from, capacity, got, want)
					}
					if got, want := r2.takeLeftOut(), r1.takeLeftOut(); !reflect.DeepEqual(got, want) {
						t.Fatalf("walk of %q, left out, in answers of %d bytes:\n got %q\nwant %q", from, capacity, got, want)
					}
				}
			}
		})
	}

	t.Run("stopped", func(t *testing.T) {
		r, dir := newRoot(t)
		for i := range 40 {
			mustWrite(t, filepath.Join(dir, fmt.Sprintf("t%d/s%d/e.md", i%4, i)), "x")
		}
		fds := func() int {
			ents, err := os.ReadDir("/proc/self/fd")
			if err != nil {
				t.Skip("no /proc/self/fd")
			}
			return len(ents)
		}
		before := fds()
		a := &walkAhead{max: 200, answers: make(chan walkAnswer), stop: make(chan struct{})}
		go r.listSplit(a, 3)
		if b := <-a.answers; b.err != nil || b.more == "" {
			t.Fatalf("first answer: more %q, %v", b.more, b.err)
		}
		close(a.stop)
		for range a.answers {
		}
		deadline := time.Now().Add(5 * time.Second)
		for fds() != before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := fds(); n != before {
			t.Errorf("%d files open after the walk stopped, %d before", n, before)
		}
	})
}
