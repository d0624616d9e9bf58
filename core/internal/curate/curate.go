// Package curate applies curate operations (ADD, UPDATE, UPSERT, MERGE,
// DELETE, MOVE; docs/ABI.md §4.2) to a Context Tree: it validates each operation, turns
// it into entry and context.md files written through the host file
// interface, keeps the catalog in step, reports a per-operation result and
// appends every operation, applied or failed, to the audit log
// (.arbor/audit.jsonl).
//
// A failed operation changes nothing: every multi-file operation is ordered
// so that a crash in the middle leaves every entry whole and loses no
// knowledge, and an I/O error rolls back what the operation already wrote.
//
// The package must not touch the OS or the network: it reaches files only
// through host.FS and time only through host.Clock, so that the same code
// runs natively and in WebAssembly.
package curate

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/tree"
)

// AuditPath is where the audit log lives, relative to the memory root.
const AuditPath = api.AuditFile

// DefaultMaxFileBytes is the size limit of a rendered entry when
// Curator.MaxFileBytes is 0.
const DefaultMaxFileBytes = 1 << 20

// Change tells the engine what a successful operation changed, so that it
// can update its index.
type Change struct {
	// Path is the file path, relative to the memory root.
	Path string
	// Entry is the new entry; nil when the file was removed or is a context file.
	Entry *tree.Entry
	// Context is the new context file, when the change is a context.md.
	Context *tree.Context
	// Removed reports that the file was deleted.
	Removed bool
}

// Curator applies operations to one memory root. It is not safe for
// concurrent use: operations are applied one at a time (docs/design.md, Curation).
type Curator struct {
	FS    host.FS
	Clock host.Clock // nil means host.SystemClock
	// Catalog is the engine's live view of the tree; the curator reads it to
	// find entries and backlinks and keeps it in sync on success. A nil
	// Catalog is treated as an empty tree.
	Catalog *catalog.Catalog
	// MaxFileBytes bounds a rendered entry; 0 means DefaultMaxFileBytes.
	MaxFileBytes int
	// OnChange, when not nil, is called for every file a successful
	// operation changed, after the catalog was updated.
	OnChange func(Change)
	// Log, when not nil, hears of operations recovered from the journal.
	Log host.Logger
	// Progress, when not nil, is told how many operations of an Apply are
	// done: 0 before the first, then after each.
	Progress func(done, total int)
	// Versions, when not nil, remembers the entries of the versions the
	// session read out and wrote, for operations made from one of them
	// (checkBase).
	Versions *Versions

	current   inflight // the operation applyOne is applying
	journaled bool     // JournalPath holds an operation of this call
	// lists caches the folder listings spell reads, for the many paths of
	// one call (an ingest plans hundreds in one new folder); a write and
	// the next Apply drop it.
	lists map[string][]host.DirEntry
	// unread holds the markdown files the catalog does not hold as they
	// are on disk, read by the call's first MOVE or MERGE (linkersSince);
	// nil until then, and at each Apply.
	unread []unreadFile
	// reasons is what the audit log holds, read when a write would replace
	// a reason (keepReasons).
	reasons *auditReasons
	at      time.Time // the time of the operation being applied (now)
}

// outcome is what a successful operation did: ADD and an UPSERT that
// creates are marked Created, which the summary and the lifecycle read.
type outcome int

const (
	outAdded outcome = iota + 1
	outUpdated
	outMerged
	outDeleted
	outMoved
)

// auditRecord is one line of the audit log.
type auditRecord struct {
	Time string `json:"time"`
	Op   string `json:"op"`
	Path string `json:"path"`
	// To is where a MOVE put Path (or was asked to, when it failed).
	To      string `json:"to,omitempty"`
	Reason  string `json:"reason"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// Apply applies ops in order, one at a time. A failed operation changes
// nothing and does not stop the following ones. Every operation gets one
// line in the audit log, appended and synced as soon as it is done; an
// operation a killed process left unrecorded is recorded first (Recover).
// The caller holds the root's lock.
func (c *Curator) Apply(ops []api.Operation) Result {
	c.lists, c.unread = nil, nil
	c.auditLog().relist()
	res := Result{Applied: make([]Applied, 0, len(ops))}
	var auditErr error
	if msg, err := c.Recover(); err != nil {
		auditErr = err
	} else if msg != "" && c.Log != nil {
		c.Log.Log("warn", msg)
	}
	if auditErr == nil {
		auditErr = c.rotateAudit()
	}
	for i, op := range ops {
		if c.Progress != nil {
			c.Progress(i, len(ops))
		}
		c.at = c.now()
		a := c.applyOne(op)
		rec := auditRecord{Time: c.at.Format(time.RFC3339), Op: a.Type, Path: a.Path, To: cmp.Or(a.To, op.To), Reason: op.Reason, Status: a.Status, Message: a.Message}
		if auditErr == nil {
			auditErr = c.appendAudit(rec)
		}
		if auditErr != nil {
			a.Message += fmt.Sprintf(" (audit log not written: %v)", auditErr)
		}
		res.Add(a)
		c.at = time.Time{}
	}
	if c.Progress != nil && len(ops) > 0 {
		c.Progress(len(ops), len(ops))
	}
	if c.journaled && auditErr == nil {
		if err := c.dropJournal(); err != nil && c.Log != nil {
			c.Log.Log("warn", err.Error())
		}
	}
	return res
}

// now is the time of the operation being applied: one instant for all it
// writes and its audit line, so that an entry's updatedAt names the line
// that gave its reason (keepReasons).
func (c *Curator) now() time.Time {
	if !c.at.IsZero() {
		return c.at
	}
	if c.Clock == nil {
		return time.Now().UTC().Truncate(time.Second)
	}
	return c.Clock.Now().UTC().Truncate(time.Second)
}

func (c *Curator) maxBytes() int {
	if c.MaxFileBytes <= 0 {
		return DefaultMaxFileBytes
	}
	return c.MaxFileBytes
}

// catalog returns the live catalog, or an empty one when none was given.
func (c *Curator) catalog() *catalog.Catalog {
	if c.Catalog == nil {
		c.Catalog = catalog.New()
	}
	return c.Catalog
}

// auditRotateBytes bounds one audit log file: past this size the log is
// renamed to a dated file of its own (audit.<time>.jsonl, see
// RotatedAuditName) and a new one begun, so that no file grows without
// bound and a crash recovery reads a bounded one.
const auditRotateBytes = 256 << 10

// RotatedAuditName is the name, under .arbor, of the audit log rotated at t.
func RotatedAuditName(t time.Time) string {
	return "audit." + t.UTC().Format("20060102T150405Z") + ".jsonl"
}

// appendAudit appends one line to the audit log, synced.
func (c *Curator) appendAudit(rec auditRecord) error {
	if c.FS == nil {
		return nil
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode audit line: %w", err)
	}
	line = append(line, '\n')
	torn, err := c.auditTorn()
	if err != nil {
		return fmt.Errorf("append to %s: %w", AuditPath, err)
	}
	if torn {
		line = append([]byte{'\n'}, line...)
	}
	if err := c.FS.Append(AuditPath, line); err != nil {
		return fmt.Errorf("append to %s: %w", AuditPath, err)
	}
	c.auditLog().appended(line)
	return nil
}

// auditTorn reports whether the audit log ends inside a line: an append a
// crash or a full disk cut short (fs_append, ABI §2). The next line then
// begins on a line of its own; appended to the torn one, it would be read
// with it as one line that does not parse, and its record lost.
func (c *Curator) auditTorn() (bool, error) {
	st, err := c.FS.Stat(AuditPath)
	switch {
	case errors.Is(err, host.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case st.Size == 0:
		return false, nil
	}
	if rr := host.RangeReaderOf(c.FS); rr != nil {
		var last [1]byte
		n, err := rr.ReadAt(AuditPath, last[:], st.Size-1)
		if err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
		return n == 1 && last[0] != '\n', nil
	}
	data, err := c.FS.ReadFile(AuditPath)
	if err != nil {
		return false, err
	}
	return len(data) > 0 && data[len(data)-1] != '\n', nil
}

// rotateAudit renames a log grown past auditRotateBytes to a name no
// other rotated log has, so that a new one begins.
func (c *Curator) rotateAudit() error {
	if c.FS == nil {
		return nil
	}
	st, err := c.FS.Stat(AuditPath)
	switch {
	case errors.Is(err, host.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("stat %s: %w", AuditPath, err)
	case st.Size < auditRotateBytes:
		return nil
	}
	dir := path.Dir(AuditPath)
	name := RotatedAuditName(c.now())
	for n := 2; ; n++ {
		if _, err := c.FS.Stat(path.Join(dir, name)); errors.Is(err, host.ErrNotFound) {
			break
		} else if err != nil {
			return fmt.Errorf("rotate %s: %w", AuditPath, err)
		}
		name = strings.TrimSuffix(RotatedAuditName(c.now()), ".jsonl") + fmt.Sprintf("_%d.jsonl", n)
	}
	if err := c.FS.Rename(AuditPath, path.Join(dir, name)); err != nil {
		return fmt.Errorf("rotate %s: %w", AuditPath, err)
	}
	c.auditLog().rotatedAway()
	return nil
}

// applyOne validates and applies one operation.
func (c *Curator) applyOne(op api.Operation) Applied {
	typ := strings.ToUpper(strings.TrimSpace(op.Type))
	a := Applied{Applied: api.Applied{Type: typ, Path: op.Path, Status: api.StatusFailed}}
	if typ == "" {
		a.Type = op.Type
	}
	fail := func(err error) Applied {
		a.Message = err.Error()
		a.Carried, a.BrokenRelations = nil, nil
		return a
	}
	if c.FS == nil {
		return fail(errors.New("no file system"))
	}
	v, err := validate(typ, &op)
	if err == nil {
		a.Path = v.path
		v, err = c.spell(typ, v)
	}
	if err != nil {
		return fail(err)
	}
	a.Path = v.path
	c.current = inflight{op: op, typ: typ, path: v.path}
	var out outcome
	switch typ {
	case api.OpAdd:
		err = c.add(&a, op, v)
		out = outAdded
	case api.OpUpdate:
		err = c.update(&a, op, v)
		out = outUpdated
	case api.OpUpsert:
		out, err = c.upsert(&a, op, v)
	case api.OpMerge:
		err = c.merge(&a, op, v)
		out = outMerged
	case api.OpDelete:
		err = c.delete(&a, v)
		out = outDeleted
	case api.OpMove:
		err = c.move(&a, v)
		out = outMoved
	}
	if err != nil {
		a = fail(err)
		switch {
		case errors.Is(err, host.ErrNoSpace) && !errors.Is(err, errRollbackIncomplete):
			// Said first and plainly: the code carries no more than "no
			// space", and a person reads the start of a message.
			a.Message = "the disk is full: nothing was written (" + err.Error() + ")"
		case errors.Is(err, host.ErrNoSpace):
			a.Message = "the disk is full, and the undo could not finish for want of space: " + a.Message
		}
		if errors.Is(err, host.ErrDenied) && !errors.Is(err, host.ErrReadOnly) {
			// The ABI carries the code, not the host's reason: name the
			// causes left once the paths passed the checks above.
			a.Message += " (a symbolic link on the path, which the engine neither reads nor writes through, or a file or folder it may not read or write)"
		}
		if isConflict(err) {
			a.Status = api.StatusConflict
		}
		return a
	}
	a.Status = api.StatusSuccess
	a.Created = out == outAdded
	if typ == api.OpMerge {
		a.Target = v.target
	}
	return a
}

// errRollbackIncomplete marks an operation whose undo failed: part of it
// may be left in the tree, so its message must not say nothing was written.
var errRollbackIncomplete = errors.New("rollback incomplete")

// finish commits a transaction that succeeded, or rolls it back and
// returns err, with the rollback failure if there was one.
func (c *Curator) finish(t *txn, err error) error {
	c.lists = nil
	if err == nil {
		err = t.apply()
	}
	if err == nil {
		t.commit(c.OnChange)
		return nil
	}
	if rerr := t.rollback(); rerr != nil {
		return fmt.Errorf("%w; %w: %v", err, errRollbackIncomplete, rerr)
	}
	return err
}

// render renders e, refuses it when it is over the size limit, and parses
// it back: the parsed form is what the catalog gets, and an entry that
// would not parse is never written.
func (c *Curator) render(e *tree.Entry) ([]byte, *tree.Entry, error) {
	data := tree.Render(e)
	if max := c.maxBytes(); len(data) > max {
		return nil, nil, fmt.Errorf("entry %s would be %d bytes, over the %d-byte limit", e.Path, len(data), max)
	}
	parsed, err := tree.ParseEntry(e.Path, data)
	if err != nil {
		return nil, nil, fmt.Errorf("entry %s does not parse back after rendering (refused): %w", e.Path, err)
	}
	return data, parsed, nil
}

// exists reports whether a file or folder is at p.
func (c *Curator) exists(p string) (host.DirEntry, bool, error) {
	st, err := c.FS.Stat(p)
	switch {
	case err == nil:
		return st, true, nil
	case errors.Is(err, host.ErrNotFound):
		return host.DirEntry{}, false, nil
	}
	return host.DirEntry{}, false, fmt.Errorf("stat %s: %w", p, err)
}
