package tidy

import (
	"cmp"
	"hash/fnv"
	"slices"
	"strings"
	"unicode"

	"github.com/arbormem/arbor/core/internal/sets"
)

// The near-duplicate finder (docs/ABI.md §4.17): MinHash over word
// shingles, with locality-sensitive hashing by bands, so that only
// entries sharing a band are compared and a tree of 100,000 entries is
// never compared pair by pair. Every candidate pair is then verified by
// its exact Jaccard similarity, so the signatures only choose what is
// compared, never what is reported.
//
// No Go library for MinHash is both maintained and deterministic across
// architectures and wasm; the hashing is FNV-1a (the standard library's)
// and SplitMix64 with fixed seeds, so a plan is the same in every host.
const (
	// shingleWords is the number of words in a shingle: three words keep
	// a reworded sentence from sharing all of its shingles with the old
	// one, while short entries still have enough of them.
	shingleWords = 3
	// bands × rows = the hashes of a signature. A pair of similarity s
	// becomes a candidate with probability 1 − (1 − s^rows)^bands: 0.9998
	// at 0.8, 0.99 at 0.6, 0.64 at 0.5, 0.12 at 0.3, 0.0001 at 0.05 (two
	// unrelated messages), so a threshold from 0.6 up loses almost no
	// pair to the bands, and the signature costs 64 multiply-adds a
	// shingle.
	bands     = 16
	rows      = 4
	numHashes = bands * rows
	// bigBucket: a band bucket holding more entries than this (boilerplate
	// every entry shares) is compared by each entry against the bucket's
	// first, not pair by pair, so that its cost stays linear.
	bigBucket = 32
)

// The hash functions of a signature are h_i(x) = a_i·x + b_i (mod 2^64)
// of x, the shingle's hash mixed to 64 bits: a_i odd, so each is a
// permutation of uint64 (multiply-add hashing, one multiplication per
// shingle and hash). The a_i and b_i are fixed, so every run and every
// host computes the same signatures.
var mulA, addB = func() (a, b [numHashes]uint64) {
	x := uint64(0x5eed_a4b0_7d1d_e5a1)
	for i := range a {
		x += 0x9e3779b97f4a7c15
		a[i] = mix(x) | 1
		x += 0x9e3779b97f4a7c15
		b[i] = mix(x)
	}
	return a, b
}()

// mix is SplitMix64's finalizer: a bijection of uint64 that spreads every
// input bit over the output.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// words cuts text into lower-case words of letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// shingles returns the sorted, distinct hashes of text's runs of
// shingleWords words (a text of fewer words is one shingle).
func shingles(text string) []uint32 {
	ws := words(text)
	if len(ws) == 0 {
		return nil
	}
	n := max(1, len(ws)-shingleWords+1)
	out := make([]uint32, 0, n)
	h := fnv.New64a()
	for i := 0; i < n; i++ {
		h.Reset()
		for j := i; j < min(i+shingleWords, len(ws)); j++ {
			h.Write([]byte(ws[j]))
			h.Write([]byte{0})
		}
		v := h.Sum64()
		out = append(out, uint32(v^v>>32))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// signature is the MinHash signature of a shingle set.
func signature(sh []uint32) [numHashes]uint64 {
	var sig [numHashes]uint64
	for i := range sig {
		sig[i] = ^uint64(0)
	}
	for _, s := range sh {
		x := mix(uint64(s))
		for i := range sig {
			if v := mulA[i]*x + addB[i]; v < sig[i] {
				sig[i] = v
			}
		}
	}
	return sig
}

// sketch is what a plan keeps of an entry between reading it and
// verifying its candidate pairs: the keys of its signature's bands and
// the size of its shingle set, 136 bytes whatever the entry's size, so
// that the memory of a plan grows with the tree by that alone. The
// shingles are made again, from the entry read again, for the few
// entries a candidate pair or a group names.
type sketch struct {
	keys [bands]uint64
	// n is the number of shingles; 0 (no words, or the entry could not
	// be read) is never a candidate.
	n uint32
}

// sketchOf is the sketch of a shingle set.
func sketchOf(sh []uint32) sketch {
	s := sketch{n: uint32(len(sh))}
	if len(sh) == 0 {
		return s
	}
	sig := signature(sh)
	var buf [8 * rows]byte
	for b := range bands {
		for r, v := range sig[b*rows : (b+1)*rows] {
			for k := range 8 {
				buf[8*r+k] = byte(v >> (8 * k))
			}
		}
		h := fnv.New64a()
		h.Write(buf[:])
		s.keys[b] = h.Sum64()
	}
	return s
}

// Pair is two documents (by index, A < B) and their verified similarity.
type Pair struct {
	A, B       int
	Similarity float64
}

// candidates returns the pairs of sketches sharing a band (packed as
// A<<32 | B, A < B), sorted and distinct. Each band is sorted by key
// (then index) on its own, one slice of n keys reused band after band,
// in place of a map of every bucket of every band: the members of a
// bucket are a run of equal keys, in index order, as a map's bucket
// filled in index order would hold them.
func candidates(sk []sketch) []uint64 {
	type member struct {
		key uint64
		i   uint32
	}
	var out []uint64
	pair := func(a, b uint32) { out = append(out, uint64(min(a, b))<<32|uint64(max(a, b))) }
	band := make([]member, 0, len(sk))
	for b := range bands {
		band = band[:0]
		for i, s := range sk {
			if s.n > 0 {
				band = append(band, member{s.keys[b], uint32(i)})
			}
		}
		slices.SortFunc(band, func(x, y member) int {
			if c := cmp.Compare(x.key, y.key); c != 0 {
				return c
			}
			return cmp.Compare(x.i, y.i)
		})
		for lo := 0; lo < len(band); {
			hi := lo + 1
			for hi < len(band) && band[hi].key == band[lo].key {
				hi++
			}
			members := band[lo:hi]
			if len(members) > bigBucket {
				for _, x := range members[1:] {
					pair(members[0].i, x.i)
				}
			} else {
				for x := range members {
					for y := x + 1; y < len(members); y++ {
						pair(members[x].i, members[y].i)
					}
				}
			}
			lo = hi
		}
		// Distinct after each band, so that a pair every band finds is
		// held once, not sixteen times.
		slices.Sort(out)
		out = slices.Compact(out)
	}
	return out
}

// similarPairs returns the pairs of documents whose Jaccard similarity
// is at least threshold among the candidates the sketches' bands find,
// ordered by A then B; shingled gives a document's shingles (read
// again), asked once per candidate pair at most.
func similarPairs(sk []sketch, threshold float64, shingled func(int) []uint32) []Pair {
	var out []Pair
	for _, c := range candidates(sk) {
		a, b := int(c>>32), int(uint32(c))
		if s := sets.Jaccard(shingled(a), shingled(b)); s >= threshold {
			out = append(out, Pair{A: a, B: b, Similarity: s})
		}
	}
	return out
}
