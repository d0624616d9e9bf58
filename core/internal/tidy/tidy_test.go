package tidy

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/internal/sets"
)

func TestShingles(t *testing.T) {
	a := shingles("one two three four five six")
	b := shingles("one two three four five seven")
	// 4 shingles each, 3 shared: 3/5.
	if got := sets.Jaccard(a, b); got != 0.6 {
		t.Errorf("similarity %v, want 0.6", got)
	}
	if sets.Jaccard(a, a) != 1 {
		t.Error("a set is not like itself")
	}
}

// pairsOf runs the finder on shingle docs held in memory: sketches, then
// the candidates verified against the sets.
func pairsOf(docs [][]uint32, threshold float64) []Pair {
	sk := make([]sketch, len(docs))
	for i, sh := range docs {
		sk[i] = sketchOf(sh)
	}
	return similarPairs(sk, threshold, func(i int) []uint32 { return docs[i] })
}

// mapPairs is the finder as it was before sketches, kept as the oracle
// of the sketches': every entry's shingles and every band's buckets in
// maps, and a map of the candidate pairs seen.
func mapPairs(shingled [][]uint32, threshold float64) []Pair {
	buckets := make([]map[uint64][]int, bands)
	for b := range buckets {
		buckets[b] = map[uint64][]int{}
	}
	for i, sh := range shingled {
		if len(sh) == 0 {
			continue
		}
		sig := signature(sh)
		for b := range bands {
			h := fnv.New64a()
			for _, v := range sig[b*rows : (b+1)*rows] {
				var buf [8]byte
				for k := range buf {
					buf[k] = byte(v >> (8 * k))
				}
				h.Write(buf[:])
			}
			key := h.Sum64()
			buckets[b][key] = append(buckets[b][key], i)
		}
	}
	seen := map[[2]int]bool{}
	var out []Pair
	try := func(a, b int) {
		if a > b {
			a, b = b, a
		}
		k := [2]int{a, b}
		if seen[k] {
			return
		}
		seen[k] = true
		if s := sets.Jaccard(shingled[a], shingled[b]); s >= threshold {
			out = append(out, Pair{A: a, B: b, Similarity: s})
		}
	}
	for _, m := range buckets {
		for _, members := range m {
			if len(members) > bigBucket {
				for _, x := range members[1:] {
					try(members[0], x)
				}
				continue
			}
			for x := range members {
				for y := x + 1; y < len(members); y++ {
					try(members[x], members[y])
				}
			}
		}
	}
	slices.SortFunc(out, func(p, q Pair) int {
		if p.A != q.A {
			return p.A - q.A
		}
		return p.B - q.B
	})
	return out
}

// plantedCorpus is texts of random words, with edited copies planted
// (one word in twenty changed: similarity about 0.85) after every third,
// and the planted pairs.
func plantedCorpus(r *rand.Rand, n int) ([][]uint32, map[[2]int]bool) {
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	text := func() []string {
		ws := make([]string, 200)
		for i := range ws {
			ws[i] = vocab[r.IntN(len(vocab))]
		}
		return ws
	}
	var docs [][]uint32
	want := map[[2]int]bool{}
	for i := range n {
		ws := text()
		docs = append(docs, shingles(strings.Join(ws, " ")))
		if i%3 == 0 {
			edited := append([]string(nil), ws...)
			for k := 0; k < len(edited); k += 40 {
				edited[k] = vocab[r.IntN(len(vocab))]
			}
			want[[2]int{len(docs) - 1, len(docs)}] = true
			docs = append(docs, shingles(strings.Join(edited, " ")))
		}
	}
	return docs, want
}

// TestSimilarPairsFindsPlanted: among random texts, the planted copies
// are all found, the unrelated texts never, and the answer is the same on
// every run.
func TestSimilarPairsFindsPlanted(t *testing.T) {
	docs, want := plantedCorpus(rand.New(rand.NewPCG(1, 2)), 300)
	got := pairsOf(docs, 0.8)
	for _, p := range got {
		if !want[[2]int{p.A, p.B}] {
			t.Errorf("unplanted pair %v", p)
		}
		delete(want, [2]int{p.A, p.B})
	}
	if len(want) > 0 {
		t.Errorf("planted pairs missed: %v", want)
	}
	again := pairsOf(docs, 0.8)
	if fmt.Sprint(again) != fmt.Sprint(got) {
		t.Error("two runs differ")
	}
}

// TestSketchPairsAsMaps: the pairs found from sketches, band by band
// sorted, are the pairs the maps of every bucket found, on random corpora
// holding planted copies, copies of one text more than a bucket's bigBucket
// (compared with its first only), short texts that share a band by chance,
// and empty docs; at thresholds down to where LSH loses pairs. The pairs
// found at 0.5 are checked against every pair's exact Jaccard too.
func TestSketchPairsAsMaps(t *testing.T) {
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 7))
		docs, _ := plantedCorpus(r, 150)
		boiler := "thank you for your message we will get back to you soon"
		for i := range 2*bigBucket + 5 {
			w := []string{boiler}
			if i%2 == 0 {
				w = append(w, fmt.Sprintf("ref%d", r.IntN(4)))
			}
			docs = append(docs, shingles(strings.Join(w, " ")))
		}
		for range 200 {
			docs = append(docs, shingles(fmt.Sprintf("w%d w%d", r.IntN(6), r.IntN(6))))
		}
		docs = append(docs, nil, shingles(""), nil)
		r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
		for _, th := range []float64{0.5, 0.6, 0.8, 1} {
			got, want := pairsOf(docs, th), mapPairs(docs, th)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, threshold %g: %d pairs from sketches, %d from maps", seed, th, len(got), len(want))
			}
			if th == 0.5 && len(got) < 200 {
				t.Fatalf("seed %d: only %d pairs at 0.5: the corpus tests little", seed, len(got))
			}
		}
		found := map[[2]int]bool{}
		for _, p := range pairsOf(docs, 0.5) {
			found[[2]int{p.A, p.B}] = true
		}
		for a := range docs {
			for b := a + 1; b < len(docs); b++ {
				s := sets.Jaccard(docs[a], docs[b])
				if found[[2]int{a, b}] && (s < 0.5 || len(docs[a]) == 0) {
					t.Errorf("seed %d: pair %d %d of similarity %g reported", seed, a, b, s)
				}
			}
		}
	}
}

// TestSentencesRoundTrip: cutting a text into sentence lines and back
// gives the text, lists and paragraphs included.
func TestSentencesRoundTrip(t *testing.T) {
	for _, text := range []string{
		"One. Two! Three? Four",
		"A paragraph. Its second sentence.\n\nAnother one.\n- a list item. with a dot\n- another",
		"```\ncode. more code\n```\nAfter it.",
	} {
		lines, join := sentenceLines(text)
		if got := strings.TrimSpace(unSentence(lines, join)); got != text {
			t.Errorf("round trip of %q = %q", text, got)
		}
	}
}

// TestMergeTextMarksRewording: the fuller text is kept, a sentence only
// the other has is added where it stands, and a sentence the other says
// differently is marked with the other's path.
func TestMergeTextMarksRewording(t *testing.T) {
	a := "Alpha is first. Beta is second. Gamma is third and longest of all."
	b := "Alpha is first. Beta comes after alpha. Gamma is third and longest of all. Delta is new."
	got := mergeText(a, b, "x/a.md", "x/b.md")
	want := "Alpha is first. Beta comes after alpha. Gamma is third and longest of all. Delta is new.\n\n> **Differs in x/a.md** (tidy merge; the text above is kept): Beta is second."
	if got != want {
		t.Errorf("mergeText =\n%s\nwant\n%s", got, want)
	}
}
