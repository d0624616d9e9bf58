package curate

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/tree"
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
	// Links are the links the operation points elsewhere (a MOVE's or a
	// MERGE's: each as written → its new target): a file it rewrites that
	// someone saved before the next open could finish it gets only these
	// changed, the rest of the save kept.
	Links map[string]string `json:"links,omitempty"`
}

// journalFile is one planned change: the stamps (catalog.SourceKey) of
// the file before and after, "" for no file, and the bytes written (Data,
// in a plan of several changes: what the next open needs to finish it);
// or, with From, the rename of the file at From to Path, which is done
// when the file is at Path and no longer at From (told without reading
// it: it may be a video).
type journalFile struct {
	Path   string `json:"path"`
	From   string `json:"from,omitempty"`
	Before string `json:"before"`
	After  string `json:"after"`
	Data   []byte `json:"data,omitempty"`
	// Relink marks a change that only points the file's links elsewhere
	// (a referrer of a MOVE or MERGE): in a file saved since, finishing it
	// rewrites those links of the save (journal.Links).
	Relink bool `json:"relink,omitempty"`
}

// journalData bounds the bytes a journal keeps of the files its plan
// writes (an operation's entries: a MOVE that must copy attachments
// across devices may write more); past it, an interrupted operation is
// recorded, not finished.
const journalData = 16 << 20

// inflight is the operation applyOne is applying, for its journal.
type inflight struct {
	op        api.Operation
	typ, path string
	links     map[string]string // see journal.Links
	relinked  map[string]bool   // the files it writes only to point their links elsewhere (journalFile.Relink)
}

// newTxn starts a transaction whose changes are journaled first.
func (c *Curator) newTxn(cat *catalog.Catalog) *txn {
	return newTxn(c.FS, cat, c.writeJournal)
}

// writeJournal records the operation in flight and its plan.
func (c *Curator) writeJournal(plan []planned) error {
	j := journal{Time: c.now().Format(time.RFC3339), Op: c.current.typ, Path: c.current.path, To: c.current.op.To, Reason: c.current.op.Reason, Links: c.current.links}
	if st, err := c.FS.Stat(AuditPath); err == nil {
		j.AuditBytes = st.Size
	}
	// A single change is atomic by itself: only a plan of several can be
	// cut part way, and needs the bytes to be finished.
	kept := 0
	if len(plan) > 1 {
		for _, ch := range plan {
			if ch.from == "" && !ch.remove {
				kept += len(ch.data)
			}
		}
	}
	for _, ch := range plan {
		f := journalFile{Path: ch.path, Relink: c.current.relinked[ch.path]}
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
			if len(plan) > 1 && kept <= journalData {
				f.Data = ch.data
			}
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
// not applied, or applied in part. One applied in part (a MOVE of a
// folder split between its two places, links pointing at files not there
// yet) is finished first, each remaining change made only where its file
// is still as the operation left it: then it is recorded as applied. An
// entry someone saved since, whose links the operation rewrites, gets
// only those links rewritten; any other file changed since by someone
// else is left as it is, the rest still made, and the operation recorded
// as interrupted, naming it; one that cannot be finished (a write whose
// bytes the journal does not hold, a change that fails again) is recorded
// as interrupted, naming what was done. It returns a sentence for people when it recorded one, ""
// otherwise. The caller holds the root's lock.
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
	var unfinished error
	aroundOthers := false // finished but for files changed since
	if len(done) > 0 && len(done) < len(j.Files) {
		var a around
		a, unfinished = c.finishJournaled(j)
		if unfinished == nil {
			rec.Message = fmt.Sprintf("the process stopped after %d of %d file changes, and the next open made the rest (%s)", len(done), len(j.Files), list(untouched))
			if len(a.relinked) > 0 {
				rec.Message += "; in files changed since by someone else it pointed only the links at their new targets, keeping the rest as saved: " + list(a.relinked)
			}
			if len(a.kept) > 0 {
				rec.Message += "; files changed since by someone else that no longer name what it moved, kept as saved: " + list(a.kept)
			}
			if len(a.deleted) > 0 {
				rec.Message += "; files it was to rewrite were deleted since by someone else, and stay deleted: " + list(a.deleted)
			}
			if len(a.skipped) == 0 {
				rec.Status, rec.Message = api.StatusSuccess, "applied: "+rec.Message
			} else {
				aroundOthers = true
				rec.Message = "interrupted: " + rec.Message + "; but for files changed since by someone else, left as they are: " + list(a.skipped)
			}
		}
	}
	switch {
	case rec.Status == api.StatusSuccess, aroundOthers:
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
		if unfinished != nil {
			rec.Message += "; not finished: " + unfinished.Error()
		}
		rec.Message += ")"
	}
	if err := c.appendAudit(rec); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %s at %s was interrupted and is now in the audit log: %s", j.Op, j.Path, j.Time, rec.Message), c.dropJournal()
}

// around is what finishJournaled found changed by someone else since
// the operation planned its files.
type around struct {
	relinked []string // referrers saved since: only the links rewritten
	kept     []string // referrers saved since with none of the links left: kept as saved
	deleted  []string // referrers deleted since: nothing left to rewrite
	skipped  []string // anything else: left as it is
}

// finishJournaled makes the changes of j not made yet, in the order
// planned, each only while its file is as the operation left it (a
// rename's source there and nothing at its destination; a write's or a
// removal's file still holding its bytes from before), and removes the
// folders a folder MOVE or DELETE emptied. A file changed since by
// someone else is theirs: an entry whose links the operation rewrites
// gets only those links pointed at their new targets, so that a person's
// save does not leave a link naming a file moved or merged away (one
// deleted since stays deleted); any other is left as it is, and the rest
// still made (a folder still moves, where stopping left it split), but
// for the removals that follow a write carrying knowledge left so: the
// text they would remove may be nowhere else. It stops at the first
// change that fails, or whose bytes the journal does not hold.
func (c *Curator) finishJournaled(j journal) (a around, err error) {
	var emptied []string
	// carried is false once a write carrying knowledge (a MERGE's target,
	// a moved entry at its new place) was changed since by someone else:
	// the removals after it, whose files' text it was to hold, are not
	// made.
	carried := true
	for _, f := range j.Files {
		if f.From != "" {
			state, err := c.renamed(f)
			switch {
			case err != nil:
				return a, err
			case state == renameNotDone:
				if err := c.FS.Rename(f.From, f.Path); err != nil {
					return a, fmt.Errorf("rename %s to %s: %w", f.From, f.Path, err)
				}
			case state != renameDone:
				a.skipped = append(a.skipped, f.From+" → "+f.Path)
				continue
			}
			emptied = append(emptied, f.From)
			continue
		}
		now, err := c.FS.ReadFile(f.Path)
		existed := err == nil
		if err != nil && !errors.Is(err, host.ErrNotFound) {
			return a, fmt.Errorf("read %s: %w", f.Path, err)
		}
		key := ""
		if existed {
			key = catalog.SourceKey(now)
		}
		switch {
		case key == f.After:
			// made before the process stopped
		case key != f.Before:
			state := relinkNot
			switch {
			case !f.Relink:
			case !existed:
				state = relinkGone
			default:
				if state, err = c.relinkSaved(f.Path, now, j.Links); err != nil {
					return a, err
				}
			}
			switch state {
			case relinkDone:
				a.relinked = append(a.relinked, f.Path)
			case relinkNone:
				a.kept = append(a.kept, f.Path)
			case relinkGone:
				a.deleted = append(a.deleted, f.Path)
			default:
				a.skipped = append(a.skipped, f.Path)
				carried = carried && (f.Relink || f.After == "")
			}
			continue
		case f.After == "" && !carried:
			a.skipped = append(a.skipped, f.Path)
			continue
		case f.After == "":
			if err := c.FS.Remove(f.Path); err != nil && !errors.Is(err, host.ErrNotFound) {
				return a, fmt.Errorf("remove %s: %w", f.Path, err)
			}
		case f.Data == nil || catalog.SourceKey(f.Data) != f.After:
			return a, fmt.Errorf("the journal does not hold what %s was to hold", f.Path)
		default:
			if err := host.Swap(c.FS, f.Path, f.Data, now, existed); err != nil {
				return a, fmt.Errorf("write %s: %w", f.Path, err)
			}
		}
		if f.After == "" {
			emptied = append(emptied, f.Path)
		}
	}
	if j.Op != "MOVE" && j.Op != "DELETE" {
		return a, nil
	}
	// The folders a folder MOVE or DELETE emptied, below its path, as the
	// operation itself removes them (those holding what it kept stay).
	seen := map[string]bool{}
	var dirs []string
	for _, p := range emptied {
		for d := path.Dir(p); d != "." && (d == j.Path || strings.HasPrefix(d, j.Path+"/")) && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	c.removeFolders(dirs, nil)
	return a, nil
}

// What finishing a referrer's change found in a file saved since.
const (
	relinkNot  = iota // not a referrer's change, or a save it cannot read as an entry: left as it is
	relinkDone        // the save's links pointed at their new targets
	relinkNone        // the save names none of what the operation moved: kept as saved
	relinkGone        // the file was deleted since
)

// relinkSaved points the links of links (journal.Links) in the referrer
// p, which someone saved since the operation planned to rewrite it (now:
// its bytes), at their new targets, as the operation does, and changes
// nothing else of it. A save that does not parse as an entry, that cannot
// be rendered, or that changes again meanwhile stays as it is.
func (c *Curator) relinkSaved(p string, now []byte, links map[string]string) (int, error) {
	e, err := tree.ParseEntry(p, now)
	if err != nil {
		return relinkNot, nil
	}
	data, _, n, err := c.rewriteReferrer(e, func(raw string) (string, bool) {
		to, ok := links[raw]
		return to, ok
	})
	switch {
	case err != nil:
		return relinkNot, nil
	case n == 0:
		return relinkNone, nil
	}
	switch err := host.Swap(c.FS, p, data, now, true); {
	case errors.Is(err, host.ErrChanged):
		return relinkNot, nil
	case err != nil:
		return relinkNot, fmt.Errorf("write %s: %w", p, err)
	}
	return relinkDone, nil
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
