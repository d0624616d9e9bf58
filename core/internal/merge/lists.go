package merge

import (
	"fmt"
	"slices"
	"strconv"
)

// list3 merges three versions of a list of distinct items (tags, relations,
// snippets, the keys of facts and sections) as sets that keep an order: an
// item one side added is in, an item one side removed (and the other kept)
// is out, and the order is the sides' order, with diff3 placing each item.
// It is symmetric: ours and theirs may be swapped.
func list3(base, ours, theirs []string) []string {
	// Each item becomes a line of fixed width, numbered in the items'
	// sorted order, so that the lines compare as the items do and the
	// merge does not depend on which side came first.
	var items []string
	for _, l := range [][]string{base, ours, theirs} {
		items = append(items, l...)
	}
	slices.Sort(items)
	items = slices.Compact(items)
	code := make(map[string]string, len(items))
	for i, s := range items {
		code[s] = fmt.Sprintf("%08d\n", i)
	}
	enc := func(l []string) []string {
		out := make([]string, 0, len(l))
		seen := map[string]bool{}
		for _, s := range l {
			if !seen[s] {
				seen[s] = true
				out = append(out, code[s])
			}
		}
		return out
	}
	b, x, y := enc(base), enc(ours), enc(theirs)
	var out []string
	for _, c := range chunks(b, x, y) {
		o, xs, ys := c.base, c.ours, c.theirs
		switch {
		case slices.Equal(xs, ys) || slices.Equal(ys, o):
			out = append(out, xs...)
		case slices.Equal(xs, o):
			out = append(out, ys...)
		default:
			// Both changed this stretch: keep what both have and what either
			// added, in the order the union of the two gives.
			in := func(l []string, s string) bool { return slices.Contains(l, s) }
			for _, s := range splitLines(union(joinLines(xs), joinLines(ys))) {
				if (in(xs, s) && in(ys, s)) || (in(xs, s) && !in(o, s)) || (in(ys, s) && !in(o, s)) {
					out = append(out, s)
				}
			}
		}
	}
	res := make([]string, 0, len(out))
	seen := map[string]bool{}
	for _, c := range out {
		if !seen[c] {
			seen[c] = true
			i, _ := strconv.Atoi(c[:len(c)-1])
			res = append(res, items[i])
		}
	}
	return res
}

func joinLines(l []string) string {
	n := 0
	for _, s := range l {
		n += len(s)
	}
	b := make([]byte, 0, n)
	for _, s := range l {
		b = append(b, s...)
	}
	return string(b)
}
