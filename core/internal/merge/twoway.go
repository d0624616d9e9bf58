package merge

import "strings"

// Text2 merges two texts that have no common ancestor (two copies of one
// note that drifted apart), line by line on go-diff's line diff: the
// lines both hold once, in their order; between two lines both hold, a
// run only one text has is taken, and runs both texts have there (a line
// one of them reworded) keep ours and are a conflict saying what each
// had. Lines end in "\n" or not, as in Text3.
func Text2(ours, theirs string) (string, []Conflict) {
	if ours == theirs {
		return ours, nil
	}
	ol, tl := splitLines(ours), splitLines(theirs)
	m := matches(ol, tl)
	var b strings.Builder
	var conflicts []Conflict
	i, j := 0, 0
	flush := func(iEnd, jEnd int) {
		x, y := strings.Join(ol[i:iEnd], ""), strings.Join(tl[j:jEnd], "")
		switch {
		case y == "":
			b.WriteString(x)
		case x == "":
			b.WriteString(y)
		default:
			b.WriteString(x)
			conflicts = append(conflicts, Conflict{Ours: x, Theirs: y})
		}
	}
	for k := range ol {
		if m[k] < 0 {
			continue
		}
		flush(k, m[k])
		b.WriteString(ol[k])
		i, j = k+1, m[k]+1
	}
	flush(len(ol), len(tl))
	return b.String(), conflicts
}
