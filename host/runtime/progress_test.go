package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// The module's progress reports reach WithProgress, and never the logger.
func TestProgress(t *testing.T) {
	dir := t.TempDir()
	const n = 400
	for i := range n {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("notes/log/e%04d.md", i)), fmt.Sprintf("---\ntitle: Note %d\n---\n\nText %d.\n", i, i))
	}
	var got []api.Progress
	var logged []string
	e := newEngine(t, dir,
		WithProgress(func(p api.Progress) { got = append(got, p) }),
		WithLogger(func(level int, msg string) { logged = append(logged, fmt.Sprint(level, msg)) }))
	if _, err := e.Open(context.Background(), api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	// The documents of the cold build: 0 first, n last, rising.
	if len(got) < 2 || got[0] != (api.Progress{Phase: api.PhaseIndex, Total: n}) || got[len(got)-1] != (api.Progress{Phase: api.PhaseIndex, Done: n, Total: n}) {
		t.Fatalf("progress %+v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Done <= got[i-1].Done {
			t.Fatalf("progress %+v: not rising", got)
		}
	}
	for _, l := range logged {
		if l[0] == '4' {
			t.Fatalf("a progress report reached the logger: %s", l)
		}
	}
}
