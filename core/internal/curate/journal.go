package curate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/catalog"
)

// JournalPath holds the operation being applied: written before its first
// file change, and removed once the calls' operations are in the audit
// log. A process killed in between leaves it, and the next curate (or
// open) finds out from it what the operation did and records it: no
// applied operation goes without its audit line.
const JournalPath = api.JournalFile

// journal is the JSON of JournalPath.
type journal struct {
	Time   string `json:"time"`
	Op     string `json:"op"`
	Path   string `json:"path"`
	To     string `json:"to,omitempty"`
	Reason string `json:"reason"`
	// AuditBytes is the audit log's size before the operation: a larger
	// log holds its line already.
	AuditBytes int64         `json:"auditBytes"`
	Files      []journalFile `json:"files"`
}

// journalFile is one planned change: the stamps (catalog.SourceKey) of
// the file before and after, "" for no file; or, with From, the rename of
// the file at From to Path, which is done when the file is at Path and no
// longer at From (told without reading it: it may be a video).
type journalFile struct {
	Path   string `json:"path"`
	From   string `json:"from,omitempty"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// inflight is the operation applyOne is applying, for its journal.
type inflight struct {
	op        api.Operation
	typ, path string
}

// newTxn starts a transaction whose changes are journaled first.
func (c *Curator) newTxn(cat *catalog.Catalog) *txn {
	return newTxn(c.FS, cat, c.writeJournal)
}

// writeJournal records the operation in flight and its plan.
func (c *Curator) writeJournal(plan []planned) error {
	j := journal{Time: c.now().Format(time.RFC3339), Op: c.current.typ, Path: c.current.path, To: c.current.op.To, Reason: c.current.op.Reason}
	if st, err := c.FS.Stat(AuditPath); err == nil {
		j.AuditBytes = st.Size
	}
	for _, ch := range plan {
		f := journalFile{Path: ch.path}
		if ch.from != "" {
			f.From = ch.from
			j.Files = append(j.Files, f)
			continue
		}
		if ch.existed {
			f.Before = catalog.SourceKey(ch.old)
		}
		if !ch.remove {
			f.After = catalog.SourceKey(ch.data)
		}
		j.Files = append(j.Files, f)
	}
	data, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encode %s: %w", JournalPath, err)
	}
	if err := c.FS.WriteFile(JournalPath, data); err != nil {
		return fmt.Errorf("write %s: %w", JournalPath, err)
	}
	c.journaled = true
	return nil
}

// Recover records the operation a killed process left in the journal, if
// its audit line is missing, as what the files on disk show: applied,
// not applied, or applied in part. It returns a sentence for people when
// it recorded one, "" otherwise. The caller holds the root's lock.
func (c *Curator) Recover() (string, error) {
	if c.FS == nil {
		return "", nil
	}
	data, err := c.FS.ReadFile(JournalPath)
	switch {
	case errors.Is(err, host.ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read %s: %w", JournalPath, err)
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		// Torn by a crash while it was written: no file was changed yet.
		return "", c.dropJournal()
	}
	if st, err := c.FS.Stat(AuditPath); err == nil && st.Size > j.AuditBytes {
		return "", c.dropJournal() // logged; only the removal was lost
	}
	var done, untouched, other []string
	for _, f := range j.Files {
		if f.From != "" {
			state, err := c.renamed(f)
			if err != nil {
				return "", fmt.Errorf("recover %s: %w", JournalPath, err)
			}
			name := f.From + " → " + f.Path
			switch state {
			case renameDone:
				done = append(done, name)
			case renameNotDone:
				untouched = append(untouched, name)
			default:
				other = append(other, name)
			}
			continue
		}
		now := ""
		if b, err := c.FS.ReadFile(f.Path); err == nil {
			now = catalog.SourceKey(b)
		} else if !errors.Is(err, host.ErrNotFound) {
			return "", fmt.Errorf("recover %s: read %s: %w", JournalPath, f.Path, err)
		}
		switch now {
		case f.After:
			done = append(done, f.Path)
		case f.Before:
			untouched = append(untouched, f.Path)
		default:
			other = append(other, f.Path)
		}
	}
	rec := auditRecord{Time: j.Time, Op: j.Op, Path: j.Path, To: j.To, Reason: j.Reason, Status: api.StatusFailed}
	switch {
	case len(done) == len(j.Files):
		rec.Status, rec.Message = api.StatusSuccess, "applied; the process stopped before logging it"
	case len(done) == 0 && len(other) == 0:
		rec.Message = "not applied: the process stopped before it changed anything"
	default:
		rec.Message = fmt.Sprintf("interrupted: the process stopped after %d of %d file changes (done: %s; not done: %s",
			len(done), len(j.Files), list(done), list(untouched))
		if len(other) > 0 {
			rec.Message += "; changed since by someone else: " + list(other)
		}
		rec.Message += ")"
	}
	if err := c.appendAudit(rec); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %s at %s was interrupted and is now in the audit log: %s", j.Op, j.Path, j.Time, rec.Message), c.dropJournal()
}

// What the disk shows of a journaled rename.
const (
	renameDone = iota
	renameNotDone
	renameNeither // at both places or at none: someone else's doing
)

// renamed tells whether the rename f was made, by where its file is.
func (c *Curator) renamed(f journalFile) (int, error) {
	at := func(p string) (bool, error) {
		_, err := c.FS.Stat(p)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, host.ErrNotFound):
			return false, nil
		}
		return false, fmt.Errorf("stat %s: %w", p, err)
	}
	to, err := at(f.Path)
	if err != nil {
		return 0, err
	}
	from, err := at(f.From)
	switch {
	case err != nil:
		return 0, err
	case to && !from:
		return renameDone, nil
	case from && !to:
		return renameNotDone, nil
	}
	return renameNeither, nil
}

func (c *Curator) dropJournal() error {
	if err := c.FS.Remove(JournalPath); err != nil && !errors.Is(err, host.ErrNotFound) {
		return fmt.Errorf("remove %s: %w", JournalPath, err)
	}
	c.journaled = false
	return nil
}

func list(paths []string) string {
	if len(paths) == 0 {
		return "none"
	}
	return strings.Join(paths, ", ")
}
