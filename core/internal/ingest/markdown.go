package ingest

import (
	"fmt"
	"strings"
)

// mdSplitLevel is the deepest heading level that starts a new entry: deeper
// headings stay in their section's text, so that an entry is a readable
// unit rather than a sentence under a "####".
const mdSplitLevel = 3

type mdSection struct {
	path     []string // heading path, outermost first; empty before the first heading
	from, to int      // 1-based lines of the body (the heading line included)
	body     []string
	line     int // 1-based line of body[0]
}

// splitMarkdown cuts a markdown file at its headings of levels 1 to 3
// (ATX "## Title" and setext underlines), outside fenced code. Each section
// with text becomes an entry titled by its heading; its task keeps the
// heading path ("Install › Linux") and its lines. A section over partBytes
// becomes entries of whole paragraphs, "Heading (part 2 of 9)", each with
// its own lines. Text before the first heading becomes an entry titled by
// the file's name. YAML front matter at the top is not content and is
// skipped.
func splitMarkdown(s *source) error {
	all := strings.Split(strings.TrimSuffix(s.text, "\n"), "\n")
	start := frontMatterEnd(all)
	var secs []*mdSection
	cur := &mdSection{from: start + 1, line: start + 1}
	var stack []string
	var levels []int
	var code fence
	for i := start; i < len(all); i++ {
		l := all[i]
		if code.line(l) {
			cur.body = append(cur.body, l)
			continue
		}
		level, text, head := 0, "", i
		if !code.open() {
			level, text = atxHeading(l)
			if level == 0 && i > start && len(cur.body) > 0 {
				if lv := setextLevel(l); lv > 0 && strings.TrimSpace(all[i-1]) != "" && atxLevel(all[i-1]) == 0 {
					// The previous line was the heading's text, not body.
					level, text, head = lv, strings.TrimSpace(all[i-1]), i-1
					cur.body = cur.body[:len(cur.body)-1]
				}
			}
		}
		if level == 0 || level > mdSplitLevel {
			cur.body = append(cur.body, l)
			continue
		}
		cur.to = head
		secs = append(secs, cur)
		for len(levels) > 0 && levels[len(levels)-1] >= level {
			levels, stack = levels[:len(levels)-1], stack[:len(stack)-1]
		}
		levels, stack = append(levels, level), append(stack, text)
		cur = &mdSection{path: append([]string(nil), stack...), from: head + 1, line: i + 2}
	}
	cur.to = len(all)
	secs = append(secs, cur)

	count := map[string]int{}
	for _, sec := range secs {
		if len(sec.path) > 0 {
			count[sec.path[len(sec.path)-1]]++
		}
	}
	base := s.stem[strings.LastIndexByte(s.stem, '/')+1:]
	for _, sec := range secs {
		body := strings.TrimSpace(strings.Join(sec.body, "\n"))
		if body == "" {
			continue
		}
		title, task := base, "Introduction"
		if n := len(sec.path); n > 0 {
			title = sec.path[n-1]
			if count[title] > 1 && n > 1 {
				title = sec.path[n-2] + " › " + title
			}
			task = "Section " + strings.Join(sec.path, " › ")
		}
		p := Piece{Folder: s.folder("documents", s.topic()), Title: title}
		if len(body) <= partBytes {
			p.Text, p.Task = body, fmt.Sprintf("%s (%s)", task, lines(sec.from, max(sec.to, sec.from)))
			s.add(p)
			continue
		}
		// A long section: entries of whole paragraphs, each with its lines
		// (the first from the heading on).
		parts := cutText(strings.Join(sec.body, "\n"), partBytes)
		s.addParts(p, parts, func(i int, pt part) string {
			from := sec.line + pt.first
			if i == 0 {
				from = sec.from
			}
			return fmt.Sprintf("%s (%s)", task, lines(from, sec.line+pt.last))
		})
	}
	return nil
}

// frontMatterEnd returns the index of the first line after a leading YAML
// front matter block, or 0 when there is none.
func frontMatterEnd(lines []string) int {
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		if t := strings.TrimSpace(lines[i]); t == "---" || t == "..." {
			return i + 1
		}
	}
	return 0
}

// fence follows fenced code blocks line by line: a line of three or more
// backticks or tildes (fenceMarker) opens one, and a line of as many or
// more of the same character, and nothing else, closes it.
type fence struct {
	marker string // the open block's marker ("```"), "" outside code
	opener string // the line that opened it
}

func (f *fence) open() bool { return f.marker != "" }

// line takes the next line and reports whether it is a fence line: one
// that opens or closes a block, or another marker inside one.
func (f *fence) line(l string) bool {
	m := fenceMarker(l)
	switch {
	case m == "":
		return false
	case f.marker == "":
		f.marker, f.opener = m, l
	case strings.HasPrefix(strings.TrimSpace(l), f.marker) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), f.marker[:1])) == "":
		f.marker = ""
	}
	return true
}

// fenceMarker returns "```" or "~~~" (as long as written) when the line
// opens or closes a fenced code block.
func fenceMarker(l string) string {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return ""
	}
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(t) && t[n] == c {
			n++
		}
		if n >= 3 {
			return t[:n]
		}
	}
	return ""
}

// atxHeading recognizes "# Title" to "###### Title" (up to three leading
// spaces, optional closing hashes) and returns its level and text.
func atxHeading(l string) (int, string) {
	lv := atxLevel(l)
	if lv == 0 {
		return 0, ""
	}
	t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
	if c := strings.TrimRight(t, "#"); c != t && (c == "" || strings.HasSuffix(c, " ")) {
		t = strings.TrimSpace(c)
	}
	if t == "" {
		return 0, ""
	}
	return lv, t
}

func atxLevel(l string) int {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return 0
	}
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
		return 0
	}
	return n
}

// setextLevel recognizes a setext underline: "===" is level 1, "---" 2.
func setextLevel(l string) int {
	t := strings.TrimSpace(l)
	if len(t) < 3 || len(l)-len(strings.TrimLeft(l, " ")) > 3 {
		return 0
	}
	switch strings.Trim(t, "=") {
	case "":
		return 1
	}
	if strings.Trim(t, "-") == "" {
		return 2
	}
	return 0
}
