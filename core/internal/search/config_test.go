package search

import (
	"testing"

	"github.com/arbormem/arbor/core/host"
	"github.com/blugelabs/bluge/index/mergeplan"
)

// planSegment is a segment as the merge planner sees it: an id and a
// number of live documents.
type planSegment struct {
	id   uint64
	docs int64
}

func (s planSegment) ID() uint64      { return s.id }
func (s planSegment) FullSize() int64 { return s.docs }
func (s planSegment) LiveSize() int64 { return s.docs }

// plan returns, for segments of the given sizes, the sizes the merger would
// merge together.
func plan(t *testing.T, o mergeplan.Options, sizes ...int64) [][]int64 {
	t.Helper()
	var in []mergeplan.Segment
	for i, n := range sizes {
		in = append(in, planSegment{uint64(i + 1), n})
	}
	p, err := mergeplan.Plan(in, &o)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]int64
	if p != nil {
		for _, task := range p.Tasks {
			var merged []int64
			for _, s := range task.Segments {
				merged = append(merged, s.LiveSize())
			}
			out = append(out, merged)
		}
	}
	return out
}

func TestIndexMergePolicyKeepsWritesCheap(t *testing.T) {
	x, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	policy := x.cfg.index.MergePlanOptions

	// bluge's default merges a one-document write into the whole index:
	// what this configuration exists to avoid.
	if got := plan(t, mergeplan.DefaultMergePlanOptions, 500, 1); len(got) != 1 || len(got[0]) != 2 {
		t.Fatalf("bluge's default policy: %v, want the 500-document segment rewritten with the new one", got)
	}
	// A few small writes next to a large segment stay as they are.
	if got := plan(t, policy, 500, 1, 1); len(got) != 0 {
		t.Errorf("500+1+1 documents: merges %v, want none", got)
	}
	// Many small writes are merged among themselves, never into the large
	// segment.
	got := plan(t, policy, 500, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	if len(got) == 0 {
		t.Fatal("500 and twelve 1-document segments: no merge, want the small ones merged")
	}
	for _, task := range got {
		for _, n := range task {
			if n == 500 {
				t.Errorf("merges %v: the 500-document segment is rewritten", got)
			}
		}
	}
	// Segments of a tier are merged into the next one.
	if got := plan(t, policy, 10, 10, 10, 10, 10, 10); len(got) != 1 || len(got[0]) < policy.SegmentsPerMergeTask {
		t.Errorf("six 10-document segments: merges %v, want one merge of at least %d", got, policy.SegmentsPerMergeTask)
	}
}

// settle applies the merger's plans to segments of the given sizes until
// it plans nothing more, and returns the sizes left.
func settle(t *testing.T, o mergeplan.Options, sizes ...int64) []int64 {
	t.Helper()
	for range 100 {
		tasks := plan(t, o, sizes...)
		if len(tasks) == 0 {
			return sizes
		}
		merged := map[int]bool{}
		var out []int64
		for _, task := range tasks {
			sum := int64(0)
			for _, n := range task {
				sum += n
				for i, m := range sizes {
					if m == n && !merged[i] {
						merged[i] = true
						break
					}
				}
			}
			out = append(out, sum)
		}
		for i, n := range sizes {
			if !merged[i] {
				out = append(out, n)
			}
		}
		sizes = out
	}
	t.Fatal("the merger never settles")
	return nil
}

// A large index keeps a few segments: a query visits every one (its
// dictionaries for expansions, its postings for every term). A cold build
// of 100,000 entries made segments of about 1,700 documents, one per
// batch, and a last small one; bluge's budget, whose tiers start at the
// smallest segment, let it keep 25.
func TestIndexMergePolicyKeepsLargeIndexesFew(t *testing.T) {
	x, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	policy := x.cfg.index.MergePlanOptions
	build := []int64{12}
	for range 59 {
		build = append(build, 1700)
	}
	if got := settle(t, policy, build...); len(got) > 10 {
		t.Errorf("a build of 100,000 documents settles in %d segments %v, want at most 10", len(got), got)
	}
	old := policy
	old.CalcBudget = mergeplan.CalcBudget
	if got := settle(t, old, build...); len(got) < 20 {
		t.Errorf("bluge's budget settles the build in %d segments: this test no longer shows the difference", len(got))
	}
	// No merge makes a segment of more than maxSegmentDocs documents.
	big := []int64{}
	for range 600 {
		big = append(big, 1700)
	}
	for _, n := range settle(t, policy, big...) {
		if n > maxSegmentDocs {
			t.Errorf("a build of a million documents made a segment of %d", n)
		}
	}
	// Below fewDocs documents in a tier, the budget is bluge's.
	for total := int64(1); total <= 2560; total++ {
		if got, want := mergeBudget(total, 10, &policy), mergeplan.CalcBudget(total, 10, &policy); got != want {
			t.Fatalf("budget of %d documents: %d, bluge's %d", total, got, want)
		}
	}
}

// Only an index that started empty merges by buildPolicy. One loaded from
// its store keeps mergePolicy, under which what a build left is within
// budget: the segments the 100,000-entry build saved (its last merge was
// still to run) would otherwise be merged again by every process that
// opened them, and an index stored by an earlier version (25 segments)
// rewritten whole.
func TestStoredIndexMergesAsBefore(t *testing.T) {
	fs := host.NewMemFS()
	x, err := Open(Options{}, Store{FS: fs, Dir: testStoreDir})
	if err != nil {
		t.Fatal(err)
	}
	if got := x.cfg.index.MergePlanOptions; got.CalcBudget == nil || got.MaxSegmentSize != maxSegmentDocs {
		t.Error("a cold build does not merge by buildPolicy")
	}
	if err := x.Put(storeDocs(20)...); err != nil {
		t.Fatal(err)
	}
	closeIndex(t, x)
	y, _ := openStore(t, fs, nil, storeDocs(20))
	if got := y.cfg.index.MergePlanOptions; got.CalcBudget != nil || got.MaxSegmentSize != mergePolicy.MaxSegmentSize {
		t.Error("an index loaded from its store does not merge by mergePolicy")
	}
	saved := []int64{30183, 28217, 7995, 17188, 6033, 6066, 1969, 2, 2347}
	if got := plan(t, buildPolicy, saved...); len(got) == 0 {
		t.Error("buildPolicy plans no merge of the saved build: this test no longer shows the difference")
	}
	if got := plan(t, mergePolicy, saved...); len(got) != 0 {
		t.Errorf("mergePolicy merges %v of the saved build", got)
	}
	earlier := []int64{3234, 1777, 1891, 1900, 19, 7510, 4506, 7643, 8044, 7984, 7956, 7713, 1981, 8060, 2009, 2038, 2006, 7395, 2015, 2080, 27, 2029, 1, 1, 7834, 2347}
	if got := plan(t, mergePolicy, earlier...); len(got) != 0 {
		t.Errorf("mergePolicy merges %v of an index of an earlier version", got)
	}
}
