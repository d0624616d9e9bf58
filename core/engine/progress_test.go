package engine

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// progressLog records the progress reports of an engine.
type progressLog struct {
	host.NopLogger
	reports []api.Progress
}

func (l *progressLog) Progress(p api.Progress) { l.reports = append(l.reports, p) }

// runs splits reports into runs (each starts at done 0) of one phase.
func (l *progressLog) runs(phase string) [][]api.Progress {
	var out [][]api.Progress
	for _, p := range l.reports {
		if p.Phase != phase {
			continue
		}
		if p.Done == 0 || len(out) == 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], p)
	}
	return out
}

// checkRun checks one run: from 0 to total, rising, about once a percent.
func checkRun(t *testing.T, run []api.Progress, total int) {
	t.Helper()
	if len(run) < 2 || run[0].Done != 0 || run[len(run)-1].Done != total {
		t.Fatalf("run %+v: want 0 … %d", run, total)
	}
	for i, p := range run {
		if p.Total != total || i > 0 && p.Done <= run[i-1].Done {
			t.Fatalf("run %+v: report %d out of order", run, i)
		}
	}
	if len(run) > 102 {
		t.Fatalf("%d reports for %d units: more than one a percent", len(run), total)
	}
}

func TestProgressReports(t *testing.T) {
	mem := host.NewMemFS()
	now := day0.UnixMilli()
	mem.SetNow(func() int64 { return now })
	const n = 1500
	for i := range n {
		if err := mem.WriteFile(fmt.Sprintf("notes/log/e%04d.md", i), []byte(fmt.Sprintf("---\ntitle: Note %d\n---\n\nText %d.\n", i, i))); err != nil {
			t.Fatal(err)
		}
	}
	now += 10_000 // time moves on: the catalog can trust these files' times
	log := &progressLog{}
	e, _, err := Open(Options{FS: mem, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	// A cold open reads and indexes the tree in one pass, of a length not
	// known in advance: a report each thousand files read and documents
	// indexed (the documents of a batch at once).
	want := []api.Progress{{Phase: api.PhaseRead, Done: 1000}, {Phase: api.PhaseIndex, Done: n}}
	if !reflect.DeepEqual(log.reports, want) {
		t.Fatalf("reports %+v, want %+v", log.reports, want)
	}

	// A big curate: its operations, then their documents.
	now += 10_000
	log.reports = nil
	ops := make([]api.Operation, 300)
	for i := range ops {
		ops[i] = api.Operation{Type: api.OpAdd, Path: "notes/more", Title: fmt.Sprintf("More %d", i), Content: api.Content{Narrative: &api.Narrative{Text: "Text."}}, Reason: "test"}
	}
	if res := e.Curate(api.CurateParams{Operations: ops}); res.Summary.Failed != 0 {
		t.Fatalf("curate: %+v", res.Summary)
	}
	writes := log.runs(api.PhaseWrite)
	if len(writes) != 1 {
		t.Fatalf("write runs %+v", writes)
	}
	checkRun(t, writes[0], len(ops))
	// The new entries and the folders' context files.
	if idx := log.runs(api.PhaseIndex); len(idx) != 1 || idx[0][0].Total < len(ops) {
		t.Fatalf("index runs after the curate %+v", idx)
	} else {
		checkRun(t, idx[0], idx[0][0].Total)
	}

	// Small work reports nothing; neither does reopening on the saved index.
	log.reports = nil
	e.Curate(api.CurateParams{Operations: ops[:1]})
	e.Close()
	now += 10_000
	reads := &treeReads{FS: mem}
	var res api.OpenResult
	if e, res, err = Open(Options{FS: reads, Logger: log}); err != nil {
		t.Fatal(err)
	}
	if len(reads.paths) >= n || res.Entries != n+len(ops) {
		t.Fatalf("reopened reading %d files, %d entries", len(reads.paths), res.Entries)
	}
	defer e.Close()
	if len(log.reports) != 0 {
		t.Fatalf("reports %+v, want none", log.reports)
	}
}

// tidy reads every entry once for its near-duplicate and size passes
// both (seconds at 100k): one run of read reports, from 0 to the number
// of entries.
func TestTidyReportsReads(t *testing.T) {
	mem := host.NewMemFS()
	const n = 300
	for i := range n {
		if err := mem.WriteFile(fmt.Sprintf("notes/log/e%04d.md", i), []byte(fmt.Sprintf("---\ntitle: Note %d\n---\n\nText %d about the weekly review.\n", i, i))); err != nil {
			t.Fatal(err)
		}
	}
	log := &progressLog{}
	e, _, err := Open(Options{FS: mem, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	log.reports = nil
	if _, err := e.Tidy(api.TidyParams{Kinds: []string{api.TidyMerge, api.TidySplit}}); err != nil {
		t.Fatal(err)
	}
	runs := log.runs(api.PhaseRead)
	if len(runs) != 1 {
		t.Fatalf("read runs %+v, want one for the pass both kinds share", runs)
	}
	for _, run := range runs {
		checkRun(t, run, n)
	}
}

// An apply of a large plan (one MOVE per stale entry) reports its writes:
// one run, from 0 to the plan's operations.
func TestTidyApplyReportsWrites(t *testing.T) {
	mem := host.NewMemFS()
	const n = 300
	for i := range n {
		if err := mem.WriteFile(fmt.Sprintf("notes/log%d/e%04d.md", i/30, i), []byte(fmt.Sprintf("---\ntitle: Note %d\ncreatedAt: 2024-01-01T00:00:00Z\n---\n\nText %d about the weekly review.\n", i, i))); err != nil {
			t.Fatal(err)
		}
	}
	log := &progressLog{}
	e, _, err := Open(Options{FS: mem, Logger: log, Clock: host.FixedClock(day0)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	log.reports = nil
	res, err := e.Tidy(api.TidyParams{Kinds: []string{api.TidyArchive}, Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied.Summary.Moved != n {
		t.Fatalf("moved %d of %d", res.Applied.Summary.Moved, n)
	}
	runs := log.runs(api.PhaseWrite)
	if len(runs) != 1 {
		t.Fatalf("write runs %+v, want one", runs)
	}
	checkRun(t, runs[0], n)
}
