package retrieve

import (
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/agent"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/curate"
	"github.com/arbormem/arbor/core/internal/search"
)

// memory is a tree in memory that a Retriever answers from, its parts
// wired as the engine wires them (core/engine), with every curated change
// indexed at once, for the tests of the tiers and rules.
type memory struct {
	*Retriever
	curator *curate.Curator
}

// openMemory opens an empty tree on clock (nil: the system clock).
func openMemory(t *testing.T, clock host.Clock) *memory {
	t.Helper()
	if clock == nil {
		clock = host.SystemClock{}
	}
	fs := host.NewMemFS()
	cat, _, _, err := catalog.Load(fs, api.DefaultMaxFileBytes)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := search.Open(search.Options{}, search.Store{FS: fs, Dir: ".arbor/index", Logger: host.NopLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	signals, _ := catalog.OpenSignals(fs, clock, host.NopLogger{}, cat, catalog.SignalOptions{Model: api.DefaultLifecycleModel()})
	m := &memory{Retriever: New(Config{Index: idx, Catalog: cat, Signals: signals, FS: fs, Clock: clock, Log: host.NopLogger{},
		Loops: agent.NewLoops(clock, host.NopLogger{}, api.LLMOptions{})})}
	m.curator = &curate.Curator{FS: fs, Clock: clock, Catalog: cat, OnChange: func(ch curate.Change) {
		var err error
		switch {
		case ch.Removed:
			err = idx.Delete(ch.Path)
			m.Removed(ch.Path)
		case ch.Entry != nil:
			err = idx.Put(catalog.EntryDoc(ch.Entry))
			m.Indexed(ch.Entry)
		case ch.Context != nil:
			err = idx.Put(catalog.ContextDoc(ch.Context))
		}
		if err != nil {
			t.Fatalf("index %s: %v", ch.Path, err)
		}
		m.Changed()
	}}
	return m
}

// Curate applies p's operations.
func (m *memory) Curate(p api.CurateParams) api.CurateResult {
	return m.curator.Apply(p.Operations).API()
}
