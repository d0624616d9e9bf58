package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
)

// A batch stopped part way (its deadline, here a cancel at the same place)
// says which of its operations were done, so that an agent retrying it
// does not meet "already exists" puzzles for the first ones.
func TestStoppedBatchSaysWhatWasDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var e *Engine
	// Progress is reported before each operation: at 200 of 400, the
	// first 200 are done, each with its audit line, and no other begun.
	stop := stopAt(&e, "write 200", cancel)
	e = newEngine(t, "", WithCallTimeout(time.Hour), WithProgress(func(p api.Progress) { stop(LevelProgress, fmt.Sprint(p.Phase, " ", p.Done)) }))
	if _, err := e.Open(context.Background(), api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	ops := make([]api.Operation, 400)
	for i := range ops {
		ops[i] = api.Operation{Type: api.OpAdd, Path: "notes/batch", Title: fmt.Sprintf("Note %03d", i), Reason: "batch"}
	}
	_, err := e.Curate(ctx, api.CurateParams{Operations: ops})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("curate: %v, want it stopped", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"before it stopped, 200 of its 400 operations were done (in order, as asked): ADD notes/batch/note_000.md (success), ADD notes/batch/note_001.md (success)",
		"ADD notes/batch/note_004.md (success), … 190 more, ADD notes/batch/note_195.md (success)",
		"ADD notes/batch/note_199.md (success), each in the audit log (.arbor/audit.jsonl); retry only the operations not done",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "was being applied") {
		t.Errorf("an operation said in flight where none was: %s", msg)
	}
	if names, _ := filepath.Glob(filepath.Join(e.fs.Dir(), "notes/batch/note_*.md")); len(names) != 200 {
		t.Errorf("%d entries written, want the 200 the error names", len(names))
	}
}

// The operation a stopped call was applying (its journal holds it, its
// audit line not yet written) is named as such: the next call records
// whether it was applied.
func TestStoppedBatchNamesTheOperationInFlight(t *testing.T) {
	e := newEngine(t, "")
	dir := e.fs.Dir()
	writeFile(t, filepath.Join(dir, api.AuditFile), `{"time":"2026-03-01T00:00:00Z","op":"ADD","path":"a/b/old.md","status":"success"}`+"\n")
	mark := e.markAudit("curate")
	line := `{"time":"2026-03-01T00:00:01Z","op":"ADD","path":"a/b/one.md","status":"success"}` + "\n"
	f, err := os.OpenFile(filepath.Join(dir, api.AuditFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line + `{"time":"2026-03-01T00:00:02Z","op":"MO`) // the next line torn
	f.Close()
	size := mark.size + int64(len(line)) + int64(len(`{"time":"2026-03-01T00:00:02Z","op":"MO`))
	writeFile(t, filepath.Join(dir, api.JournalFile), fmt.Sprintf(`{"time":"2026-03-01T00:00:02Z","op":"MOVE","path":"a/b","to":"c/d","auditBytes":%d,"files":[]}`, size))
	req := []byte(`{"id":1,"method":"curate","params":{"operations":[{},{},{}]}}`)
	msg := e.interrupted(mark, req, context.DeadlineExceeded).Error()
	want := "context deadline exceeded; before it stopped, 1 of its 3 operations were done (in order, as asked): ADD a/b/one.md (success), each in the audit log (.arbor/audit.jsonl); MOVE a/b to c/d was being applied: the next call records whether it was; retry only the operations not done"
	if msg != want {
		t.Errorf("got  %s\nwant %s", msg, want)
	}
	if e.markAudit("search") != nil {
		t.Error("a search, which applies no operation, marked the audit log")
	}
}
