package search

import (
	"testing"

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
