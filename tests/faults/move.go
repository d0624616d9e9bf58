package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// The moved folder: a topic of entries, attachments, a 150 MiB sparse
// file and a subtopic, which folder MOVEs carry between two places, so
// that every round that moves it moves the same material. Entries link
// into it, out of it and within it, so that a MOVE rewrites links (an
// entry it edits) besides carrying files by rename (one it does not).
var movePlaces = [2]string{"shelf/left", "cellar/right"}

const (
	bigName   = "big.bin"
	bigSize   = 150 << 20
	bigMarker = "END-OF-BIG-FILE"
	anchorDir = "notes/anchor"
)

// movedFile is one file of the moved folder, relative to it.
type movedFile struct {
	rel     string
	own     string   // an entry's own sentence
	related []string // an entry's relations, relative to the folder when inside it (prefixed "./")
	data    []byte   // an attachment's bytes; nil for the sparse file
	sum     [32]byte
	copied  bool // the sparse file was found written out
}

// edited tells whether a MOVE rewrites the entry: one of its links
// names a file of the folder. A crash may leave such an entry at both
// places; a file carried unedited, never.
func (f *movedFile) edited() bool {
	for _, r := range f.related {
		if strings.HasPrefix(r, "./") {
			return true
		}
	}
	return false
}

// moved is what the runner knows of the moved folder.
type moved struct {
	files []*movedFile
	at    int // the place the folder is whole at: 0 or 1
	// links from outside: entry path → the folder's file it names.
	inbound map[string]string
	seen    map[string]bool // the links naming no file, counted
	// this round's MOVEs: reasons, and the place they move from.
	reasons []string
	from    int

	Sent, Applied, Interrupted, Failed int
	Conflicts                          int // of Failed: a file it would rewrite changed on disk while it ran
	LeftAtBoth, Diverged, Dangling     int // after interrupted MOVEs
	Duplicated, LinksBroken            int
	Copied                             int // the sparse file written out: a MOVE copied it
	Updates, UpdatesMoved              int // UPDATEs of its entries sent; found at the other place
}

// newMoved writes the folder at its first place, and the entries that
// link into it.
func newMoved(root string, rng *rand.Rand) (*moved, error) {
	m := &moved{inbound: map[string]string{}, seen: map[string]bool{}}
	entry := func(rel, own string, related ...string) {
		m.files = append(m.files, &movedFile{rel: rel, own: own, related: related})
	}
	entry("e0.md", "Shelf entry e0, which links out.", anchorDir+"/anchor_0.md")
	entry("e1.md", "Shelf entry e1, which links in and out.", "./sub/s0.md", anchorDir+"/anchor_1.md")
	entry("e2.md", "Shelf entry e2, without links.")
	entry("e3.md", "Shelf entry e3, which links in.", "./e2.md")
	entry("sub/s0.md", "Sub entry s0, which links up.", "./e1.md")
	entry("sub/s1.md", "Sub entry s1, without links.")
	for _, a := range []struct {
		rel  string
		size int
	}{{"photo.png", 64 << 10}, {"scan.pdf", 9000}, {"table.csv", 700}, {"sub/diagram.svg", 3000}} {
		b := make([]byte, a.size)
		rng.Read(b)
		m.files = append(m.files, &movedFile{rel: a.rel, data: b, sum: sha256.Sum256(b)})
	}
	m.files = append(m.files, &movedFile{rel: bigName})
	place := movePlaces[0]
	for _, f := range m.files {
		full := filepath.Join(root, filepath.FromSlash(path.Join(place, f.rel)))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		switch {
		case f.rel == bigName:
			if err := writeSparse(full); err != nil {
				return nil, err
			}
		case f.data != nil:
			if err := os.WriteFile(full, f.data, 0o644); err != nil {
				return nil, err
			}
		default:
			var rel []string
			for _, r := range f.related {
				rel = append(rel, m.resolve(r, place))
			}
			if err := os.WriteFile(full, []byte(entryText(strings.TrimSuffix(path.Base(f.rel), ".md"), f.own, rel)), 0o644); err != nil {
				return nil, err
			}
		}
	}
	// Entries outside that link in: anchors nobody edits, and seed
	// entries the editor saves and deletes, and UPDATEs rewrite.
	for i, to := range []string{"e0.md", "e2.md"} {
		p := fmt.Sprintf("%s/anchor_%d.md", anchorDir, i)
		m.inbound[p] = to
	}
	for i, to := range []string{"e1.md", "sub/s1.md", "e3.md"} {
		m.inbound[fmt.Sprintf("%s/seed_%02d.md", seedFolder, i)] = to
	}
	for p, to := range m.inbound {
		if !strings.HasPrefix(p, anchorDir) {
			continue // the seeds are written by run, with m.seedLinks
		}
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		text := entryText(strings.TrimSuffix(path.Base(p), ".md"), "Anchor "+path.Base(p)+" stays.", []string{path.Join(place, to)})
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// seedLinks is the front matter line of a seed entry that links into
// the folder, or "".
func (m *moved) seedLinks(p string) string {
	if to, ok := m.inbound[p]; ok {
		return "related: [" + path.Join(movePlaces[0], to) + "]\n"
	}
	return ""
}

func (m *moved) resolve(r, place string) string {
	if strings.HasPrefix(r, "./") {
		return path.Join(place, r[2:])
	}
	return r
}

func entryText(title, own string, related []string) string {
	fm := "title: " + title + "\n"
	if len(related) > 0 {
		fm += "related: [" + strings.Join(related, ", ") + "]\n"
	}
	return "---\n" + fm + "---\n\n## Narrative\n" + own + "\n"
}

// writeSparse makes the large attachment: a hole, then a marker at its
// end, so that it takes no disk and a copy cut short shows.
func writeSparse(full string) error {
	f, err := os.Create(full)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte(bigMarker), bigSize-int64(len(bigMarker))); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// other is the path p of a file of the folder at the other place, or
// "" when p is not in the folder.
func (m *moved) other(p string) string {
	for i, place := range movePlaces {
		if strings.HasPrefix(p, place+"/") {
			return movePlaces[1-i] + strings.TrimPrefix(p, place)
		}
	}
	return ""
}

// updateTarget is an entry of the folder for an UPDATE, where it is now.
func (m *moved) updateTarget(rng *rand.Rand) string {
	var entries []*movedFile
	for _, f := range m.files {
		if f.own != "" {
			entries = append(entries, f)
		}
	}
	m.Updates++
	return path.Join(movePlaces[m.at], entries[rng.Intn(len(entries))].rel)
}

// writer is a folder MOVE, from where the folder is to the other place.
func (m *moved) writer(bin, root string, round, w int) *exec.Cmd {
	reason := fmt.Sprintf("w%d-r%d-mv", w, round)
	m.reasons = append(m.reasons, reason)
	m.from = m.at
	m.Sent++
	data, _ := json.Marshal(map[string]any{"operations": []map[string]any{{
		"type": "MOVE", "path": movePlaces[m.at], "to": movePlaces[1-m.at], "reason": reason}}})
	cmd := exec.Command(bin, "--root", root, "curate", "-")
	cmd.Stdin = bytes.NewReader(data)
	return cmd
}

// check checks the folder after the root was opened again: each file at
// exactly one of its places (an entry the MOVE edits may be at both
// after a crash), whole; the links; the audit log. After an interrupted
// MOVE it finishes it as a person reading the audit line would: the rest
// moved by hand and the links pointed at the new place.
func (m *moved) check(res *result, root string, byReason map[string][]string, tree map[string]string) error {
	defer func() { m.reasons = nil }()
	count := [2]int{}
	var both, kept []*movedFile
	for _, f := range m.files {
		var here [2]bool
		broken := false
		for i, place := range movePlaces {
			p := path.Join(place, f.rel)
			b, err := m.read(root, p, f)
			if err != nil {
				return err
			}
			if b == "" {
				continue
			}
			here[i] = true
			if f.rel == bigName && strings.Contains(b, "written out") {
				if !f.copied {
					m.Copied++
					res.problem("copied: %s is %s, not carried by a rename", p, b[1:])
					f.copied = true // counted once
				}
				b = b[:strings.Index(b, " written out")] + " sparse" // counted here, not as torn
			}
			if problem := f.whole(b); problem != "" {
				res.Torn++
				res.problem("torn: %s %s", p, problem)
				broken = true
			}
		}
		switch {
		case here[0] && here[1]:
			if !f.edited() {
				m.Duplicated++
				res.problem("duplicated: %s, carried unedited, is at %s and %s", f.rel, movePlaces[0], movePlaces[1])
			}
			both = append(both, f)
		case here[0]:
			count[0]++
		case here[1]:
			count[1]++
		default:
			res.Lost++
			res.problem("lost: %s of the moved folder is at neither %s nor %s", f.rel, movePlaces[0], movePlaces[1])
			broken = true
		}
		// A file lost or torn is counted once: later rounds move the rest.
		if !broken {
			kept = append(kept, f)
		}
	}
	m.files = kept
	success, interrupted, conflict := false, false, false
	for _, r := range m.reasons {
		for _, l := range byReason[r] {
			switch {
			case strings.HasPrefix(l, "success"):
				success = true
			case strings.HasPrefix(l, "conflict"):
				conflict = true
			case strings.Contains(l, "interrupted"):
				interrupted = true
			}
		}
	}
	to := 1 - m.from
	whole := len(both) == 0 && (count[0] == 0 || count[1] == 0)
	switch {
	case len(m.reasons) == 0:
	case whole && count[to] > 0:
		if success {
			m.Applied++
		} else {
			res.AuditMissing++
			res.problem("audit-missing: the folder moved to %s, and the audit log has no success for %v (%s)", movePlaces[to], m.reasons, m.lines(byReason))
		}
	case whole:
		if success {
			res.Lost++
			res.problem("lost: a MOVE to %s is in the audit log as applied, and the folder is at %s", movePlaces[to], movePlaces[m.from])
		} else {
			m.Failed++
			if conflict {
				m.Conflicts++
			}
		}
	default:
		m.Interrupted++
		if !interrupted {
			res.AuditMissing++
			res.problem("audit-missing: the folder is split between %s and %s, and the audit log records no interrupted MOVE of %v", movePlaces[0], movePlaces[1], m.reasons)
		}
	}
	if whole {
		if count[1] > 0 {
			m.at = 1
		} else {
			m.at = 0
		}
		m.checkLinks(res, tree)
		return nil
	}
	m.LeftAtBoth += len(both)
	m.Dangling += len(danglingLinks(tree))
	return m.finish(res, root, to)
}

// lines is what the audit log says of this round's MOVEs.
func (m *moved) lines(byReason map[string][]string) string {
	var out []string
	for _, r := range m.reasons {
		for _, l := range byReason[r] {
			out = append(out, r+": "+l)
		}
	}
	if len(out) == 0 {
		return "no line"
	}
	return strings.Join(out, "; ")
}

// read is the file p's text ("" when absent): an entry's text, an
// attachment's bytes, or the sparse file's size and last bytes.
func (m *moved) read(root, p string, f *movedFile) (string, error) {
	full := filepath.Join(root, filepath.FromSlash(p))
	if f.rel != bigName {
		b, err := os.ReadFile(full)
		if os.IsNotExist(err) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		return "\x00" + string(b), nil // present, even if empty
	}
	fh, err := os.Open(full)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return "", err
	}
	tail := make([]byte, len(bigMarker))
	n, _ := fh.ReadAt(tail, st.Size()-int64(len(tail)))
	// A copy would have written its hole out: it stays sparse only
	// if each MOVE carried it by a rename.
	sparse := "sparse"
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Blocks*512 > 1<<20 {
		sparse = fmt.Sprintf("written out (%d MiB on disk)", sys.Blocks*512>>20)
	}
	return fmt.Sprintf("\x00%d %s %s", st.Size(), tail[:n], sparse), nil
}

// whole says what is wrong with the file's text b, or "".
func (f *movedFile) whole(b string) string {
	b = b[1:]
	switch {
	case f.rel == bigName:
		if want := fmt.Sprintf("%d %s sparse", bigSize, bigMarker); b != want {
			return fmt.Sprintf("is %q, not %q", b, want)
		}
	case f.data != nil:
		if sha256.Sum256([]byte(b)) != f.sum {
			return fmt.Sprintf("has %d bytes unlike the %d written", len(b), len(f.data))
		}
	case !strings.Contains(b, f.own):
		return fmt.Sprintf("lacks its own sentence %q", f.own)
	}
	return ""
}

// checkLinks counts the relations in the tree that name no file, each
// once.
func (m *moved) checkLinks(res *result, tree map[string]string) {
	for _, d := range danglingLinks(tree) {
		if m.seen[d] {
			continue
		}
		m.seen[d] = true
		m.LinksBroken++
		res.problem("dangling link: %s", d)
	}
}

// danglingLinks lists, as "entry → target", each front matter relation
// of the tree naming no file of it.
func danglingLinks(tree map[string]string) []string {
	var out []string
	for p, text := range tree {
		for _, r := range relations(text) {
			if _, ok := tree[r]; !ok {
				out = append(out, p+" → "+r)
			}
		}
	}
	sort.Strings(out)
	return out
}

// relations reads the front matter's related list, inline ([a, b]) or
// a block of "- a" lines.
func relations(text string) []string {
	if !strings.HasPrefix(text, "---\n") {
		return nil
	}
	fm, _, ok := strings.Cut(text[4:], "\n---")
	if !ok {
		return nil
	}
	var out []string
	lines := strings.Split(fm, "\n")
	for i, l := range lines {
		v, ok := strings.CutPrefix(l, "related:")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "[") {
			for _, s := range strings.Split(strings.Trim(v, "[]"), ",") {
				if s = strings.Trim(strings.TrimSpace(s), `"'`); s != "" {
					out = append(out, s)
				}
			}
			continue
		}
		for _, l := range lines[i+1:] {
			s, ok := strings.CutPrefix(strings.TrimSpace(l), "- ")
			if !ok {
				break
			}
			out = append(out, strings.Trim(strings.TrimSpace(s), `"'`))
		}
	}
	return out
}

// finish ends an interrupted MOVE by hand, as a person reading its
// audit line would: each file still at the old place moved to the new
// one (a copy left at both removed from the old), and each relation
// naming the old place pointed at the new one, so that the next rounds
// move the whole folder again. A copy at both places that says more than
// the new one (an UPDATE between the MOVE's write and its removal) is
// reported: removing it would lose that.
func (m *moved) finish(res *result, root string, to int) error {
	from := movePlaces[1-to]
	for _, f := range m.files {
		src := filepath.Join(root, filepath.FromSlash(path.Join(from, f.rel)))
		dst := filepath.Join(root, filepath.FromSlash(path.Join(movePlaces[to], f.rel)))
		if _, err := os.Stat(src); err != nil {
			continue
		}
		if _, err := os.Stat(dst); err == nil {
			if strings.HasSuffix(f.rel, ".md") {
				old, err1 := os.ReadFile(src)
				now, err2 := os.ReadFile(dst)
				if err1 != nil || err2 != nil {
					return fmt.Errorf("finish the MOVE: %v, %v", err1, err2)
				}
				if lost := missingLines(strings.ReplaceAll(string(old), from+"/", movePlaces[to]+"/"), string(now)); lost != "" {
					m.Diverged++
					res.problem("diverged: %s is at both places after an interrupted MOVE, the old copy's line %q not in the new", f.rel, lost)
				}
			}
			if err := os.Remove(src); err != nil {
				return fmt.Errorf("finish the MOVE: %w", err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("finish the MOVE: %w", err)
		}
		if err := os.Rename(src, dst); err != nil {
			return fmt.Errorf("finish the MOVE: %w", err)
		}
	}
	if err := os.RemoveAll(filepath.Join(root, filepath.FromSlash(from))); err != nil {
		return fmt.Errorf("finish the MOVE: %w", err)
	}
	for p, text := range markdownFiles(root) {
		fixed := strings.ReplaceAll(text, from+"/", movePlaces[to]+"/")
		if fixed == text {
			continue
		}
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), []byte(fixed), 0o644); err != nil {
			return fmt.Errorf("finish the MOVE: %w", err)
		}
	}
	m.at = to
	return nil
}

// missingLines is the first line of old that now lacks, or "".
func missingLines(old, now string) string {
	for _, l := range strings.Split(old, "\n") {
		if !strings.Contains(now, l) {
			return l
		}
	}
	return ""
}
