package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ellipsis marks text cut from an excerpt; it counts towards its length.
const ellipsis = "…"

// source is a text an excerpt can come from, with the occurrences of the
// matched index terms in it.
type source struct {
	text  string
	terms []term
}

// excerpt picks the passage of at most maxLen characters that shows the most
// query terms: of the sources (summary, content, aside), the window covering
// the most distinct terms wins, then the one with the most occurrences, then
// the earlier source, then the earliest. Windows are cut on word boundaries
// and marked with an ellipsis where text was left out. A document matched
// only through its title or path gets the start of its first non-empty
// source.
func excerpt(srcs []source, qs []qterm, maxLen int) string {
	best := window{}
	for _, src := range srcs {
		if w := bestWindow(src.text, src.terms, qs, maxLen); w.better(best) {
			best = w
		}
	}
	if best.distinct == 0 {
		for _, src := range srcs {
			if strings.TrimSpace(src.text) != "" {
				return cut(src.text, 0, maxLen)
			}
		}
		return ""
	}
	return cut(best.text, best.start, maxLen)
}

// window is a candidate excerpt: where it starts and how well it matches.
type window struct {
	text           string
	start          int // byte offset of the first matching term
	distinct, hits int
}

// better orders windows; earlier sources and offsets win ties because they
// are visited first and only a strictly better window replaces them.
func (w window) better(o window) bool {
	if w.distinct != o.distinct {
		return w.distinct > o.distinct
	}
	return w.hits > o.hits
}

// bestWindow slides a window of maxLen characters (minus room for context
// before the first match) over the matching terms of text.
func bestWindow(text string, ts []term, qs []qterm, maxLen int) window {
	type occ struct{ start, end, q int }
	var occs []occ
	for j, t := range ts {
		for i := range qs {
			if ok, _, end := qs[i].matchAt(ts, j); ok {
				occs = append(occs, occ{t.start, end, i})
				break
			}
		}
	}
	best := window{text: text}
	span := maxLen * 3 / 4 // leave a quarter for context before the match
	counts := make([]int, len(qs))
	for i := range occs {
		clear(counts)
		w := window{text: text, start: occs[i].start}
		for j := i; j < len(occs); j++ {
			if utf8.RuneCountInString(text[occs[i].start:occs[j].end]) > span {
				break
			}
			if counts[occs[j].q] == 0 {
				w.distinct++
			}
			counts[occs[j].q]++
			w.hits++
		}
		if w.better(best) {
			best = w
		}
	}
	return best
}

// cut returns at most maxLen characters of text around byte offset at: it
// backs up to the start of the sentence when that is near, otherwise to a
// word start, and ends at a word boundary.
func cut(text string, at, maxLen int) string {
	text = strings.TrimRightFunc(text, unicode.IsSpace)
	if at > len(text) {
		at = len(text)
	}
	start := sentenceStart(text, at, maxLen/4)
	prefix := ""
	if strings.TrimSpace(text[:start]) != "" {
		prefix = ellipsis
	}
	rest := strings.TrimLeftFunc(text[start:], unicode.IsSpace)
	budget := maxLen - utf8.RuneCountInString(prefix)
	if utf8.RuneCountInString(rest) <= budget {
		return collapse(prefix + rest)
	}
	budget -= utf8.RuneCountInString(ellipsis)
	end := wordEnd(rest, byteOffsetOfRune(rest, budget))
	body := strings.TrimRightFunc(rest[:end], func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) && r != ')' && r != '"'
	})
	return collapse(prefix + body + ellipsis)
}

// sentenceStart returns the start of the sentence holding byte offset at when
// it lies at most back characters before it, else the start of the word.
func sentenceStart(text string, at, back int) int {
	i, n := at, 0
	for i > 0 && n <= back {
		r, w := utf8.DecodeLastRuneInString(text[:i])
		// CJK full stops end a sentence without a space after them.
		if r == '\n' || strings.ContainsRune("。！？", r) ||
			(unicode.IsSpace(r) && i-w > 0 && strings.ContainsRune(".!?。！？", lastRune(text[:i-w]))) {
			return i
		}
		i -= w
		n++
	}
	if i == 0 {
		return 0
	}
	// Too far: start at the word holding at. CJK text has no spaces between
	// words, so every CJK character is a word of its own: without this, the
	// start backed up over a whole run of CJK text to the last space, often
	// so far that the excerpt no longer held the match.
	if r, _ := utf8.DecodeRuneInString(text[at:]); at < len(text) && cjkRune(r) {
		return at
	}
	for at > 0 {
		r, w := utf8.DecodeLastRuneInString(text[:at])
		if unicode.IsSpace(r) || cjkRune(r) {
			break
		}
		at -= w
	}
	return at
}

// wordEnd returns where an excerpt of text cut near byte offset end should
// end: at the last space before end, or just after the last CJK character
// before it, since CJK words are not separated by spaces. (Looking only for
// spaces cut "…。Arbor 的重试策略是…" back to "Arbor", losing the match.)
// Without either, the cut stays at end.
func wordEnd(text string, end int) int {
	for i := end; i > 0; {
		r, w := utf8.DecodeLastRuneInString(text[:i])
		if unicode.IsSpace(r) {
			if i-w > 0 {
				return i - w
			}
			return end
		}
		if cjkRune(r) {
			return i
		}
		i -= w
	}
	return end
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// byteOffsetOfRune returns the byte offset of the n-th rune of s (len(s) if
// s is shorter).
func byteOffsetOfRune(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// collapse turns runs of white space (line breaks of markdown included) into
// single spaces, so an excerpt reads as one line.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
