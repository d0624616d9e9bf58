package curate

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/fnv"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/tree"
)

// EarlierReasons is the section where an UPDATE, an UPSERT or a MERGE keeps
// the text of a "## Reason" section that the engine did not write: a
// person's prose there would otherwise go at the next write, since the
// section holds why the last operation wrote the entry.
const EarlierReasons = "Earlier reasons"

// keepReasons keeps in e's EarlierReasons section the reason of each of
// olds (what the write replaces: the entry, or a MERGE's target and source)
// that e no longer holds and that the engine did not write.
//
// The engine wrote a reason when the audit log has it: the engine sets
// updatedAt to the time of the operation and logs the operation's reason at
// that time, so an entry whose Reason and updatedAt match a logged
// operation holds what the engine wrote. The text alone decides, not the
// path, so an entry moved since keeps its record. A record the log no
// longer has (a deleted .arbor, an entry dated by an ingested note's own
// front matter) keeps the reason: one paragraph too many, never one lost.
func (c *Curator) keepReasons(e *tree.Entry, olds ...*tree.Entry) error {
	i := slices.IndexFunc(e.Other, func(s tree.Section) bool { return strings.EqualFold(s.Heading, EarlierReasons) })
	for _, o := range olds {
		r := strings.TrimSpace(o.Reason)
		if r == "" || r == strings.TrimSpace(e.Reason) || (i >= 0 && strings.Contains(e.Other[i].Body, r)) {
			continue
		}
		logged, err := c.auditLog().logged(c.FS, o.UpdatedAt, r)
		if err != nil {
			return err
		}
		if logged {
			continue
		}
		if i < 0 {
			i = len(e.Other)
			e.Other = append(e.Other, tree.Section{Heading: EarlierReasons})
		}
		e.Other[i].Body = joinText(e.Other[i].Body, r, "\n\n")
	}
	return nil
}

// auditReasons remembers, for one session, which reasons the audit log
// holds at which time, file by file, so that checking a reason reads each
// log file once.
type auditReasons struct {
	files map[string]*loggedReasons // by path
	// rotated are the names of the rotated logs, listed once per Apply:
	// while it holds the root's lock, no other process rotates the log.
	rotated []string
	listed  bool
}

// loggedReasons is what one audit log file holds: the hash of each reason
// of an operation that was not refused, by the operation's time.
type loggedReasons struct {
	size   int64 // of the file as last read
	own    int64 // bytes this session appended since
	byTime map[string][]uint64
}

func (c *Curator) auditLog() *auditReasons {
	if c.reasons == nil {
		c.reasons = &auditReasons{files: map[string]*loggedReasons{}}
	}
	return c.reasons
}

func reasonHash(r string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(strings.TrimSpace(r)))
	return h.Sum64()
}

// logged reports whether an operation logged at t gave reason r: in the
// current log, or in one rotated at t or later.
func (a *auditReasons) logged(fsys host.FS, t time.Time, r string) (bool, error) {
	if t.IsZero() {
		return false, nil
	}
	at, sum := t.UTC().Format(time.RFC3339), reasonHash(r)
	has := func(p string) (bool, error) {
		f, err := a.file(fsys, p)
		if err != nil || f == nil {
			return false, err
		}
		return slices.Contains(f.byTime[at], sum), nil
	}
	if ok, err := has(AuditPath); ok || err != nil {
		return ok, err
	}
	if !a.listed {
		list, err := fsys.ReadDir(path.Dir(AuditPath))
		if err != nil && !errors.Is(err, host.ErrNotFound) {
			return false, err
		}
		a.rotated = a.rotated[:0]
		for _, de := range list {
			if !de.IsDir && de.Name != path.Base(AuditPath) && strings.HasPrefix(de.Name, "audit.") && strings.HasSuffix(de.Name, ".jsonl") {
				a.rotated = append(a.rotated, de.Name)
			}
		}
		slices.Sort(a.rotated)
		a.listed = true
	}
	// A rotated log holds what was logged before its name's time, so the
	// first one named at t or later holds t's records; a clock set back, or
	// a second split over two files, may put them in a later one.
	from, _ := slices.BinarySearch(a.rotated, RotatedAuditName(t))
	for _, name := range a.rotated[from:] {
		if ok, err := has(path.Join(path.Dir(AuditPath), name)); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// file reads the audit log at p, or what was added to it since the
// session last read it; nil when there is none.
func (a *auditReasons) file(fsys host.FS, p string) (*loggedReasons, error) {
	f := a.files[p]
	if f != nil && p != AuditPath {
		return f, nil // rotated logs do not change
	}
	st, err := fsys.Stat(p)
	switch {
	case errors.Is(err, host.ErrNotFound):
		delete(a.files, p)
		return nil, nil
	case err != nil:
		return nil, err
	case f != nil && st.Size == f.size+f.own:
		f.size, f.own = st.Size, 0
		return f, nil
	}
	data, err := fsys.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if f == nil || int64(len(data)) < f.size {
		f = &loggedReasons{byTime: map[string][]uint64{}}
	}
	f.own = 0 // another process appended too: this session's lines are read again
	rest := data[f.size:]
	if i := bytes.LastIndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i+1] // a torn last line is read once it is whole
	} else {
		rest = nil
	}
	for line := range bytes.Lines(rest) {
		f.add(line)
	}
	f.size += int64(len(rest))
	a.files[p] = f
	return f, nil
}

// add takes in one line of a log; a line that does not parse says
// nothing.
func (f *loggedReasons) add(line []byte) {
	var rec auditRecord
	if json.Unmarshal(line, &rec) != nil || rec.Status == api.StatusFailed || strings.TrimSpace(rec.Reason) == "" {
		return
	}
	f.byTime[rec.Time] = append(f.byTime[rec.Time], reasonHash(rec.Reason))
}

// appended keeps the session's copy of the current log in step with a line
// this session appended, so that the next check need not read it again
// unless the file grew by more than this session's lines.
func (a *auditReasons) appended(line []byte) {
	if f := a.files[AuditPath]; f != nil {
		f.add(line)
		f.own += int64(len(line))
	}
}

// rotatedAway forgets the current log, renamed away, and the listing of
// the rotated ones.
func (a *auditReasons) rotatedAway() {
	delete(a.files, AuditPath)
	a.listed = false
}

// relist forgets the listing of the rotated logs: another process may have
// rotated the log since this session last held the root's lock.
func (a *auditReasons) relist() { a.listed = false }
