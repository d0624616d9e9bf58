package curatefrom

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/arbormem/arbor/core/host"
)

// overlay is a host.FS that reads through to a base FS and keeps every
// write and removal in memory. A curation from raw material applies the
// model's operations to an overlay first, so the model gets the real
// per-operation results of the curate path while the tree stays untouched
// until the curation ends (and untouched for good when it is cancelled).
type overlay struct {
	base    host.FS
	files   map[string][]byte
	dirs    map[string]bool // folders created by writes
	removed map[string]bool // files and folders removed, hiding the base's
}

func newOverlay(base host.FS) *overlay {
	return &overlay{base: base, files: map[string][]byte{}, dirs: map[string]bool{}, removed: map[string]bool{}}
}

func notFound(op, p string) error { return fmt.Errorf("%s %s: %w", op, p, host.ErrNotFound) }

func (o *overlay) ReadFile(p string) ([]byte, error) {
	if b, ok := o.files[p]; ok {
		return append([]byte(nil), b...), nil
	}
	if o.hidden(p) {
		return nil, notFound("read", p)
	}
	return o.base.ReadFile(p)
}

// hidden reports whether p or a folder above it was removed in the overlay
// (and not written again).
func (o *overlay) hidden(p string) bool {
	for q := p; q != ""; q = parent(q) {
		if o.removed[q] {
			return true
		}
		if o.dirs[q] {
			return false
		}
	}
	return false
}

func parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

func (o *overlay) WriteFile(p string, data []byte) error {
	if st, err := o.Stat(p); err == nil && st.IsDir {
		return fmt.Errorf("write %s: a folder: %w", p, host.ErrInvalid)
	}
	o.files[p] = append([]byte(nil), data...)
	delete(o.removed, p)
	for d := parent(p); d != ""; d = parent(d) {
		o.dirs[d] = true
		delete(o.removed, d)
	}
	return nil
}

func (o *overlay) Append(p string, data []byte) error {
	old, err := o.ReadFile(p)
	if err != nil && !errors.Is(err, host.ErrNotFound) {
		return err
	}
	return o.WriteFile(p, append(old, data...))
}

func (o *overlay) Remove(p string) error {
	st, err := o.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir {
		list, err := o.ReadDir(p)
		if err != nil {
			return err
		}
		if len(list) > 0 {
			return fmt.Errorf("remove %s: folder not empty: %w", p, host.ErrInvalid)
		}
		delete(o.dirs, p)
	}
	delete(o.files, p)
	o.removed[p] = true
	return nil
}

func (o *overlay) Rename(from, to string) error {
	data, err := o.ReadFile(from)
	if err != nil {
		return err
	}
	if err := o.WriteFile(to, data); err != nil {
		return err
	}
	return o.Remove(from)
}

func (o *overlay) Stat(p string) (host.DirEntry, error) {
	name := p[strings.LastIndexByte(p, '/')+1:]
	if b, ok := o.files[p]; ok {
		return host.DirEntry{Name: name, Size: int64(len(b))}, nil
	}
	if o.dirs[p] || p == "" {
		return host.DirEntry{Name: name, IsDir: true}, nil
	}
	if o.hidden(p) {
		return host.DirEntry{}, notFound("stat", p)
	}
	return o.base.Stat(p)
}

func (o *overlay) ReadDir(p string) ([]host.DirEntry, error) {
	st, err := o.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir {
		return nil, fmt.Errorf("list %s: not a folder: %w", p, host.ErrInvalid)
	}
	byName := map[string]host.DirEntry{}
	if !o.hidden(p) {
		if list, err := o.base.ReadDir(p); err == nil {
			for _, de := range list {
				byName[de.Name] = de
			}
		}
	}
	prefix := p + "/"
	if p == "" {
		prefix = ""
	}
	child := func(q string) (string, bool) {
		if !strings.HasPrefix(q, prefix) || q == p {
			return "", false
		}
		rest := q[len(prefix):]
		return rest, !strings.Contains(rest, "/")
	}
	for name := range byName {
		if o.removed[prefix+name] {
			delete(byName, name)
		}
	}
	for q, b := range o.files {
		if name, ok := child(q); ok {
			byName[name] = host.DirEntry{Name: name, Size: int64(len(b))}
		}
	}
	for q := range o.dirs {
		if name, ok := child(q); ok {
			byName[name] = host.DirEntry{Name: name, IsDir: true}
		}
	}
	out := make([]host.DirEntry, 0, len(byName))
	for _, de := range byName {
		out = append(out, de)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
