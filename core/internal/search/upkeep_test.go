package search

import (
	"reflect"
	"slices"
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
	sizes := []int64{4000, 300, 300, 300, 300, 300, 300}
	if got := plan(t, mergePolicy, sizes...); len(got) != 0 {
		t.Fatalf("mergePolicy merges %v: this test no longer shows a loaded index keeping its segments", got)
	}
	if got := compactTasks(planSegments(sizes...)); len(got) != 0 {
		t.Fatalf("compactTasks merges %v: this test no longer shows buildPolicy's merges", got)
	}
	want := len(settle(t, buildPolicy, sizes...))
	if want >= len(sizes) {
		t.Fatalf("buildPolicy leaves %d segments of %v: this test no longer shows a merge", want, sizes)
	}

	docs := storeDocs(5800)[:5800]
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

// planSegments are segments of these numbers of documents, none deleted.
func planSegments(sizes ...int64) []mergeplan.Segment {
	var segs []mergeplan.Segment
	for i, n := range sizes {
		segs = append(segs, planSegment{uint64(i + 1), n})
	}
	return segs
}

// A build leaves segments of about one size, which the flush compacts into
// one: the same answers as a cold build, and the next open reuses it.
// Writes of a few documents after that add a segment without rewriting
// the compacted one, until the small segments hold half of it.
func TestFlushCompactsSegments(t *testing.T) {
	defer func(o mergeplan.Options) { buildPolicy = o }(buildPolicy)
	buildPolicy = noMerges()
	docs := storeDocs(3000)[:3000]
	fs := host.NewMemFS()
	var merged [][2]int
	x, err := Open(Options{Merged: func(done, total int) { merged = append(merged, [2]int{done, total}) }}, Store{FS: fs, Dir: testStoreDir})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i += 500 {
		if err := x.Put(docs[i : i+500]...); err != nil {
			t.Fatal(err)
		}
	}
	if full, _ := segmentSizes(t, x); len(full) < 2 {
		t.Fatalf("built with %d segments: this test no longer shows a compaction", len(full))
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if full, _ := segmentSizes(t, x); len(full) != 1 {
		t.Fatalf("after the flush the index reads %d segments %v, want 1", len(full), full)
	}
	if want := [][2]int{{0, 2000}, {2000, 2000}}; !reflect.DeepEqual(merged, want) {
		t.Errorf("the compaction reported %v, want %v", merged, want)
	}
	compacted, err := ReadStored(fs, testStoreDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(compacted.Segments) != 1 {
		t.Fatalf("the flush saved %d segments, want 1", len(compacted.Segments))
	}
	sameAnswers(t, "compacted", answers(t, x), coldAnswers(t, docs[:2000]))

	// 990 documents more, 10 at a time: small segments beside the
	// compacted one, which stays, since they hold less than half of it.
	for i := 2000; i < 2990; i += 10 {
		if err := x.Put(docs[i : i+10]...); err != nil {
			t.Fatal(err)
		}
		if err := x.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := ReadStored(fs, testStoreDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept.Segments) < 2 || !slices.Contains(kept.Segments, compacted.Segments[0]) {
		t.Errorf("after 990 more documents the index saved %v, want %v and more", kept.Segments, compacted.Segments)
	}
	// Ten more make half of it: compacted again.
	if err := x.Put(docs[2990:]...); err != nil {
		t.Fatal(err)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if full, _ := segmentSizes(t, x); len(full) != 1 || full[0] != 3000 {
		t.Errorf("at half of the compacted segment the index reads segments %v, want one of 3000", full)
	}
	closeIndex(t, x)

	reopen(t, fs, docs, "reopened after the compaction")
}

// compactTasks packs first-fit by decreasing size into merges of at most
// maxSegmentDocs live documents, after which no two segments would fit in
// one, and keeps the merges that take in half of their largest segment.
func TestCompactTasksPacksTheFewestSegments(t *testing.T) {
	sizes := func(tasks [][]mergeplan.Segment) [][]int64 {
		var out [][]int64
		for _, task := range tasks {
			var s []int64
			for _, seg := range task {
				s = append(s, seg.LiveSize())
			}
			out = append(out, s)
		}
		return out
	}
	for _, c := range []struct {
		in   []int64
		want [][]int64
	}{
		{[]int64{1700, 1700, 5, 1700, 1700, 9, 1700}, [][]int64{{1700, 1700, 1700, 1700, 1700, 9, 5}}},
		{[]int64{30_000, 150_000, 10, 60_000, 120_000, 40_000}, [][]int64{{120_000, 60_000}}}, // 150,000 takes in 40,010 only
		{[]int64{150_000, 80_000, 75_000}, [][]int64{{80_000, 75_000}}},                       // 150,000 + 75,000 do not fit
		{[]int64{10_000, 3000, 1999}, nil},
		{[]int64{10_000, 3000, 2000}, [][]int64{{10_000, 3000, 2000}}},
		{[]int64{190_010, 180_000, 30_000}, nil}, // its own result: nothing fits together
		{[]int64{42}, nil},
	} {
		if got := sizes(compactTasks(planSegments(c.in...))); !reflect.DeepEqual(got, c.want) {
			t.Errorf("compactTasks(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
