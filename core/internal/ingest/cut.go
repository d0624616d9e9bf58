package ingest

import (
	"strings"
	"unicode/utf8"
)

// A part is a stretch of a text that cutText made: its text, and the
// lines (0-based, in the text cut) of the first and the last of the text's
// own lines it holds; a fence line cutText adds is not one of them.
type part struct {
	text        string
	first, last int
	// sections names what a part of a note cut at its headings holds (a
	// heading or a few, cutNote), for its title; empty elsewhere.
	sections string
}

// cutText splits text into parts of at most max bytes, in one pass over
// its lines: between paragraphs (at blank lines outside fenced code) while
// whole paragraphs fit, else at line ends, else inside a line at rune
// boundaries. A fenced block cut in two is closed at the end of one part
// and opened again, by its opening line, at the start of the next, so that
// each part reads as markdown on its own. Parts are trimmed and blank ones
// dropped; a text of at most max bytes is one part, untouched.
func cutText(text string, max int) []part {
	if len(text) <= max {
		return []part{{text: text, last: strings.Count(text, "\n")}}
	}
	lines := strings.Split(text, "\n")
	c := cutter{max: max, first: -1}
	var f fence
	for i := 0; i < len(lines); {
		if isBlank(lines[i]) {
			i++
			continue
		}
		// A paragraph: up to the next blank line outside fenced code.
		j, size := i, -1
		for j < len(lines) {
			f.line(lines[j])
			size += len(lines[j]) + 1
			j++
			if j < len(lines) && !f.open() && isBlank(lines[j]) {
				break
			}
		}
		c.paragraph(lines, i, j, size)
		i = j
	}
	c.flush()
	return c.parts
}

// cutter accumulates the parts of cutText.
type cutter struct {
	max         int
	parts       []part
	b           strings.Builder
	first, last int // the text's lines in b; first is -1 while b holds none
}

// fits reports whether n more bytes fit in the part, on a line of their
// own.
func (c *cutter) fits(n int) bool {
	if c.b.Len() == 0 {
		return n <= c.max
	}
	return c.b.Len()+1+n <= c.max
}

// write appends s to the part as a line; line is its index in the text,
// or -1 for a line cutText adds.
func (c *cutter) write(s string, line int) {
	if c.b.Len() > 0 {
		c.b.WriteByte('\n')
	}
	c.b.WriteString(s)
	if line >= 0 {
		if c.first < 0 {
			c.first = line
		}
		c.last = line
	}
}

// flush ends the part.
func (c *cutter) flush() {
	if t := strings.TrimSpace(c.b.String()); t != "" && c.first >= 0 {
		c.parts = append(c.parts, part{text: t, first: c.first, last: c.last})
	}
	c.b.Reset()
	c.first = -1
}

// paragraph adds the paragraph lines[i:j], size bytes joined: to the part
// when it fits, else to a part of its own, else cut at its line ends.
func (c *cutter) paragraph(lines []string, i, j, size int) {
	// Paragraphs in a part are one blank line apart.
	if c.b.Len() > 0 && !c.fits(1+size) {
		c.flush()
	}
	if c.b.Len() == 0 && size <= c.max || c.fits(1+size) {
		if c.b.Len() > 0 {
			c.b.WriteByte('\n')
		}
		for k := i; k < j; k++ {
			c.write(lines[k], k)
		}
		return
	}
	var f fence
	for k := i; k < j; k++ {
		l := lines[k]
		was := f // the block l is in, if any
		f.line(l)
		// Room to close the block after l, should the part end there.
		closing := 0
		if c.reopens(f) {
			closing = len(f.marker) + 1
		}
		need := len(l) + closing
		if !was.open() && f.open() && k+1 < j {
			need += 1 + len(lines[k+1]) // a block opens with its first line
		}
		if !c.fits(need) {
			c.cut(was)
		}
		if c.fits(len(l) + closing) {
			c.write(l, k)
			continue
		}
		// A line too long for any part: cut inside it.
		inside := was.open() && f.open()
		if !inside || !c.reopens(was) {
			closing, was = 0, fence{}
		}
		for l != "" {
			room := c.max - closing
			if c.b.Len() > 0 {
				room -= c.b.Len() + 1
			}
			if len(l) <= room {
				c.write(l, k)
				break
			}
			n := max(room, 0)
			for n > 0 && !utf8.RuneStart(l[n]) {
				n--
			}
			if n == 0 && c.first < 0 {
				// Not one rune fits: a max below 4 bytes, never the package's.
				_, n = utf8.DecodeRuneInString(l)
			}
			if n > 0 {
				c.write(l[:n], k)
				l = l[n:]
			}
			c.cut(was)
		}
	}
}

// cut ends the part inside the block f (if open): it closes the block and
// opens it again at the start of the next part. A part that holds nothing
// but the block's opening line is not ended: the line after it is cut.
func (c *cutter) cut(f fence) {
	open := c.reopens(f)
	if open && c.first >= 0 && c.b.Len() == len(f.opener) {
		return
	}
	if open {
		c.write(f.marker, -1)
	}
	c.flush()
	if open {
		c.write(f.opener, -1)
	}
}

// reopens reports whether an open block f is closed and opened again
// when a part ends inside it: unless its opening and closing lines leave
// no room for a character of the block in a part.
func (c *cutter) reopens(f fence) bool {
	return f.open() && len(f.opener)+len(f.marker)+2+utf8.UTFMax <= c.max
}

func isBlank(l string) bool { return strings.TrimSpace(l) == "" }
