// Package sets holds what the engine computes over sorted sets: the
// query cache compares a question's words with a cached one's, tidy an
// entry's shingles with another's.
package sets

import "cmp"

// Jaccard is |a ∩ b| / |a ∪ b| of two sets given as sorted slices without
// repeats; two empty sets are alike (1).
func Jaccard[T cmp.Ordered](a, b []T) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	both := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			both++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}
