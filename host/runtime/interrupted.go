package runtime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/arbormem/arbor/core/api"
)

// appliesOperations are the methods that apply curate operations, each
// with its line in the audit log as soon as it is done: a call of one
// stopped part way (its deadline, a cancel) has done some of them.
var appliesOperations = map[string]bool{"curate": true, "ingest": true, "tidy": true, "curateFrom": true, "resume": true}

// maxListed bounds the operations an interrupted call's error names.
const maxListed = 10

// auditMark is the audit log as a call found it: what a call that stops
// adds after it is what it did.
type auditMark struct {
	fi   fs.FileInfo // nil when there was no log
	size int64
}

// markAudit notes where the audit log of the root ends before a call of
// method, when the method applies operations.
func (e *Engine) markAudit(method string) *auditMark {
	if !appliesOperations[method] || e.fs.IsReadOnly() {
		return nil
	}
	fi, err := os.Stat(filepath.Join(e.fs.Dir(), filepath.FromSlash(api.AuditFile)))
	if err != nil {
		return &auditMark{}
	}
	return &auditMark{fi: fi, size: fi.Size()}
}

// interrupted adds to err, the error of a call of method that stopped
// part way, which of its operations were done: an agent that retries
// the whole batch would meet "already exists" for those, and could not
// tell them from another writer's. The audit log says which were done
// (curate applies them in order, each logged as soon as it is done), the
// journal which one was being applied (the next call records it, as the
// engine restarts).
func (e *Engine) interrupted(m *auditMark, req []byte, err error) error {
	if m == nil {
		return err
	}
	done, size, rerr := e.auditSince(m)
	if rerr != nil {
		return fmt.Errorf("%w; which of its operations were done is in the audit log, %s (not read: %v)", err, api.AuditFile, rerr)
	}
	var b strings.Builder
	b.WriteString("before it stopped, ")
	asked := askedOperations(req)
	switch {
	case len(done) == 0:
		b.WriteString("none of its operations was done")
	case asked > 0:
		fmt.Fprintf(&b, "%d of its %d operations were done (in order, as asked)", len(done), asked)
	default:
		fmt.Fprintf(&b, "%d operations were done", len(done))
	}
	// The first and the last done, when there are many: the last says
	// where to resume.
	skipped := max(len(done)-maxListed, 0)
	for i, r := range done {
		if skipped > 0 && i >= maxListed/2 && i < maxListed/2+skipped {
			if i == maxListed/2 {
				fmt.Fprintf(&b, ", … %d more", skipped)
			}
			continue
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(r.describe())
	}
	if len(done) > 0 {
		fmt.Fprintf(&b, ", each in the audit log (%s)", api.AuditFile)
	}
	if j, ok := e.inFlight(size); ok {
		fmt.Fprintf(&b, "; %s was being applied: the next call records whether it was", j.describe())
	}
	b.WriteString("; retry only the operations not done")
	return fmt.Errorf("%w; %s", err, b.String())
}

// auditLine is what interrupted reads of an audit record.
type auditLine struct {
	Op     string `json:"op"`
	Path   string `json:"path"`
	To     string `json:"to"`
	Status string `json:"status"`
}

func (r auditLine) describe() string {
	s := r.Op + " " + r.Path
	if r.To != "" {
		s += " to " + r.To
	}
	if r.Status != "" {
		s += " (" + r.Status + ")"
	}
	return s
}

// auditSince returns the records the audit log gained since m, and its
// size now. A log renamed away meanwhile (rotated at the start of the
// call) is read from its start: the call's lines are all in the new one.
func (e *Engine) auditSince(m *auditMark) ([]auditLine, int64, error) {
	f, err := os.Open(filepath.Join(e.fs.Dir(), filepath.FromSlash(api.AuditFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	from := m.size
	if m.fi == nil || !os.SameFile(m.fi, fi) || fi.Size() < from {
		from = 0
	}
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, 0, err
	}
	var out []auditLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r auditLine
		// A line torn by a full disk is no operation done.
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 && json.Unmarshal(line, &r) == nil && r.Op != "" {
			out = append(out, r)
		}
	}
	return out, fi.Size(), sc.Err()
}

// inFlight returns the operation of the journal whose audit line is not
// in the log of size bytes: the one being applied when the call stopped.
func (e *Engine) inFlight(size int64) (auditLine, bool) {
	data, err := os.ReadFile(filepath.Join(e.fs.Dir(), filepath.FromSlash(api.JournalFile)))
	if err != nil {
		return auditLine{}, false
	}
	var j struct {
		auditLine
		AuditBytes int64 `json:"auditBytes"`
	}
	if json.Unmarshal(data, &j) != nil || j.Op == "" || size > j.AuditBytes {
		return auditLine{}, false // torn before any change, or logged already
	}
	return j.auditLine, true
}

// askedOperations is how many operations a curate request asked for, 0
// for another method or a request that does not say.
func askedOperations(req []byte) int {
	var r struct {
		Method string `json:"method"`
		Params struct {
			Operations []json.RawMessage `json:"operations"`
		} `json:"params"`
	}
	if json.Unmarshal(req, &r) != nil || r.Method != "curate" {
		return 0
	}
	return len(r.Params.Operations)
}
