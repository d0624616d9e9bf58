package host

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// plainFS hides MemFS's Walk: an FS that is no Walker.
type plainFS struct{ *MemFS }

func (plainFS) Walk() {}

// oldWalk is how the engine visited the files before Walk: ReadDir folder
// by folder, going down into a folder where the listing reaches it.
func oldWalk(t *testing.T, fsys FS, dir string, visit func(p string)) {
	t.Helper()
	list, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range list {
		if strings.HasPrefix(de.Name, ".") {
			continue
		}
		p := JoinPath(dir, de.Name)
		if de.IsDir {
			oldWalk(t, fsys, p, visit)
			continue
		}
		visit(p)
	}
}

func randomMemFS(rng *rand.Rand) *MemFS {
	m := NewMemFS()
	for i := range 60 {
		var segs []string
		for range rng.IntN(4) {
			segs = append(segs, fmt.Sprintf("d%d", rng.IntN(3)))
		}
		name := fmt.Sprintf("f%d.md", i)
		if rng.IntN(6) == 0 {
			name = "." + name
		}
		if rng.IntN(6) == 0 && len(segs) > 0 {
			segs[0] = ".git"
		}
		m.WriteFile(strings.Join(append(segs, name), "/"), []byte(strings.Repeat("x", i)))
	}
	return m
}

func TestWalkFilesKeepsTheOrderOfReadDir(t *testing.T) {
	for seed := range uint64(20) {
		m := randomMemFS(rand.New(rand.NewPCG(seed, 1)))
		var want []string
		oldWalk(t, m, "", func(p string) { want = append(want, p) })
		for _, fsys := range []FS{m, plainFS{m}, Share(m), ReadOnly(m)} {
			var got, folders []string
			err := WalkFiles(fsys, "", func(d string, list []DirEntry) error {
				folders = append(folders, d)
				for _, de := range list {
					if strings.HasPrefix(de.Name, ".") {
						t.Errorf("%q listed the dot-name %q", d, de.Name)
					}
				}
				return nil
			}, func(d string, de DirEntry) error {
				p := JoinPath(d, de.Name)
				if de.IsDir || strings.Contains("/"+p, "/.") {
					t.Errorf("visited %q (%+v)", p, de)
				}
				got = append(got, p)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, %T: files\n got %q\nwant %q", seed, fsys, got, want)
			}
			if len(folders) == 0 || folders[0] != "" {
				t.Fatalf("folders %q", folders)
			}
		}
	}
}

// A folder that has no listing (removed during the walk) is passed over,
// the files after it still visited; an error from a callback ends the walk.
func TestWalkFilesFolderRemovedDuringTheWalk(t *testing.T) {
	m := NewMemFS()
	for _, p := range []string{"a.md", "b/1.md", "c/2.md", "d.md"} {
		m.WriteFile(p, []byte("x"))
	}
	var got []string
	err := WalkFiles(m, "", func(d string, _ []DirEntry) error {
		if d == "" { // b is listed, but not yet walked
			m.Remove("b/1.md")
			m.Remove("b")
		}
		return nil
	}, func(d string, de DirEntry) error {
		got = append(got, JoinPath(d, de.Name))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.md", "c/2.md", "d.md"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	stop := errors.New("stop")
	if err := WalkFiles(m, "", nil, func(string, DirEntry) error { return stop }); err != stop {
		t.Fatalf("callback error: %v", err)
	}
	if err := WalkFiles(m, "missing", nil, func(string, DirEntry) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing folder: %v", err)
	}
}

func TestWalkRecordsRoundTrip(t *testing.T) {
	recs := []struct {
		dir  string
		list []DirEntry
	}{
		{"", []DirEntry{{Name: "a.md", Size: 12, ModTime: 1767225600123, Change: 1767225600124, Ino: 1<<64 - 1}, {Name: "été", IsDir: true}}},
		{"été", nil},
		{"été/x", []DirEntry{{Name: "old.md", Size: 1 << 40, ModTime: -5, Change: 1767225600000, Ino: 42}, {Name: "none.md", ModTime: 1767225600000}}},
	}
	var b []byte
	for _, r := range recs {
		b = AppendWalkRecord(b, r.dir, r.list)
	}
	i := 0
	last, err := DecodeWalk(b, func(dir string, list []DirEntry) error {
		if dir != recs[i].dir || len(list) != len(recs[i].list) || (len(list) > 0 && !reflect.DeepEqual(list, recs[i].list)) {
			t.Errorf("record %d: %q %v, want %q %v", i, dir, list, recs[i].dir, recs[i].list)
		}
		i++
		return nil
	})
	if err != nil || last != "été/x" || i != len(recs) {
		t.Fatalf("last %q, %d records, err %v", last, i, err)
	}
	// Only whole records decode: a cut anywhere else is refused.
	ends := map[int]bool{}
	n := 0
	for _, r := range recs {
		n += len(AppendWalkRecord(nil, r.dir, r.list))
		ends[n] = true
	}
	for cut := 1; cut < len(b); cut++ {
		_, err := DecodeWalk(b[:cut], func(string, []DirEntry) error { return nil })
		if (err == nil) != ends[cut] {
			t.Errorf("%d of %d bytes: err %v", cut, len(b), err)
		}
	}
	bad := AppendWalkRecord(nil, "", []DirEntry{{Name: "a"}})
	bad[4] = 7 // the kind
	if _, err := DecodeWalk(bad, func(string, []DirEntry) error { return nil }); !errors.Is(err, ErrMalformedWalk) {
		t.Fatalf("bad kind: %v", err)
	}
}

// recordsFS is a Walker answering with fixed records, as a host does whose
// listings were made at different times: a walk spans time.
type recordsFS struct {
	*MemFS
	records []struct {
		dir  string
		list []DirEntry
	}
}

func (r recordsFS) Walk(_ string, fn func(string, []DirEntry) error) error {
	for _, rec := range r.records {
		if err := fn(rec.dir, rec.list); err != nil {
			return err
		}
	}
	return nil
}

// A folder made since its folder was listed is visited where its name
// sorts, and a file that became a folder is visited as the folder: the
// walk of a live tree goes on, where it failed the whole open. A listing
// whose folder's folder never came is still an error.
func TestWalkFilesFolderMadeDuringTheWalk(t *testing.T) {
	file := func(name string) DirEntry { return DirEntry{Name: name} }
	folder := func(name string) DirEntry { return DirEntry{Name: name, IsDir: true} }
	r := recordsFS{MemFS: NewMemFS()}
	add := func(dir string, list ...DirEntry) {
		r.records = append(r.records, struct {
			dir  string
			list []DirEntry
		}{dir, list})
	}
	add("", folder("a"), file("b.md"), file("m.md"), file("q"), file("z.md"))
	add("a", file("x.md"))
	add("c", file("y.md"))   // made after the root was listed
	add("c/d", file("v.md")) // and its own sub-folder, sorting before y.md
	add("q", file("w.md"))   // q was a file when the root was listed
	var got []string
	err := WalkFiles(r, "", nil, func(d string, de DirEntry) error {
		got = append(got, JoinPath(d, de.Name))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/x.md", "b.md", "c/d/v.md", "c/y.md", "m.md", "q/w.md", "z.md"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}

	r.records = nil
	add("", folder("a"))
	add("k/l", file("x.md"))
	if err := WalkFiles(r, "", nil, func(string, DirEntry) error { return nil }); !errors.Is(err, ErrIO) {
		t.Fatalf("a listing out of order: %v", err)
	}
}

// A host's fs_walk answer is input: whatever its bytes, DecodeWalk
// refuses them or gives records that encode again to records it decodes
// alike, and a walk over them ends without a panic.
func FuzzDecodeWalk(f *testing.F) {
	f.Add(AppendWalkRecord(AppendWalkRecord(nil, "", []DirEntry{{Name: "a.md", Size: 3, ModTime: 1767225600123, Change: 1767225600124, Ino: 7}, {Name: "b", IsDir: true}}), "b", []DirEntry{{Name: "c.md", ModTime: -1}}))
	f.Add([]byte{0, 0})
	f.Add([]byte{0, 1, 1, 'x', 2, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		type rec struct {
			dir  string
			list []DirEntry
		}
		var recs []rec
		_, err := DecodeWalk(b, func(dir string, list []DirEntry) error {
			recs = append(recs, rec{dir, list})
			return nil
		})
		if err != nil {
			if !errors.Is(err, ErrMalformedWalk) {
				t.Fatalf("DecodeWalk(%q): %v, not ErrMalformedWalk", b, err)
			}
			return
		}
		var again []byte
		for _, r := range recs {
			again = AppendWalkRecord(again, r.dir, r.list)
		}
		i := 0
		if _, err := DecodeWalk(again, func(dir string, list []DirEntry) error {
			want := recs[i]
			for k := range want.list {
				if want.list[k].IsDir { // a folder's size is not kept
					want.list[k].Size = 0
				}
				if want.list[k].Size < 0 {
					want.list[k].Size = 0
				}
			}
			if dir != want.dir || len(list) != len(want.list) || len(list) > 0 && !reflect.DeepEqual(list, want.list) {
				t.Fatalf("record %d: %q %v, then %q %v", i, want.dir, want.list, dir, list)
			}
			i++
			return nil
		}); err != nil || i != len(recs) {
			t.Fatalf("records of %q encoded again: %d of %d, %v", b, i, len(recs), err)
		}
		m := NewMemFS()
		var fs recordsFS
		fs.MemFS = m
		for _, r := range recs {
			fs.records = append(fs.records, struct {
				dir  string
				list []DirEntry
			}{r.dir, r.list})
		}
		dir := ""
		if len(recs) > 0 {
			dir = recs[0].dir
		}
		_ = WalkFiles(fs, dir, nil, func(string, DirEntry) error { return nil })
	})
}
