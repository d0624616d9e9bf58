// Package merge merges two versions of a memory tree with their common
// ancestor, file by file, the way docs/sync.md describes: an entry both
// sides changed is merged as an entry (front matter by rule, facts as a
// union by statement, text three-way), a change beats a delete, a move on
// one side carries the other side's change along, and what both sides
// changed differently is kept twice, inside the file, in a section that
// still parses (never git's conflict markers). It does no I/O: hosts fetch
// and write through git (go-git, isomorphic-git) and merge through here,
// so every host merges alike.
package merge

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

// moveSimilarity is the share of a base file's lines that a file added on
// the side that deleted it must keep to count as that file moved: git's
// default rename threshold.
const moveSimilarity = 0.5

// Files merges the files of p. Every path given comes back with its
// result, and the paths the merge adds too, sorted by path.
func Files(p api.MergeParams) (api.MergeResult, error) {
	labels := sides{ours: p.Ours, theirs: p.Theirs}
	if labels.ours == "" {
		labels.ours = "ours"
	}
	if labels.theirs == "" {
		labels.theirs = "theirs"
	}
	byPath := make(map[string]*api.MergeFile, len(p.Files))
	for i := range p.Files {
		f := &p.Files[i]
		if err := checkPath(f.Path); err != nil {
			return api.MergeResult{}, err
		}
		if _, dup := byPath[f.Path]; dup {
			return api.MergeResult{}, api.Errorf(api.CodeInvalidParams, "merge: path %q is given twice", f.Path)
		}
		byPath[f.Path] = f
	}
	m := &merger{sides: labels, taken: map[string]bool{}, present: map[string]bool{}}
	for _, t := range p.Taken {
		m.present[t] = true
	}
	for p := range byPath {
		m.present[p] = true
	}
	for from, to := range m.moves(p.Files) {
		m.move(byPath[from], byPath[to])
	}
	for i := range p.Files {
		f := &p.Files[i]
		if !m.taken[f.Path] {
			m.add(m.file(f.Path, f.Base, f.Ours, f.Theirs))
		}
	}
	m.regenerate(byPath)
	sort.Slice(m.out, func(i, j int) bool { return m.out[i].Path < m.out[j].Path })
	res := api.MergeResult{Files: m.out}
	for _, f := range m.out {
		if f.Status == api.MergeConflict {
			res.Conflicts++
		}
	}
	return res, nil
}

// checkPath applies the rules of paths from outside (api.CleanPath) to a
// path of a repository, where dot-files (".gitignore") are ordinary files:
// only "." and ".." segments are refused for them.
func checkPath(p string) error {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return &api.PathError{Path: p, Reason: fmt.Sprintf("%q is not allowed", seg)}
		}
	}
	undotted := strings.ReplaceAll("/"+p, "/.", "/_")[1:]
	if _, err := api.CleanPath(undotted); err != nil {
		var pe *api.PathError
		if errors.As(err, &pe) {
			return &api.PathError{Path: p, Reason: pe.Reason}
		}
		return err
	}
	if strings.HasSuffix(p, "/") {
		return &api.PathError{Path: p, Reason: "a file's path cannot end in \"/\""}
	}
	return nil
}

// sides are the labels of the two versions.
type sides struct{ ours, theirs string }

type merger struct {
	sides
	out   []api.MergedFile
	taken map[string]bool // paths already answered (moves, copies)
	// present are the paths given and those the trees hold besides
	// (MergeParams.Taken): no copy is named after one, whatever the
	// order of the files.
	present map[string]bool
}

func (m *merger) add(f api.MergedFile) {
	m.taken[f.Path] = true
	m.out = append(m.out, f)
}

func same(a, b *[]byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return bytes.Equal(*a, *b)
}

// file merges one path's three versions.
func (m *merger) file(p string, base, ours, theirs *[]byte) api.MergedFile {
	res := func(c *[]byte, status, msg string) api.MergedFile {
		if c == nil && status != api.MergeKept {
			status = api.MergeDeleted
		}
		return api.MergedFile{Path: p, Content: c, Status: status, Message: msg}
	}
	switch {
	case same(ours, theirs) || same(theirs, base):
		return res(ours, api.MergeOurs, "")
	case same(ours, base):
		return res(theirs, api.MergeTheirs, "")
	case ours == nil:
		return res(theirs, api.MergeKept, fmt.Sprintf("deleted by %s, changed by %s: the change is kept", m.ours, m.theirs))
	case theirs == nil:
		return res(ours, api.MergeKept, fmt.Sprintf("deleted by %s, changed by %s: the change is kept", m.theirs, m.ours))
	}
	if tree.IsEntryPath(p) && samePiece(*ours, *theirs) {
		// Either side whole; the one of lesser bytes, so that which side
		// is ours does not change the result.
		if bytes.Compare(*ours, *theirs) < 0 {
			return res(ours, api.MergeOurs, fmt.Sprintf("both sides ingested the same piece of its source: %s's version kept whole", m.ours))
		}
		return res(theirs, api.MergeTheirs, fmt.Sprintf("both sides ingested the same piece of its source: %s's version kept whole", m.theirs))
	}
	var b []byte
	if base != nil {
		b = *base
	}
	if tree.IsEntryPath(p) {
		if f, ok := m.entry(p, base, *ours, *theirs); ok {
			return f
		}
	}
	return m.text(p, b, *ours, *theirs, path.Base(p) == "context.md")
}

// samePiece reports whether both versions are as an ingest wrote them for
// one piece of a source (their stamps, tree.Ingested): two teammates who
// ingest one folder write the same text at different times. Merged field
// by field, their times and stamps would conflict, and the result, as the
// ingest wrote it on neither side, would be a person's edit to every later
// ingest: the entry would never follow its source again. Either side whole
// is the ingest's.
func samePiece(ours, theirs []byte) bool {
	_, intactOurs, pieceOurs := tree.Ingested(ours)
	_, intactTheirs, pieceTheirs := tree.Ingested(theirs)
	return intactOurs && intactTheirs && pieceOurs != "" && pieceOurs == pieceTheirs
}

// entry merges an entry both sides changed; ok is false when a version
// does not parse as an entry (then it is merged as text).
func (m *merger) entry(p string, base *[]byte, ours, theirs []byte) (api.MergedFile, bool) {
	var be *tree.Entry
	if base != nil {
		var err error
		if be, err = tree.ParseEntry(p, *base); err != nil {
			return api.MergedFile{}, false
		}
	}
	oe, err := tree.ParseEntry(p, ours)
	if err != nil {
		return api.MergedFile{}, false
	}
	te, err := tree.ParseEntry(p, theirs)
	if err != nil {
		return api.MergedFile{}, false
	}
	e, cs := entries(be, oe, te)
	e.Path = p
	f := api.MergedFile{Path: p, Status: api.MergeMerged}
	if len(cs) > 0 {
		e.Other = withConflicts(e.Other, m.block(cs, "entry"))
		f.Status = api.MergeConflict
		for _, c := range cs {
			if !containsString(f.Conflicts, c.Part) {
				f.Conflicts = append(f.Conflicts, c.Part)
			}
		}
		f.Message = fmt.Sprintf("both sides changed %s differently: %s kept in the entry, both in its %q section", strings.Join(f.Conflicts, ", "), m.ours, tree.ConflictHeading)
	}
	out := tree.Render(e)
	f.Content = &out
	return f, true
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// withConflicts adds a conflict block to an entry's sections: to the
// section an earlier merge left, when there is one, else as a new one.
func withConflicts(secs []tree.Section, b block) []tree.Section {
	for i, s := range secs {
		if tree.IsConflictSection(s.Heading) {
			secs[i].Body = strings.TrimSpace(s.Body) + "\n\n" + b.parts
			return secs
		}
	}
	return append(secs, tree.Section{Heading: tree.ConflictHeading, Body: b.intro + "\n\n" + b.parts})
}

// text merges a file that is not an entry (or does not parse as one) line
// by line. Conflicts in a context.md are kept in a conflict section added
// to it (it is markdown that tolerates one); any other file keeps ours in
// the conflicting regions and gets theirs whole as a conflict copy beside
// it. A file that is not UTF-8 text is not merged: ours stays, theirs is
// the copy.
func (m *merger) text(p string, base, ours, theirs []byte, isContext bool) api.MergedFile {
	if !utf8.Valid(base) || !utf8.Valid(ours) || !utf8.Valid(theirs) {
		m.copyOf(p, theirs)
		return api.MergedFile{Path: p, Content: &ours, Status: api.MergeConflict,
			Message: fmt.Sprintf("both sides changed this file, which is not text: %s kept, %s's copy beside it", m.ours, m.theirs)}
	}
	out, cs := file3(string(base), string(ours), string(theirs))
	f := api.MergedFile{Path: p, Status: api.MergeMerged}
	if len(cs) > 0 {
		f.Status = api.MergeConflict
		f.Conflicts = []string{"text"}
		if isContext {
			parts := make([]partConflict, len(cs))
			for i, c := range cs {
				parts[i] = partConflict{Part: fmt.Sprintf("lines %d", i+1), Ours: strings.TrimSuffix(c.Ours, "\n"), Theirs: strings.TrimSuffix(c.Theirs, "\n")}
			}
			b := m.block(parts, "file")
			out = strings.TrimRight(out, "\n") + "\n\n## " + tree.ConflictHeading + "\n" + b.intro + "\n\n" + b.parts + "\n"
			f.Message = fmt.Sprintf("both sides changed %d regions differently: %s kept in the text, both in its %q section", len(cs), m.ours, tree.ConflictHeading)
		} else {
			c := m.copyOf(p, theirs)
			f.Message = fmt.Sprintf("both sides changed %d regions differently: %s kept there, %s's version whole in %s", len(cs), m.ours, m.theirs, c)
		}
	}
	b := []byte(out)
	f.Content = &b
	return f
}

// file3 is Text3 on a whole file: a missing final line break is added for
// the merge and taken off again when ours had none.
func file3(base, ours, theirs string) (string, []Conflict) {
	out, cs := field3(base, ours, theirs)
	if strings.HasSuffix(ours, "\n") || (ours == "" && strings.HasSuffix(theirs, "\n")) {
		out += "\n"
	}
	if out == "\n" {
		out = ""
	}
	return out, cs
}

// maxNameBytes is the longest file name common file systems hold (ext4,
// APFS, NTFS in UTF-16 units aside): a copy's name longer than that could
// not be written, and every sync would stop at it.
const maxNameBytes = 255

// copyOf adds theirs of p as a conflict copy and returns its path:
// "name.conflict.ext", numbered when that is taken, the name cut short
// where it would pass maxNameBytes.
func (m *merger) copyOf(p string, theirs []byte) string {
	dir, base := path.Split(p)
	ext := path.Ext(base)
	if len(ext) > maxNameBytes/2 {
		ext = ""
	}
	stem := strings.TrimSuffix(base, ext)
	name := func(suffix string) string {
		s := stem
		for len(s)+len(suffix)+len(ext) > maxNameBytes {
			_, size := utf8.DecodeLastRuneInString(s)
			s = s[:len(s)-size]
		}
		return dir + s + suffix + ext
	}
	c := name(".conflict")
	for n := 2; m.taken[c] || m.present[c]; n++ {
		c = name(fmt.Sprintf(".conflict-%d", n))
	}
	m.add(api.MergedFile{Path: c, Content: &theirs, Status: api.MergeCopy, From: p,
		Message: fmt.Sprintf("%s's version of %s, which could not be merged with %s's", m.theirs, p, m.ours)})
	return c
}

// moves pairs each file one side deleted while the other changed it with
// a file the deleting side added that keeps most of its lines: a move (or
// rename) on one side, which the other side's change follows.
func (m *merger) moves(files []api.MergeFile) map[string]string {
	out := map[string]string{}
	used := map[string]bool{}
	for _, f := range files {
		if f.Base == nil || (f.Ours == nil) == (f.Theirs == nil) {
			continue
		}
		deletedByOurs := f.Ours == nil
		changed := f.Theirs
		if !deletedByOurs {
			changed = f.Ours
		}
		if same(changed, f.Base) {
			continue // a plain move: one-sided on both paths
		}
		baseLines := splitLines(string(*f.Base))
		best, bestScore := "", 0.0
		for _, g := range files {
			added, other := g.Ours, g.Theirs
			if !deletedByOurs {
				added, other = g.Theirs, g.Ours
			}
			if g.Base != nil || added == nil || other != nil || used[g.Path] {
				continue
			}
			if s := similarity(baseLines, splitLines(string(*added))); s >= moveSimilarity && (s > bestScore || (s == bestScore && g.Path < best)) {
				best, bestScore = g.Path, s
			}
		}
		if best != "" {
			used[best] = true
			out[f.Path] = best
		}
	}
	return out
}

// similarity is the share of a's lines that a line diff keeps in b,
// against the longer of the two.
func similarity(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	kept := 0
	for _, j := range matches(a, b) {
		if j >= 0 {
			kept++
		}
	}
	return float64(kept) / float64(max(len(a), len(b)))
}

// move merges the file at from, which one side moved to to, with the
// other side's change of it: the result is at to, from is gone.
func (m *merger) move(from, to *api.MergeFile) {
	mover := m.theirs
	ours, theirs := from.Ours, to.Theirs
	if from.Ours == nil {
		mover = m.ours
		ours, theirs = to.Ours, from.Theirs
	}
	f := m.file(to.Path, from.Base, ours, theirs)
	f.From = from.Path
	if f.Status != api.MergeConflict {
		f.Status = api.MergeMoved
	}
	msg := fmt.Sprintf("moved from %s by %s; the other side's change follows it", from.Path, mover)
	if f.Message != "" {
		msg += "; " + f.Message
	}
	f.Message = msg
	m.add(f)
	m.add(api.MergedFile{Path: from.Path, Status: api.MergeDeleted, Message: fmt.Sprintf("moved to %s by %s", to.Path, mover)})
}

// regenerate puts back the context.md of each folder the merge keeps an
// entry in, when the merge would delete it (one side deleted the folder,
// the other added or changed an entry in it): the version a side still
// has, else a new one (tree.NewContext).
func (m *merger) regenerate(byPath map[string]*api.MergeFile) {
	for i := range m.out {
		f := &m.out[i]
		if f.Content != nil || path.Base(f.Path) != "context.md" {
			continue
		}
		folder := path.Dir(f.Path)
		if folder == "." {
			continue
		}
		kept := false
		for _, g := range m.out {
			if g.Content != nil && tree.IsEntryPath(g.Path) && strings.HasPrefix(g.Path, folder+"/") {
				kept = true
				break
			}
		}
		if !kept {
			continue
		}
		var c []byte
		msg := "the folder keeps entries, so its context.md is regenerated"
		if in := byPath[f.Path]; in != nil && in.Ours != nil {
			c = *in.Ours
			msg += fmt.Sprintf(" (%s's version)", m.ours)
		} else if in != nil && in.Theirs != nil {
			c = *in.Theirs
			msg += fmt.Sprintf(" (%s's version)", m.theirs)
		} else {
			c = tree.NewContext(folder)
		}
		f.Content, f.Status, f.Message = &c, api.MergeRegenerated, msg
	}
}
