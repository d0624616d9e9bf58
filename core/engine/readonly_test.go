package engine

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// lineLog records every log line above debug.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) Log(level, msg string) {
	if level == "debug" || level == "info" {
		return
	}
	l.mu.Lock()
	l.lines = append(l.lines, level+": "+msg)
	l.mu.Unlock()
}

func sameFiles(t *testing.T, label string, before, after map[string][]byte) {
	t.Helper()
	if !maps.EqualFunc(before, after, bytes.Equal) {
		var changed []string
		for p := range maps.Keys(before) {
			if !bytes.Equal(before[p], after[p]) {
				changed = append(changed, p)
			}
		}
		for p := range maps.Keys(after) {
			if _, ok := before[p]; !ok {
				changed = append(changed, p+" (new)")
			}
		}
		slices.Sort(changed)
		t.Fatalf("%s changed the root: %v", label, changed)
	}
}

// A read-only session reads, searches and answers, refuses every method
// that writes with read_only, and writes nothing at all: not the entries,
// not .arbor/ (index, state, audit log, .gitignore), not even at close.
func TestReadOnlyWritesNothing(t *testing.T) {
	s, fs := newSession(t, map[string]string{
		"engineering/billing/invoice_retry_policy.md": billingEntry,
		"engineering/billing/dunning_emails.md":       linkingEntry,
	})
	// A root that was used before: persisted index, signals, audit log.
	mustOpen(t, s)
	if _, errObj := call(t, s, "read", map[string]any{"path": "engineering/billing/invoice_retry_policy.md"}); errObj != nil {
		t.Fatal(errObj)
	}
	closeSession(t, s)
	if _, err := fs.ReadFile(".arbor/state.json"); err != nil {
		t.Fatalf("the writable session left no state: %v", err)
	}
	// An entry edited since: the read-only open must index it in memory,
	// not persist the index.
	edited := strings.Replace(billingEntry, "three times", "five times", 1)
	if err := fs.WriteFile("engineering/billing/invoice_retry_policy.md", []byte(edited)); err != nil {
		t.Fatal(err)
	}
	before := fs.Files()

	log := &lineLog{}
	ro := NewSession(fs, log)
	res, errObj := call(t, ro, "open", map[string]any{"fixedTime": "2026-03-01T00:00:00Z", "readOnly": true})
	if errObj != nil {
		t.Fatalf("read-only open: %v", errObj)
	}
	wantIndex(t, "read-only open", res, 1, 1, 0)
	if got := searchPaths(t, ro, "five times"); !slices.Equal(got, []string{"engineering/billing/invoice_retry_policy.md"}) {
		t.Fatalf("search of the edited text: %v", got)
	}
	q, errObj := call(t, ro, "query", map[string]any{"query": "how often are failed invoices retried"})
	if errObj != nil || q["tierName"] != "direct" {
		t.Fatalf("query: %v %v", q, errObj)
	}
	for _, m := range []struct {
		method string
		params any
	}{
		{"read", map[string]any{"path": "engineering/billing/dunning_emails.md"}},
		{"tree", nil},
		{"stats", nil},
	} {
		if _, errObj := call(t, ro, m.method, m.params); errObj != nil {
			t.Fatalf("%s: %v", m.method, errObj)
		}
	}
	for _, m := range []struct {
		method string
		params any
	}{
		{"curate", map[string]any{"operations": []any{map[string]any{"type": "ADD", "path": "engineering/billing", "title": "New", "content": "text", "reason": "test"}}}},
		{"ingest", map[string]any{"files": []any{map[string]any{"name": "notes.md", "content": "# Notes\n\ntext\n"}}}},
		{"curateFrom", map[string]any{"files": []any{map[string]any{"name": "notes.md", "content": "Refunds need a second approval."}}}},
	} {
		res, errObj := call(t, ro, m.method, m.params)
		if errObj == nil || errObj["code"] != api.CodeReadOnly {
			t.Fatalf("%s on a read-only memory: result %v, error %v; want %s", m.method, res, errObj, api.CodeReadOnly)
		}
		if msg := fmt.Sprint(errObj["message"]); !strings.Contains(msg, m.method) || !strings.Contains(msg, "read-only") {
			t.Errorf("%s: the message does not name the method and the grant: %q", m.method, msg)
		}
	}
	// flush has nothing it may write: it succeeds and says so.
	fl, errObj := call(t, ro, "flush", nil)
	if errObj != nil || fl["written"] != false {
		t.Fatalf("flush: %v %v", fl, errObj)
	}
	closeSession(t, ro)
	sameFiles(t, "a read-only session", before, fs.Files())
	if len(log.lines) > 0 {
		t.Fatalf("the read-only session tried to write (or warned): %q", log.lines)
	}
}

// A read-only open of a folder that never held a memory creates nothing,
// not even .arbor/.gitignore, and a state file it cannot read is left as
// it is rather than copied aside.
func TestReadOnlyLeavesAFreshOrDamagedRootAlone(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"fresh":         {"notes/a.md": billingEntry},
		"corrupt state": {"notes/a.md": billingEntry, ".arbor/state.json": "{not json"},
	} {
		t.Run(name, func(t *testing.T) {
			s, fs := newSession(t, files)
			before := fs.Files()
			res, errObj := call(t, s, "open", map[string]any{"readOnly": true})
			if errObj != nil {
				t.Fatal(errObj)
			}
			if name == "corrupt state" && !strings.Contains(fmt.Sprint(res["warnings"]), "left as it is (read-only)") {
				t.Errorf("the unusable state file is not reported as left alone: %v", res["warnings"])
			}
			closeSession(t, s)
			sameFiles(t, "a read-only open", before, fs.Files())
		})
	}
}

// Native callers of Engine get the same refusals; Curate, which has no
// error result, fails each operation with host.ErrReadOnly.
func TestReadOnlyNative(t *testing.T) {
	fs := host.NewMemFS()
	if err := fs.WriteFile("notes/a.md", []byte(billingEntry)); err != nil {
		t.Fatal(err)
	}
	before := fs.Files()
	e, _, err := Open(Options{FS: fs, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	res := e.Curate(api.CurateParams{Operations: []api.Operation{{Type: api.OpAdd, Path: "notes/b", Title: "B", Reason: "test"}}})
	if res.Summary.Failed != 1 || !strings.Contains(res.Applied[0].Message, "read-only") {
		t.Fatalf("curate on a read-only engine: %+v", res)
	}
	if _, err := e.Ingest(api.IngestParams{Files: []api.SourceFile{{Name: "x.md", Content: "x"}}}); asError(err).Code != api.CodeReadOnly {
		t.Fatalf("ingest: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "a read-only engine", before, fs.Files())
}
