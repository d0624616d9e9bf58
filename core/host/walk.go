package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Walker is an FS that lists a folder and every folder below it in one
// go (the ABI's fs_walk, docs/ABI.md §2): an open lists every folder of
// the tree, and one ReadDir per folder was, in the WebAssembly module, one
// host call and one JSON listing to decode per folder.
type Walker interface {
	// Walk calls fn with the listing of dir, then with those of its
	// sub-folders in name order, each followed by those of its own
	// sub-folders (depth first): a folder's path relative to the root
	// ("" for the root) and its entries sorted by name, as ReadDir gives
	// them with the names starting with "." left out. Folders whose name
	// starts with "." are not walked; a folder removed during the walk is
	// left out; a folder reached through a symbolic link that leads back
	// to one of the folders above it is listed but not walked. fn may keep
	// list. An error from fn ends the walk and is returned.
	Walk(dir string, fn func(dir string, list []DirEntry) error) error
}

// WalkAnswerBytes is the size of the engine's fs_walk answers: a few dozen
// host calls for a tree of 100,000 files. A host that knows an open is
// coming may list the walk's first answers ahead, in this size.
const WalkAnswerBytes = 256 << 10

// Walk walks dir as Walker does: through fsys's own Walker when it has one
// (also seen through Shared and ReadOnly), else by ReadDir, folder by
// folder, where an error listing a folder ends the walk.
func Walk(fsys FS, dir string, fn func(dir string, list []DirEntry) error) error {
	for {
		switch f := fsys.(type) {
		case Walker:
			return f.Walk(dir, fn)
		case *Shared:
			fsys = f.FS
		case readOnlyFS:
			fsys = f.FS
		default:
			return walkByReadDir(fsys, dir, fn, false)
		}
	}
}

// walkByReadDir is Walk for an FS that is no Walker, and MemFS's Walk
// (gone true: a sub-folder removed during the walk is left out, as a
// Walker does). It has no protection against cycles: an FS without links
// has none.
func walkByReadDir(fsys FS, dir string, fn func(dir string, list []DirEntry) error, gone bool) error {
	list, err := fsys.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list %q: %w", dir, err)
	}
	return walkListed(fsys, dir, list, fn, gone)
}

// walkListed is walkByReadDir once dir is listed.
func walkListed(fsys FS, dir string, list []DirEntry, fn func(dir string, list []DirEntry) error, gone bool) error {
	// In place: a listing is the caller's to change.
	kept := slices.DeleteFunc(list, func(de DirEntry) bool { return strings.HasPrefix(de.Name, ".") })
	if err := fn(dir, kept); err != nil {
		return err
	}
	for _, de := range kept {
		if !de.IsDir {
			continue
		}
		p := JoinPath(dir, de.Name)
		sub, err := fsys.ReadDir(p)
		switch {
		case gone && errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return fmt.Errorf("list %q: %w", p, err)
		}
		if err := walkListed(fsys, p, sub, fn, gone); err != nil {
			return err
		}
	}
	return nil
}

// JoinPath is the path of the entry name in the folder dir ("" for the
// root), as WalkFiles gives them.
func JoinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// WalkFiles visits the files below dir whose names (and whose folders'
// names) do not start with ".", in the order of a depth-first walk that
// lists each folder and takes its entries in name order, going down into
// a sub-folder where the listing reaches it: the order of the engine's
// walks when they listed folder by folder with ReadDir. folder, when not
// nil, hears each folder's listing before any of its files. file hears
// each file as its folder and its entry, not its path (JoinPath): an open
// finds most files among the ones it knows without it, and a path made
// per file was an allocation per file. The listings come from Walk: one
// call through a Walker.
func WalkFiles(fsys FS, dir string, folder func(dir string, list []DirEntry) error, file func(dir string, de DirEntry) error) error {
	// The folders whose entries are still being visited, outermost
	// first. A folder's sub-folders' listings come after its own, in its
	// order: its entries are visited up to the next sub-folder, which
	// waits for its listing. A sub-folder with no listing (removed during
	// the walk, or a link back up the tree) is passed over.
	type frame struct {
		dir  string
		list []DirEntry
		next int
	}
	var stack []*frame
	// advance visits the files of the innermost folder up to its
	// sub-folder sub (all of them when sub is ""), folders done popped. A
	// sub-folder its folder's listing lacks was made since that listing
	// (a walk spans time): it goes where its name sorts, and a file of its
	// name in the listing is taken for it (the file became a folder).
	advance := func(sub string) (bool, error) {
		parent, name := "", sub
		if i := strings.LastIndexByte(sub, '/'); i >= 0 {
			parent, name = sub[:i], sub[i+1:]
		}
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			here := sub != "" && f.dir == parent
			for f.next < len(f.list) {
				de := f.list[f.next]
				if here && de.Name >= name {
					if de.Name == name {
						f.next++
					}
					return true, nil
				}
				f.next++
				if strings.HasPrefix(de.Name, ".") || de.IsDir {
					continue
				}
				if err := file(f.dir, de); err != nil {
					return false, err
				}
			}
			if here {
				return true, nil
			}
			stack = stack[:len(stack)-1]
		}
		return false, nil
	}
	err := Walk(fsys, dir, func(d string, list []DirEntry) error {
		if len(stack) > 0 {
			found, err := advance(d)
			if err != nil {
				return err
			}
			if !found {
				return fmt.Errorf("walk %q: the listing of %q came out of order: %w", dir, d, ErrIO)
			}
		} else if d != dir {
			return fmt.Errorf("walk %q: the first listing is of %q: %w", dir, d, ErrIO)
		}
		if folder != nil {
			if err := folder(d, list); err != nil {
				return err
			}
		}
		stack = append(stack, &frame{dir: d, list: list})
		return nil
	})
	if err != nil {
		return err
	}
	_, err = advance("")
	return err
}

// IsIn reports whether p is JoinPath(dir, name), without making it.
func IsIn(p, dir, name string) bool {
	if dir == "" {
		return p == name
	}
	return len(p) == len(dir)+1+len(name) && p[len(dir)] == '/' && p[:len(dir)] == dir && p[len(dir)+1:] == name
}

// The binary records of fs_walk (docs/ABI.md §2), lengths and integers
// as encoding/binary's varints: a folder is its path, the count of its
// entries, then per entry its name, kind (0 file, 1 folder), size,
// modification time (Unix milliseconds, signed), change time as its
// difference from the modification time (most files were last changed
// when last written: one byte) and inode number.

// AppendWalkRecord appends the record of folder dir listing list to b.
func AppendWalkRecord(b []byte, dir string, list []DirEntry) []byte {
	b = binary.AppendUvarint(b, uint64(len(dir)))
	b = append(b, dir...)
	b = binary.AppendUvarint(b, uint64(len(list)))
	for _, de := range list {
		b = binary.AppendUvarint(b, uint64(len(de.Name)))
		b = append(b, de.Name...)
		kind := byte(0)
		size := de.Size
		if de.IsDir {
			kind, size = 1, 0
		}
		b = append(b, kind)
		b = binary.AppendUvarint(b, uint64(max(size, 0)))
		b = binary.AppendVarint(b, de.ModTime)
		b = binary.AppendVarint(b, de.Change-de.ModTime)
		b = binary.AppendUvarint(b, de.Ino)
	}
	return b
}

// ErrMalformedWalk is DecodeWalk's error for bytes that are not fs_walk
// records.
var ErrMalformedWalk = errors.New("malformed fs_walk records")

// DecodeWalk decodes the records of one fs_walk answer, calling fn with
// each, and returns the path of the last. A record's path and names share
// one string, and its entries one slice: an open walks every folder of
// the tree, and a string per name was an allocation per file. Per record,
// not per answer: the walk keeps the listings of the folders above the
// one it is in, and those would keep whole answers alive.
func DecodeWalk(b []byte, fn func(dir string, list []DirEntry) error) (last string, err error) {
	var spans []int // where the record's strings are, reused
	for len(b) > 0 {
		var n int
		var dir string
		var list []DirEntry
		if n, dir, list, spans, err = decodeWalkRecord(b, spans); err != nil {
			return "", err
		}
		b = b[n:]
		if err := fn(dir, list); err != nil {
			return "", err
		}
		last = dir
	}
	return last, nil
}

// decodeWalkRecord checks and decodes the record at the start of b, in
// one pass, and returns its length. Its strings are made once the record's
// end is known, from one copy of its bytes: spans holds where each name
// starts and ends meanwhile (given back, for the next record). An entry's
// four numbers are decoded in the loop, not by calls: under WebAssembly
// the calls (closures over the offset, which kept it in memory, and
// binary.Uvarint's) were a quarter of the decoding (BenchmarkDecodeWalk in
// core/internal/catalog).
func decodeWalkRecord(b []byte, spans []int) (n int, dir string, list []DirEntry, _ []int, err error) {
	spans = spans[:0]
	i := 0
	if spans, i = walkString(b, i, spans); i < 0 {
		return 0, "", nil, spans, ErrMalformedWalk
	}
	c, i := walkUvarint(b, i)
	if i < 0 || c > uint64(len(b)-i)/6 { // an entry takes at least 6 bytes
		return 0, "", nil, spans, ErrMalformedWalk
	}
	list = make([]DirEntry, c)
	for k := range list {
		if spans, i = walkString(b, i, spans); i < 0 || i >= len(b) || b[i] > 1 {
			return 0, "", nil, spans, ErrMalformedWalk
		}
		de := &list[k]
		de.IsDir = b[i] == 1
		i++
		var v [4]uint64 // size, modification time, change time, inode
		for j := range v {
			var x uint64
			for shift := uint(0); ; shift += 7 {
				if i >= len(b) || shift > 63 {
					return 0, "", nil, spans, ErrMalformedWalk
				}
				by := b[i]
				i++
				if by < 0x80 {
					if shift == 63 && by > 1 { // over 64 bits, as binary.Uvarint has it
						return 0, "", nil, spans, ErrMalformedWalk
					}
					x |= uint64(by) << shift
					break
				}
				x |= uint64(by&0x7f) << shift
			}
			v[j] = x
		}
		if v[0] > math.MaxInt64 {
			return 0, "", nil, spans, ErrMalformedWalk
		}
		de.Size = int64(v[0])
		de.ModTime = unzigzag(v[1])
		de.Change = de.ModTime + unzigzag(v[2])
		de.Ino = v[3]
	}
	rec := string(b[:i])
	dir = rec[spans[0]:spans[1]]
	for k := range list {
		list[k].Name = rec[spans[2+2*k]:spans[3+2*k]]
	}
	return i, dir, list, spans, nil
}

// walkUvarint decodes the uvarint at b[i:] and returns it with the offset
// past it, or with -1 when there is none.
func walkUvarint(b []byte, i int) (uint64, int) {
	if uint(i) < uint(len(b)) && b[i] < 0x80 {
		return uint64(b[i]), i + 1
	}
	if uint(i) >= uint(len(b)) {
		return 0, -1
	}
	v, k := binary.Uvarint(b[i:])
	if k <= 0 {
		return 0, -1
	}
	return v, i + k
}

// walkString reads the length-prefixed string at b[i:], appends its span
// to spans and returns the offset past it, or -1 when there is none.
func walkString(b []byte, i int, spans []int) ([]int, int) {
	l, i := walkUvarint(b, i)
	if i < 0 || l > uint64(len(b)-i) {
		return spans, -1
	}
	return append(spans, i, i+int(l)), i + int(l)
}

// unzigzag is the signed integer of binary.Varint's encoding u.
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
