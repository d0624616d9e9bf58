package search

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/blugelabs/bluge/index/mergeplan"
)

// segmentSizes lists the documents of each segment x reads, deleted ones
// included (full) and not (live).
func segmentSizes(t *testing.T, x *Index) (full, live []int64) {
	t.Helper()
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, s := range x.reader.Segments() {
		ps, ok := s.(mergeplan.Segment)
		if !ok {
			t.Fatalf("segment %d: %T is no mergeplan.Segment", s.ID(), s)
		}
		full = append(full, ps.FullSize())
		live = append(live, ps.LiveSize())
	}
	return full, live
}

// noMerges is buildPolicy with a budget no index exceeds: bluge's merger
// leaves every batch's segment as it is.
func noMerges() mergeplan.Options {
	o := buildPolicy
	o.CalcBudget = func(int64, int64, *mergeplan.Options) int { return 1 << 30 }
	return o
}

// An index stored by an earlier version keeps the segments it was saved
// with: loaded, it merges by mergePolicy, under which they are within
// budget. The writer's flush merges them down as buildPolicy plans, though
// nothing else changed, and saves that; the index answers as before, the
// next open reuses it whole, and a process that loaded the old manifest
// goes on reading its files.
func TestFlushMergesAnEarlierIndexDown(t *testing.T) {
	sizes := []int64{1000, 1000, 1000, 1000}
	if got := plan(t, mergePolicy, sizes...); len(got) != 0 {
		t.Fatalf("mergePolicy merges %v: this test no longer shows a loaded index keeping its segments", got)
	}
	want := len(settle(t, buildPolicy, sizes...))
	if want >= len(sizes) {
		t.Fatalf("buildPolicy leaves %d segments of %v: this test no longer shows a merge", want, sizes)
	}

	docs := storeDocs(4000)[:4000]
	fs := host.NewMemFS()
	func() {
		defer func(o mergeplan.Options) { buildPolicy = o }(buildPolicy)
		buildPolicy = noMerges()
		x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir})
		if err != nil {
			t.Fatal(err)
		}
		at := 0
		for _, n := range sizes {
			if err := x.Put(docs[at : at+int(n)]...); err != nil {
				t.Fatal(err)
			}
			at += int(n)
		}
		closeIndex(t, x)
	}()
	before, err := ReadStored(fs, testStoreDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Segments) != len(sizes) {
		t.Fatalf("the earlier index was stored with %d segments, want %d", len(before.Segments), len(sizes))
	}

	// A reader of the old manifest, opened before the writer's flush.
	reader, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir, ReadOnly: true, Sources: tree(docs)})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()

	var log logLines
	x, st := openStore(t, fs, &log, docs)
	if want := (api.IndexStats{Reused: len(docs)}); st != want {
		t.Fatalf("sync: %+v, want %+v; %v", st, want, log.lines)
	}
	if full, _ := segmentSizes(t, x); len(full) != len(sizes) {
		t.Fatalf("loaded with %d segments %v, want %d", len(full), full, len(sizes))
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	full, _ := segmentSizes(t, x)
	if len(full) != want {
		t.Errorf("after the flush the index reads %d segments %v, want %d", len(full), full, want)
	}
	after, err := ReadStored(fs, testStoreDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Segments) != want {
		t.Errorf("the flush saved %d segments, want %d", len(after.Segments), want)
	}
	cold := coldAnswers(t, docs)
	sameAnswers(t, "merged", answers(t, x), cold)
	sameAnswers(t, "a reader of the old manifest", answers(t, reader), cold)
	if lines := strings.Join(log.lines, "\n"); strings.Contains(lines, "warn") {
		t.Errorf("warnings: %s", lines)
	}
	closeIndex(t, x)

	y, st := openStore(t, fs, &log, docs)
	if want := (api.IndexStats{Reused: len(docs)}); st != want {
		t.Fatalf("sync after the merge: %+v, want %+v; %v", st, want, log.lines)
	}
	sameAnswers(t, "reopened", answers(t, y), cold)
	if err := y.Flush(); err != nil {
		t.Fatal(err)
	}
	again, _ := ReadStored(fs, testStoreDir)
	if strings.Join(again.Segments, " ") != strings.Join(after.Segments, " ") {
		t.Errorf("a second flush rewrote the merged segments: %v, then %v", after.Segments, again.Segments)
	}
}

// bluge merges no segment of MaxSegmentSize/2 live documents or more, nor
// one segment alone: the documents replaced or deleted in it stayed in its
// postings for good. The flush rewrites a segment a deletedShare of which
// is deleted, alone and through the spill path (a large one is streamed to
// the store, never held whole); one with fewer deletions is left.
func TestFlushRewritesSegmentsOfManyDeletions(t *testing.T) {
	smallSpills(t)
	docs := spillDocs(1200)
	fs := newSegmentWrites()
	x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir, Sources: tree(docs)})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Put(docs...); err != nil {
		t.Fatal(err)
	}
	full, _ := segmentSizes(t, x)
	if len(full) != 1 || full[0] < rewriteMinDocs {
		t.Fatalf("one Put made segments %v, want one of at least %d documents", full, rewriteMinDocs)
	}

	// A tenth deleted: left as it is.
	var gone []string
	for i := 0; i < len(docs)/10; i++ {
		gone = append(gone, docs[i].Path)
	}
	if err := x.Delete(gone...); err != nil {
		t.Fatal(err)
	}
	closeIndex(t, x)
	x, _ = openStore(t, fs, nil, docs[len(gone):])
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if full, live := segmentSizes(t, x); len(full) != 1 || full[0] == live[0] {
		t.Fatalf("a tenth deleted: segments of %v documents, %v live; want the one segment kept with its deletions", full, live)
	}

	// A third deleted: rewritten without them.
	for i := len(gone); i < len(docs)/3; i++ {
		gone = append(gone, docs[i].Path)
	}
	if err := x.Delete(gone...); err != nil {
		t.Fatal(err)
	}
	clear(fs.appends)
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	kept := docs[len(gone):]
	full, live := segmentSizes(t, x)
	if len(full) != 1 || full[0] != live[0] || live[0] != int64(len(kept)) {
		t.Errorf("a third deleted: segments of %v documents, %v live; want one of the %d live documents", full, live, len(kept))
	}
	streamed := false
	for name, sizes := range fs.appends {
		if !strings.Contains(name, "-part-") && len(sizes) > 2 {
			streamed = true
		}
	}
	if !streamed {
		t.Errorf("the rewritten segment was not streamed to the store: %v", fs.appends)
	}
	for name, n := range fs.whole {
		if n > spillBytes {
			t.Errorf("%s: a segment of %d bytes was written whole, over %d", name, n, spillBytes)
		}
	}
	cold := coldAnswers(t, kept)
	sameAnswers(t, "rewritten", answers(t, x), cold)
	closeIndex(t, x)

	var log logLines
	y, st := openStore(t, fs, &log, kept)
	if want := (api.IndexStats{Reused: len(kept)}); st != want {
		t.Fatalf("sync after the rewrite: %+v, want %+v; %v", st, want, log.lines)
	}
	if full, live := segmentSizes(t, y); len(full) != 1 || full[0] != live[0] {
		t.Errorf("reopened: segments of %v documents, %v live, want no deletions", full, live)
	}
	sameAnswers(t, "reopened", answers(t, y), cold)
}
