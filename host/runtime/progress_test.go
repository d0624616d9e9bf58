package runtime

import (
	"context"
	"fmt"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// The module's progress reports reach WithProgress, and never the logger:
// a curate of many operations reports them, then their documents.
func TestProgress(t *testing.T) {
	dir := t.TempDir()
	var got []api.Progress
	var logged []string
	e := newEngine(t, dir,
		WithProgress(func(p api.Progress) { got = append(got, p) }),
		WithLogger(func(level int, msg string) { logged = append(logged, fmt.Sprint(level, msg)) }))
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	const n = 300
	ops := make([]map[string]any, n)
	for i := range ops {
		ops[i] = map[string]any{"type": "ADD", "path": "notes/log", "title": fmt.Sprintf("Note %d", i), "content": "Text.", "reason": "test"}
	}
	if _, err := e.CallMethod(ctx, "curate", map[string]any{"operations": ops}); err != nil {
		t.Fatal(err)
	}
	phases := map[string][]api.Progress{}
	for _, p := range got {
		phases[p.Phase] = append(phases[p.Phase], p)
	}
	for phase, run := range phases {
		total := run[0].Total
		if run[0].Done != 0 || total < n || run[len(run)-1].Done != total {
			t.Fatalf("%s: %+v", phase, run)
		}
		for i := 1; i < len(run); i++ {
			if run[i].Done <= run[i-1].Done {
				t.Fatalf("%s: %+v: not rising", phase, run)
			}
		}
	}
	if len(phases) != 2 || len(phases[api.PhaseWrite]) < 3 || len(phases[api.PhaseIndex]) < 2 {
		t.Fatalf("progress %+v, want operations and documents", got)
	}
	for _, l := range logged {
		if l[0] == '4' {
			t.Fatalf("a progress report reached the logger: %s", l)
		}
	}
}
