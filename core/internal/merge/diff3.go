package merge

import (
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// The line diff is go-diff's (Myers' algorithm with the usual speed-ups,
// the library go-git itself uses); what is written here is only diff3 on
// top of it: the stable and unstable chunks of two diffs against one base,
// as in Khanna, Kunal and Pierce, "A formal investigation of diff3".

// splitLines cuts text into lines, each keeping its "\n"; a last line
// without one is a line too.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// matches returns, for every line of a, the index of the line of b it is
// matched with in a shortest line diff, or -1.
func matches(a, b []string) []int {
	m := make([]int, len(a))
	for i := range m {
		m[i] = -1
	}
	dmp := diffmatchpatch.New()
	// No deadline: a diff cut short by a clock would differ between runs
	// and between hosts, and merges must not.
	dmp.DiffTimeout = 0
	ra, rb, _ := dmp.DiffLinesToRunes(strings.Join(a, ""), strings.Join(b, ""))
	i, j := 0, 0
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			for k := 0; k < n; k++ {
				m[i+k] = j + k
			}
			i, j = i+n, j+n
		case diffmatchpatch.DiffDelete:
			i += n
		case diffmatchpatch.DiffInsert:
			j += n
		}
	}
	return m
}

// chunk is one region of a three-way merge: stable (the three agree) or
// changed on one or both sides.
type chunk struct {
	base, ours, theirs []string
}

// chunks cuts base, ours and theirs into diff3's chunks, in order.
func chunks(base, ours, theirs []string) []chunk {
	ma, mb := matches(base, ours), matches(base, theirs)
	var out []chunk
	i, ia, ib := 0, 0, 0
	for {
		// The longest stable run from here.
		k := 0
		for i+k < len(base) && ma[i+k] == ia+k && mb[i+k] == ib+k {
			k++
		}
		if k > 0 {
			out = append(out, chunk{base[i : i+k], ours[ia : ia+k], theirs[ib : ib+k]})
			i, ia, ib = i+k, ia+k, ib+k
			continue
		}
		// An unstable chunk runs to the next base line both sides kept.
		j := i
		for j < len(base) && (ma[j] < 0 || mb[j] < 0) {
			j++
		}
		if j == len(base) {
			if i < len(base) || ia < len(ours) || ib < len(theirs) {
				out = append(out, chunk{base[i:], ours[ia:], theirs[ib:]})
			}
			return out
		}
		out = append(out, chunk{base[i:j], ours[ia:ma[j]], theirs[ib:mb[j]]})
		i, ia, ib = j, ma[j], mb[j]
	}
}

// Conflict is a region both sides changed differently.
type Conflict struct {
	Base, Ours, Theirs string
}

// Text3 merges two versions of a text with their common ancestor, line by
// line: a region one side changed takes that change; a region both
// changed alike takes it once; text both sides inserted at the same place
// (the base there empty) keeps both, the lines they share once (notes
// appended on two machines are both kept, without a conflict). A region
// both sides changed differently is a conflict: the result keeps ours
// there and the conflict says what each side had.
//
// Only the conflicts depend on which side is ours: without any, merging
// (base, a, b) and (base, b, a) gives the same text.
func Text3(base, ours, theirs string) (string, []Conflict) {
	if ours == theirs || theirs == base {
		return ours, nil
	}
	if ours == base {
		return theirs, nil
	}
	var b strings.Builder
	var conflicts []Conflict
	for _, c := range chunks(splitLines(base), splitLines(ours), splitLines(theirs)) {
		o, x, y := strings.Join(c.base, ""), strings.Join(c.ours, ""), strings.Join(c.theirs, "")
		switch {
		case x == y || y == o:
			b.WriteString(x)
		case x == o:
			b.WriteString(y)
		case o == "":
			b.WriteString(union(x, y))
		default:
			b.WriteString(x)
			conflicts = append(conflicts, Conflict{Base: o, Ours: x, Theirs: y})
		}
	}
	return b.String(), conflicts
}

// union is two insertions at one place as one text: the lines both hold
// once, in their order, and around them each side's own lines, the side
// whose text sorts first first, so that the order does not depend on which
// side is ours.
func union(x, y string) string {
	if y < x {
		x, y = y, x
	}
	xl, yl := splitLines(x), splitLines(y)
	m := matches(xl, yl)
	var b strings.Builder
	j := 0
	for i, l := range xl {
		if m[i] < 0 {
			b.WriteString(l)
			continue
		}
		for ; j < m[i]; j++ {
			b.WriteString(yl[j])
		}
		b.WriteString(l)
		j = m[i] + 1
	}
	for ; j < len(yl); j++ {
		b.WriteString(yl[j])
	}
	return b.String()
}
