package curate

import (
	"path"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/tree"
)

// TestFaultInjection fails the Nth WriteFile/Remove of an operation, for
// every N, once as a single I/O error (the operation must roll back to the
// before state, or succeed with the after state) and once as a crash (every
// call from the Nth on fails, so the rollback fails too: every entry must
// still parse, every file must hold its before or its after content, and
// no knowledge may be lost).
func TestFaultInjection(t *testing.T) {
	files := fixtureWithSubtopic()
	const src, dst = "eng/billing/old_retry.md", "eng/billing/invoice_retry.md"
	ops := []struct {
		name string
		op   api.Operation
	}{
		{"merge", api.Operation{Type: "MERGE", Path: src, MergeTarget: dst, Reason: "dedupe"}},
		{"delete folder", api.Operation{Type: "DELETE", Path: "eng/billing", Reason: "drop"}},
		{"delete entry", api.Operation{Type: "DELETE", Path: src, Reason: "drop"}},
		{"add with contexts", api.Operation{Type: "ADD", Path: "ops/oncall/pager", Title: "Rota", Reason: "new"}},
		{"update", api.Operation{Type: "UPDATE", Path: dst, Summary: "new", Reason: "edit"}},
		{"move entry", api.Operation{Type: "MOVE", Path: src, To: "ops/billing/renamed.md", Reason: "move"}},
		{"move folder", api.Operation{Type: "MOVE", Path: "eng/billing", To: "finance/money", Reason: "move"}},
	}
	for _, tc := range ops {
		t.Run(tc.name, func(t *testing.T) {
			ref := newEnv(t, files)
			before := treeFiles(ref.fs)
			mustSucceed(t, one(t, ref, tc.op))
			after := treeFiles(ref.fs)
			for _, sticky := range []bool{false, true} {
				for n := 1; ; n++ {
					mem := host.NewMemFS()
					for p, s := range files {
						if err := mem.WriteFile(p, []byte(s)); err != nil {
							t.Fatal(err)
						}
					}
					ffs := &faultFS{FS: mem, n: n, sticky: sticky}
					c := &Curator{FS: ffs, Clock: clock, Catalog: load(t, mem)}
					catBefore := catalogState(c.Catalog)
					a := c.Apply([]api.Operation{tc.op}).Applied[0]
					got := treeFiles(mem)
					for p, s := range got {
						if tree.IsEntryPath(p) && path.Base(p) != "broken.md" {
							if _, err := tree.ParseEntry(p, []byte(s)); err != nil {
								t.Fatalf("n=%d sticky=%v: %s does not parse: %v", n, sticky, p, err)
							}
						}
						if s != before[p] && s != after[p] {
							t.Fatalf("n=%d sticky=%v: %s holds neither its before nor its after content", n, sticky, p)
						}
					}
					if strings.HasPrefix(tc.name, "move") {
						// A crash never loses what moves: each file is at its
						// old path or already at its new one.
						for p := range before {
							if _, stays := after[p]; stays {
								continue
							}
							np := strings.Replace(p, "eng/billing", "finance/money", 1)
							if tc.name == "move entry" {
								np = tc.op.To
							}
							_, old := got[p]
							if _, moved := got[np]; !old && !moved {
								t.Fatalf("n=%d sticky=%v: %s lost in the move", n, sticky, p)
							}
						}
					}
					switch {
					case !sticky && a.Status == api.StatusFailed:
						if !strings.Contains(a.Message, "injected fault") {
							t.Errorf("n=%d: message %q", n, a.Message)
						}
						if d := diffFiles(before, got); d != "" {
							t.Fatalf("n=%d: failed op changed the tree:\n%s", n, d)
						}
						if catalogState(c.Catalog) != catBefore {
							t.Fatalf("n=%d: failed op changed the catalog", n)
						}
					case !sticky:
						if d := diffFiles(after, got); d != "" {
							t.Fatalf("n=%d: %s succeeded (%s) but the tree is not the after state:\n%s", n, tc.name, a.Message, d)
						}
						if catalogState(c.Catalog) != catalogState(load(t, mem)) {
							t.Fatalf("n=%d: catalog out of step", n)
						}
					case tc.name == "merge":
						// A crash never loses the source's knowledge: it is
						// gone only once the merged target is written.
						if _, ok := got[src]; !ok && got[dst] != after[dst] {
							t.Fatalf("n=%d: source removed before the merged target was written", n)
						}
					}
					if ffs.calls < n {
						break // the fault was never reached: every N was tried
					}
				}
			}
		})
	}
}
