package host

import (
	"encoding/binary"
	"errors"
	"fmt"
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
	kept := list[:0:0]
	for _, de := range list {
		if !strings.HasPrefix(de.Name, ".") {
			kept = append(kept, de)
		}
	}
	if err := fn(dir, kept); err != nil {
		return err
	}
	for _, de := range kept {
		if !de.IsDir {
			continue
		}
		p := joinPath(dir, de.Name)
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

func joinPath(dir, name string) string {
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
// nil, hears each folder's listing before any of its files. The listings
// come from Walk: one call through a Walker.
func WalkFiles(fsys FS, dir string, folder func(dir string, list []DirEntry) error, file func(p string, de DirEntry) error) error {
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
	// sub-folder sub (all of them when sub is ""), folders done popped.
	advance := func(sub string) (bool, error) {
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			for f.next < len(f.list) {
				de := f.list[f.next]
				f.next++
				if strings.HasPrefix(de.Name, ".") {
					continue
				}
				p := joinPath(f.dir, de.Name)
				if de.IsDir {
					if p == sub {
						return true, nil
					}
					continue
				}
				if err := file(p, de); err != nil {
					return false, err
				}
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

// The binary records of fs_walk (docs/ABI.md §2), lengths and integers
// as encoding/binary's varints: a folder is its path, the count of its
// entries, then per entry its name, kind (0 file, 1 folder), size and
// modification time (Unix milliseconds, signed).

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
	}
	return b
}

// ErrMalformedWalk is DecodeWalk's error for bytes that are not fs_walk
// records.
var ErrMalformedWalk = errors.New("malformed fs_walk records")

// DecodeWalk decodes the records of one fs_walk answer, calling fn with
// each, and returns the path of the last. The paths and names share one
// string, and the listings one slice: an open walks every folder of the
// tree, and a string per name was an allocation per file.
func DecodeWalk(b []byte, fn func(dir string, list []DirEntry) error) (last string, err error) {
	all := string(b)
	// A first pass counts the entries, for one slice for every listing.
	n, err := walkRecords(all, nil, nil)
	if err != nil {
		return "", err
	}
	ents := make([]DirEntry, 0, n)
	_, err = walkRecords(all, &ents, func(dir string, list []DirEntry) error {
		last = dir
		return fn(dir, list)
	})
	return last, err
}

// walkRecords reads the records of all; with ents nil it only checks and
// counts their entries, else it appends them to *ents and calls fn with
// each record.
func walkRecords(all string, ents *[]DirEntry, fn func(dir string, list []DirEntry) error) (int, error) {
	i, total := 0, 0
	uvarint := func() (uint64, error) {
		v, n := uvarintString(all[i:])
		if n <= 0 {
			return 0, ErrMalformedWalk
		}
		i += n
		return v, nil
	}
	str := func() (string, error) {
		l, err := uvarint()
		if err != nil || l > uint64(len(all)-i) {
			return "", ErrMalformedWalk
		}
		s := all[i : i+int(l)]
		i += int(l)
		return s, nil
	}
	for i < len(all) {
		dir, err := str()
		if err != nil {
			return 0, err
		}
		count, err := uvarint()
		if err != nil || count > uint64(len(all)-i) { // an entry takes at least 4 bytes
			return 0, ErrMalformedWalk
		}
		start := 0
		if ents != nil {
			start = len(*ents)
		}
		for range count {
			var de DirEntry
			if de.Name, err = str(); err != nil || i >= len(all) {
				return 0, ErrMalformedWalk
			}
			switch all[i] {
			case 0:
			case 1:
				de.IsDir = true
			default:
				return 0, ErrMalformedWalk
			}
			i++
			size, err := uvarint()
			if err != nil || size > 1<<62 {
				return 0, ErrMalformedWalk
			}
			de.Size = int64(size)
			u, err := uvarint()
			if err != nil {
				return 0, ErrMalformedWalk
			}
			de.ModTime = int64(u>>1) ^ -int64(u&1) // zigzag, as binary.Varint
			if ents != nil {
				*ents = append(*ents, de)
			}
		}
		total += int(count)
		if ents != nil {
			if err := fn(dir, (*ents)[start:len(*ents):len(*ents)]); err != nil {
				return 0, err
			}
		}
	}
	return total, nil
}

// uvarintString is binary.Uvarint over a string, without a copy.
func uvarintString(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return 0, -(i + 1)
			}
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return 0, 0
}
