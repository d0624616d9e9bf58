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

// A folder MOVE or a MERGE killed part way, and a person then saving one
// entry whose links it was to rewrite: the next open finishes the rest
// (every file at its new place, the other links pointed there). A save
// that keeps the links, a line added to the file as it was (what the
// SIGKILL harness's editor does), gets those links pointed at their new
// targets and nothing else changed, and the operation is recorded as
// applied; so is it when the person deleted the entry, which stays
// deleted, or rewrote it without those links, which stays as saved. A
// save whose front matter does not parse may hold them unseen: it stays
// as saved, and the operation is recorded as interrupted. Each names the
// entry.
func TestRecoveryFinishesAroundAPersonsEdit(t *testing.T) {
	files := maps.Clone(fixture)
	for i := range 6 {
		files[fmt.Sprintf("ops/ref_%d.md", i)] = fmt.Sprintf("---\ntitle: Ref %d\nrelated: [eng/billing/old_retry.md]\n---\n\n## Narrative\nSee [[eng/billing/invoice_retry]].\n", i)
	}
	const added = "A line a person added after the kill.\n"
	for _, op := range []api.Operation{
		{Type: "MOVE", Path: "eng/billing", To: "eng/payments", Reason: "rename the topic"},
		{Type: "MERGE", Path: "eng/billing/old_retry.md", MergeTarget: "eng/billing/invoice_retry.md", Reason: "dedupe"},
	} {
		ref := newEnv(t, files)
		mustSucceed(t, one(t, ref, op))
		after := treeFiles(ref.fs)
		orig := treeFiles(memOf(t, files))
		for _, save := range []string{"adds a line", "deletes", "drops the links", "breaks the front matter"} {
			t.Run(op.Type+"/"+save, func(t *testing.T) {
				tried := 0
				eachKill(t, files, op, func(n int, mem *host.MemFS, j journal) {
					// The first referrer the operation had yet to
					// rewrite, once it had changed something.
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
					status, want := "applied", ""
					switch save {
					case "adds a line":
						mem.WriteFile(person, []byte(files[person]+added))
						want = after[person] + added
					case "deletes":
						mem.Remove(person)
					case "drops the links":
						want = "---\ntitle: Saved by a person\n---\n\n## Narrative\nStill see eng/billing/old_retry.md.\n"
						mem.WriteFile(person, []byte(want))
					default:
						status = "interrupted"
						want = "---\ntitle: Saved: by a person\nrelated: [eng/billing/old_retry.md]\n---\n\nHalf"
						mem.WriteFile(person, []byte(want))
					}
					msg, err := (&Curator{FS: mem, Clock: clock}).Recover()
					if err != nil {
						t.Fatalf("n=%d: Recover: %v", n, err)
					}
					got := treeFiles(mem)
					if got[person] != want {
						t.Fatalf("n=%d: %s, which a person %s, is now %q, not %q", n, person, save, got[person], want)
					}
					for p, s := range after {
						if p != person && got[p] != s {
							t.Fatalf("n=%d: %s is not as the whole %s leaves it (recovered: %q)", n, p, op.Type, msg)
						}
					}
					for p := range got {
						if _, ok := after[p]; !ok && p != person {
							t.Fatalf("n=%d: %s is left, which the whole %s removes", n, p, op.Type)
						}
					}
					if !strings.Contains(msg, "since by someone else") || !strings.Contains(msg, person) {
						t.Errorf("n=%d: the recovery does not name %s: %q", n, person, msg)
					}
					if !strings.Contains(msg, ": "+status+":") {
						t.Errorf("n=%d: the recovery does not record the %s as %s: %q", n, op.Type, status, msg)
					}
				})
				if tried == 0 {
					t.Fatal("no kill left a referrer to rewrite")
				}
			})
		}
	}
}

// A MERGE killed after writing its target, and a person then saving the
// target: its change was the merge itself, not a link's, so the save
// stays as it is, links and all, and the source, whose text the target
// was to hold, is not removed. The MERGE is recorded as interrupted,
// naming the target.
func TestRecoveryLeavesAMergeTargetSavedSince(t *testing.T) {
	const target, source = "eng/billing/invoice_retry.md", "eng/billing/old_retry.md"
	files := maps.Clone(fixture)
	for i := range 3 {
		files[fmt.Sprintf("ops/ref_%d.md", i)] = fmt.Sprintf("---\ntitle: Ref %d\nrelated: [%s]\n---\n\nA referrer.\n", i, source)
	}
	op := api.Operation{Type: "MERGE", Path: source, MergeTarget: target, Reason: "dedupe"}
	saved := "---\ntitle: Saved by a person\nrelated: [" + source + "]\n---\n\nA person's save of the target.\n"
	tried := 0
	eachKill(t, files, op, func(n int, mem *host.MemFS, j journal) {
		if b, _ := mem.ReadFile(target); string(b) == files[target] {
			return // the target is not written yet
		}
		if _, err := mem.ReadFile(source); err != nil {
			return // removed already: nothing left to keep
		}
		tried++
		mem.WriteFile(target, []byte(saved))
		msg, err := (&Curator{FS: mem, Clock: clock}).Recover()
		if err != nil {
			t.Fatalf("n=%d: Recover: %v", n, err)
		}
		if b, _ := mem.ReadFile(target); string(b) != saved {
			t.Fatalf("n=%d: the target, saved by a person, is now %q", n, b)
		}
		if b, err := mem.ReadFile(source); err != nil || string(b) != files[source] {
			t.Fatalf("n=%d: the source is %q (%v), removed while the target does not hold its text", n, b, err)
		}
		if !strings.Contains(msg, ": interrupted:") || !strings.Contains(msg, target) {
			t.Errorf("n=%d: the recovery does not record the MERGE as interrupted at %s: %q", n, target, msg)
		}
	})
	if tried == 0 {
		t.Fatal("no kill left the target written and the source in place")
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
