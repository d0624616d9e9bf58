package search

import (
	"math"

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/index"
	"github.com/blugelabs/bluge/index/mergeplan"
	bsearch "github.com/blugelabs/bluge/search"
)

// The bluge configuration of an Index.
//
// bluge.Config wraps the configuration of bluge's index package without
// letting it be changed, and its merge policy is made for large server
// indexes: every segment below 2,000 documents counts as 2,000 documents,
// so an index of fewer than 2,000 documents is kept as one segment and each
// write, which adds a segment, makes the merger rewrite the whole index. A
// bulk import of n entries one curate at a time rewrites the index n times.
// Natively the merger does that on another core; in WebAssembly there is
// one thread, and the merge runs inside whichever later call first waits on
// anything (usually the next query, which then takes ten times as long).
// So the index is opened through bluge's index package directly, with the
// configuration bluge would make except for the merge policy, and its
// searchers are opened as bluge.Reader.Search opens them (top collects
// their hits).

// mergePolicy is tiered merging with a small floor: segments below
// floorDocs documents count as floorDocs, and about tierWidth segments of
// one size are merged into one of the next tier, tierWidth times larger. A
// document is rewritten about log₄(n/10) times instead of once per write,
// while an index keeps a handful of segments (about 3 at 50 documents, 7 at
// 500, 14 at 5,000), each of which a query visits. The constants were
// chosen with bench/wasm (see its REPORT.md).
var mergePolicy = func() mergeplan.Options {
	const floorDocs, tierWidth = 10, 4
	o := mergeplan.DefaultMergePlanOptions
	o.FloorSegmentSize = floorDocs
	o.MaxSegmentsPerTier = tierWidth
	o.SegmentsPerMergeTask = tierWidth
	o.TierGrowth = tierWidth
	return o
}()

// buildPolicy is mergePolicy for an index that started empty (a cold
// build, or an index in memory): tiers of segments of fewDocs documents or
// more keep one segment each (mergeBudget). A query walks the dictionaries
// of every segment for its expansions and reads every segment's postings
// of every term, so at 100,000 entries the 25 segments a cold build left
// cost a question 1.7 times the CPU of the 9 it leaves now, for about 6%
// more CPU in the build and larger merges at its end
// (bench/scale/notes.md). Small indexes, and the small segments single
// writes add to large ones, merge as before.
//
// An index loaded from its store keeps mergePolicy: under this budget an
// index stored by an earlier version, or a build saved before its last
// merges ran, would be over budget, and every process opening it would
// merge it again in the background (in wasm, within its queries), never
// to save the result unless it also wrote. Under mergePolicy the few
// segments a build left are within budget. Such an index is merged down
// to this budget by the writer's next save instead (upkeep.go), once.
var buildPolicy = func() mergeplan.Options {
	o := mergePolicy
	o.CalcBudget = mergeBudget
	o.MaxSegmentSize = maxSegmentDocs
	return o
}()

// maxSegmentDocs bounds the segments merges make, in documents: with one
// segment per large tier, a 1M-entry build would otherwise end by
// rewriting its whole gigabyte of index in one merge, and merge it again
// as it grows (under wasm, within the calls that wait on the merger). At
// 1M entries, segments of 100,000 to 200,000 documents, no longer merged,
// are still a handful.
const maxSegmentDocs = 200_000

// fewDocs is the size (in live documents) from which a tier of segments
// keeps one segment instead of MaxSegmentsPerTier.
const fewDocs = 1000

// tiersBelow is how many times smaller than the whole index the first
// tier is at least: mergeplan.CalcBudget starts its tiers at the smallest
// segment, so a batch of a few documents made room for four segments in
// every tier between it and the largest, which a large index kept.
const tiersBelow = 256

// mergeBudget is mergeplan.CalcBudget with one segment per tier for the
// tiers of fewDocs documents or more, and a first tier of at least
// total/tiersBelow: the number of segments an index of total live
// documents, whose smallest segment has first, may keep.
func mergeBudget(total, first int64, o *mergeplan.Options) int {
	tier := max(first, total/tiersBelow, 1)
	n := 0
	for total > 0 {
		per := int64(o.MaxSegmentsPerTier)
		if tier >= fewDocs {
			per = 1
		}
		if in := float64(total) / float64(tier); in < float64(per) {
			return n + int(math.Ceil(in))
		}
		n += int(per)
		total -= per * tier
		tier = int64(float64(tier) * o.TierGrowth)
	}
	return n
}

// config is an Index's bluge configuration.
type config struct {
	search bluge.Config // what queries read: the similarity of each field
	index  index.Config // the writer's: directory, norms, merge policy
}

// newConfig configures an index over the directory dir makes, scoring each
// searchable field with its similarity, merging by policy.
func newConfig(dir func() index.Directory, sims map[string]bsearch.Similarity, policy mergeplan.Options) config {
	// Only the search side of this bluge.Config is used; its index side is
	// rebuilt below as bluge builds it.
	s := bluge.DefaultConfigWithDirectory(dir)
	for name, sim := range sims {
		s.PerFieldSimilarity[name] = sim
	}
	// bluge indexes every document under a virtual empty keyword field
	// (its match-all queries read it) and computes the norms through the
	// similarities.
	all := bluge.NewKeywordField("", "")
	_ = all.Analyze(0)
	ic := index.DefaultConfigWithDirectory(dir).
		WithVirtualField(all).
		WithNormCalc(func(field string, length int) float32 {
			if sim, ok := s.PerFieldSimilarity[field]; ok {
				return sim.ComputeNorm(length)
			}
			return s.DefaultSimilarity.ComputeNorm(length)
		})
	ic.MergePlanOptions = policy
	ic.MergeBufferSize = mergeBufferSize
	return config{search: s, index: ic}
}

// mergeBufferSize is the buffer through which a merge writes its segment
// (bluge's default): with spillBytes, what a merge holds of its output.
var mergeBufferSize = 1 << 20 // a variable for the tests

// searcher opens a searcher of q on the index's current snapshot that
// records where the matched terms occur, as bluge.Reader.Search opens one
// for a request including locations (see snapshot for the reader).
func (x *Index) searcher(q bluge.Query) (bsearch.Searcher, error) {
	return bluge.NewAllMatches(q).IncludeLocations().Searcher(snapshot{Snapshot: x.reader}, x.cfg.search)
}
