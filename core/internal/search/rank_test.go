package search

import (
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring"
)

// roaring's fields are found: without them every advance takes roaring's
// Rank, slower and the same.
func TestDenseFieldsFound(t *testing.T) {
	if f, ok := findDense(); !ok || f.tab == nil {
		t.Fatal("roaring's bitmap container fields not found: advances count ranks the slow way")
	}
}

// rankAfter gives roaring's Rank for documents of bitmaps of every kind of
// container (dense, sparse, runs, several), from every earlier document.
func TestRankAfterAsRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 17))
	f, ok := findDense()
	if !ok {
		t.Skip("roaring's fields not found (TestDenseFieldsFound)")
	}
	dense := 0 // bitmap containers read
	for round := range 40 {
		b := roaring.New()
		for c := range 1 + rng.IntN(4) {
			base := uint32(c) << 16
			switch rng.IntN(3) {
			case 0: // dense: a bitmap container
				for range 4097 + rng.IntN(30000) {
					b.Add(base + uint32(rng.IntN(1<<16)))
				}
			case 1: // sparse: an array container
				for range 1 + rng.IntN(200) {
					b.Add(base + uint32(rng.IntN(1<<16)))
				}
			default: // runs
				from := base + uint32(rng.IntN(1<<15))
				b.AddRange(uint64(from), uint64(from)+uint64(1+rng.IntN(1<<15)))
			}
		}
		b.RunOptimize()
		for k := range 4 {
			if denseWords(f, b, k) != nil {
				dense++
			}
		}
		docs := b.ToArray()
		for range 2000 {
			i := rng.IntN(len(docs))
			j := i + rng.IntN(len(docs)-i)
			prev, n := docs[i], docs[j]
			if got, want := rankAfter(b, uint64(prev), uint64(i+1), n), b.Rank(n); got != want {
				t.Fatalf("round %d: rank of %d after %d (rank %d): %d, want %d", round, n, prev, i+1, got, want)
			}
		}
		if got, want := rankAfter(b, 0, 0, docs[len(docs)-1]), uint64(len(docs)); got != want {
			t.Fatalf("round %d: rank of the last with none read: %d, want %d", round, got, want)
		}
	}
	if dense == 0 {
		t.Fatal("no bitmap container among the test's bitmaps")
	}
}
