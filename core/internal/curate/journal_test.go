package curate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// A process killed at any point of an operation (every file call from the
// Nth on fails, for every N) leaves no applied operation without its audit
// line once the next curate or open has run Recover, and no operation
// half made: one stopped half way (a MERGE's target written and its source
// still there, a folder DELETE or MOVE part done) is finished by Recover
// from the journal, and recorded as applied.
func TestJournalRecordsInterruptedOperations(t *testing.T) {
	files := fixtureWithSubtopic()
	const src, dst = "eng/billing/old_retry.md", "eng/billing/invoice_retry.md"
	ops := []api.Operation{
		{Type: "MERGE", Path: src, MergeTarget: dst, Reason: "dedupe"},
		{Type: "DELETE", Path: "eng/billing", Reason: "drop"},
		{Type: "ADD", Path: "ops/oncall/pager", Title: "Rota", Reason: "new"},
		{Type: "UPDATE", Path: dst, Summary: "new", Reason: "edit"},
		{Type: "MOVE", Path: "eng/billing", To: "finance/money", Reason: "finance owns it"},
	}
	for _, op := range ops {
		t.Run(op.Type+" "+op.Path, func(t *testing.T) {
			ref := newEnv(t, files)
			before := treeFiles(ref.fs)
			mustSucceed(t, one(t, ref, op))
			after := treeFiles(ref.fs)
			for n := 1; ; n++ {
				mem := memOf(t, files)
				ffs := &faultFS{FS: mem, n: n, sticky: true}
				c := &Curator{FS: ffs, Clock: clock, Catalog: load(t, mem)}
				c.Apply([]api.Operation{op})
				if ffs.calls < n {
					break // the crash was never reached: every N was tried
				}
				// The next process.
				msg, err := (&Curator{FS: mem, Clock: clock}).Recover()
				if err != nil {
					t.Fatalf("n=%d: Recover: %v", n, err)
				}
				if _, err := mem.ReadFile(JournalPath); err == nil {
					t.Fatalf("n=%d: the journal is left after Recover", n)
				}
				got := treeFiles(mem)
				lines := auditLines(t, mem)
				changed := diffFiles(before, got) != ""
				switch {
				case !changed:
					// Nothing happened: a line is optional, and says so.
					for _, l := range lines {
						if l.Status == api.StatusSuccess {
							t.Fatalf("n=%d: nothing changed but the log says %+v", n, l)
						}
					}
				case len(lines) != 1:
					t.Fatalf("n=%d: the tree changed and the audit log has %d lines (recovered: %q)", n, len(lines), msg)
				case diffFiles(after, got) == "":
					if lines[0].Status != api.StatusSuccess || lines[0].Op != op.Type {
						t.Fatalf("n=%d: a fully applied operation is logged as %+v", n, lines[0])
					}
				default:
					t.Fatalf("n=%d: Recover left the operation half made (logged as %+v):\n%s", n, lines[0], diffFiles(after, got))
				}
			}
		})
	}
}

// Each operation's line is in the log as soon as it is done, before the
// next operation starts; the journal is gone once the call returns.
func TestAuditLinePerOperation(t *testing.T) {
	e := newEnv(t, fixtureWithSubtopic())
	var seen []int
	e.c.OnChange = func(Change) { seen = append(seen, len(auditLines(t, e.fs))) }
	res := e.c.Apply([]api.Operation{
		{Type: "ADD", Path: "ops/oncall", Title: "One", Reason: "a"},
		{Type: "ADD", Path: "ops/oncall", Title: "One", Reason: "again"}, // fails: exists
		{Type: "ADD", Path: "ops/oncall", Title: "Two", Reason: "b"},
	})
	if res.Summary.Added != 2 || res.Summary.Failed != 1 {
		t.Fatalf("summary %+v", res.Summary)
	}
	// OnChange runs as an operation commits, before its own line: the
	// lines of the operations before it are there.
	if len(seen) == 0 || seen[0] != 0 || seen[len(seen)-1] != 2 {
		t.Fatalf("audit lines seen at each commit: %v", seen)
	}
	lines := auditLines(t, e.fs)
	if len(lines) != 3 || lines[1].Status != api.StatusFailed || lines[2].Reason != "b" {
		t.Fatalf("audit: %+v", lines)
	}
	if _, err := e.fs.ReadFile(JournalPath); err == nil {
		t.Fatal("the journal is left after the call")
	}
}

// An append cut short (a crash, a disk that filled up) leaves the audit
// log's last line torn. The next operation's line begins on a line of its
// own: appended to the torn one, it was read with it as one line that does
// not parse, and lost (and with it the record that the engine wrote the
// entry's reason, TestWritesKeepReasonsTheEngineDidNotWrite).
func TestAuditLineAfterATornOne(t *testing.T) {
	e := newEnv(t, fixtureWithSubtopic())
	mustSucceed(t, one(t, e, api.Operation{Type: "ADD", Path: "ops/oncall", Title: "One", Reason: "a"}))
	if err := e.fs.Append(AuditPath, []byte(`{"time":"2026-11-27T03:44:43Z","op":"UPD`)); err != nil {
		t.Fatal(err)
	}
	mustSucceed(t, one(t, e, api.Operation{Type: "ADD", Path: "ops/oncall", Title: "Two", Reason: "b"}))
	data, err := e.fs.ReadFile(AuditPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var last auditRecord
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Reason != "b" || last.Status != api.StatusSuccess {
		t.Fatalf("the line after the torn one: %q (%v)", lines[len(lines)-1], err)
	}
	if len(lines) != 3 {
		t.Fatalf("audit log:\n%s", data)
	}
	// The session's copy of the log reads the new line too.
	if ok, err := e.c.auditLog().logged(e.fs, tNow, "b"); err != nil || !ok {
		t.Fatalf("logged = %v, %v", ok, err)
	}
}
