package curate

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// A process killed in a folder MOVE or a MERGE with many referrers, at
// every file call; a person then edits every file the operation planned
// to change (an editor's save, before the next open). Recovery and the
// next curate record the interruption and leave each edit as saved: the
// journal finishes an operation only where its files are as the
// operation left them.
func TestRecoveryKeepsWhatAPersonEditedAfterAKill(t *testing.T) {
	files := maps.Clone(fixture)
	for i := range 6 {
		files[fmt.Sprintf("ops/ref_%d.md", i)] = fmt.Sprintf("---\ntitle: Ref %d\n---\n\n## Narrative\nSee @eng/billing/old_retry.md and [[eng/billing/invoice_retry]].\n", i)
	}
	for _, op := range []api.Operation{
		{Type: "MOVE", Path: "eng/billing", To: "eng/payments", Reason: "rename the topic"},
		{Type: "MERGE", Path: "eng/billing/old_retry.md", MergeTarget: "eng/billing/invoice_retry.md", Reason: "dedupe"},
	} {
		t.Run(op.Type, func(t *testing.T) {
			edited := 0
			eachKill(t, files, op, func(n int, mem *host.MemFS, j journal) {
				saved := map[string]string{}
				for _, f := range j.Files {
					s := fmt.Sprintf("---\ntitle: Saved by a person\n---\n\n## Narrative\nWhat a person wrote in %s after the kill.\n", f.Path)
					mem.WriteFile(f.Path, []byte(s))
					saved[f.Path] = s
				}
				edited += len(saved)
				msg, err := (&Curator{FS: mem, Clock: clock}).Recover()
				if err != nil {
					t.Fatalf("n=%d: Recover: %v", n, err)
				}
				next := &Curator{FS: mem, Clock: clock, Catalog: load(t, mem)}
				next.Apply([]api.Operation{{Type: "ADD", Path: "misc/other", Title: "Other", Reason: "the next curate"}})
				for p, s := range saved {
					if b, _ := mem.ReadFile(p); string(b) != s {
						t.Fatalf("n=%d: %s, saved by a person after the kill, is now %q", n, p, b)
					}
				}
				if msg != "" && !strings.Contains(msg, "changed since by someone else") {
					t.Errorf("n=%d: the recovery does not say files changed since: %q", n, msg)
				}
			})
			if edited == 0 {
				t.Fatal("no kill left a journal to recover")
			}
		})
	}
}

// A folder MOVE killed part way, and a person then saving one entry whose
// links it was to rewrite: the next open finishes the rest of the MOVE
// (every file of the folder at its new place, the other links pointed
// there), leaves the person's entry as saved, and names it.
func TestRecoveryFinishesAroundAPersonsEdit(t *testing.T) {
	files := maps.Clone(fixture)
	for i := range 6 {
		files[fmt.Sprintf("ops/ref_%d.md", i)] = fmt.Sprintf("---\ntitle: Ref %d\n---\n\n## Narrative\nSee @eng/billing/old_retry.md and [[eng/billing/invoice_retry]].\n", i)
	}
	op := api.Operation{Type: "MOVE", Path: "eng/billing", To: "eng/payments", Reason: "rename the topic"}
	ref := newEnv(t, files)
	mustSucceed(t, one(t, ref, op))
	after := treeFiles(ref.fs)
	orig := treeFiles(memOf(t, files))
	tried := 0
	eachKill(t, files, op, func(n int, mem *host.MemFS, j journal) {
		// The first referrer the MOVE had yet to rewrite, once it had
		// changed something.
		now := treeFiles(mem)
		if diffFiles(orig, now) == "" {
			return
		}
		person := ""
		for _, f := range j.Files {
			if strings.HasPrefix(f.Path, "ops/ref_") && now[f.Path] == files[f.Path] {
				person = f.Path
				break
			}
		}
		if person == "" {
			return
		}
		tried++
		saved := "---\ntitle: Saved by a person\n---\n\n## Narrative\nStill see @eng/billing/old_retry.md.\n"
		mem.WriteFile(person, []byte(saved))
		msg, err := (&Curator{FS: mem, Clock: clock}).Recover()
		if err != nil {
			t.Fatalf("n=%d: Recover: %v", n, err)
		}
		got := treeFiles(mem)
		if got[person] != saved {
			t.Fatalf("n=%d: %s, saved by a person, is now %q", n, person, got[person])
		}
		for p, s := range after {
			if p != person && got[p] != s {
				t.Fatalf("n=%d: %s is not as the whole MOVE leaves it (recovered: %q)", n, p, msg)
			}
		}
		for p := range got {
			if strings.HasPrefix(p, "eng/billing/") {
				t.Fatalf("n=%d: %s is left at the old place", n, p)
			}
		}
		if !strings.Contains(msg, "changed since by someone else") || !strings.Contains(msg, person) {
			t.Errorf("n=%d: the recovery does not name %s: %q", n, person, msg)
		}
	})
	if tried == 0 {
		t.Fatal("no kill left a referrer to rewrite")
	}
}

// eachKill applies op to a tree of files killed at every file call from
// the Nth on, for every N, and calls fn with each tree the kill left a
// journal in (before the next process), and that journal.
func eachKill(t *testing.T, files map[string]string, op api.Operation, fn func(n int, mem *host.MemFS, j journal)) {
	t.Helper()
	for n := 1; ; n++ {
		mem := memOf(t, files)
		ffs := &faultFS{FS: mem, n: n, sticky: true}
		(&Curator{FS: ffs, Clock: clock, Catalog: load(t, mem)}).Apply([]api.Operation{op})
		if ffs.calls < n {
			return // the kill was never reached: every N was tried
		}
		data, err := mem.ReadFile(JournalPath)
		if err != nil {
			continue // killed before the journal, or after its removal
		}
		var j journal
		if json.Unmarshal(data, &j) != nil {
			continue
		}
		fn(n, mem, j)
	}
}
