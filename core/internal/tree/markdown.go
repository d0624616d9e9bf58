package tree

import (
	"strings"
	"unicode"
)

// This file holds the small amount of markdown structure the codec must
// agree on with itself: ATX headings, fenced code blocks and blank-line
// trimming. Parsing and rendering use exactly these helpers, which is what
// makes Render(ParseEntry(Render(e))) byte-identical to Render(e).

// normalizeNewlines turns CRLF and lone CR into LF, so that files written
// on any platform parse alike and rendered output is LF-only.
func normalizeNewlines(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// cleanText prepares caller-supplied text for rendering: valid UTF-8, LF
// line endings, no leading blank lines, no trailing whitespace.
func cleanText(s string) string {
	return trimBlank(normalizeNewlines(strings.ToValidUTF8(s, "\uFFFD")))
}

// isBlank reports a line holding only whitespace.
func isBlank(line string) bool { return strings.TrimSpace(line) == "" }

// trimBlank drops leading blank lines and trailing whitespace but keeps
// the indentation of the first non-blank line (it may be code).
func trimBlank(s string) string {
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 || !isBlank(s[:i]) {
			break
		}
		s = s[i+1:]
	}
	return s
}

// oneLine folds a value onto a single line: each line trimmed, blank lines
// dropped, the rest joined by one space. Used for list items and facts,
// which the format keeps on one line.
func oneLine(s string) string {
	s = normalizeNewlines(strings.ToValidUTF8(s, "\uFFFD"))
	if !strings.Contains(s, "\n") {
		return strings.TrimSpace(s)
	}
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// splitLines splits text into lines; "" has no lines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// parseHeading recognizes an ATX heading ("## Title", up to three leading
// spaces, optional closing hashes) and returns its level and text.
func parseHeading(line string) (level int, text string, ok bool) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] == '#' {
		j++
	}
	n := j - i
	if n == 0 || n > 6 {
		return 0, "", false
	}
	if j < len(line) && line[j] != ' ' && line[j] != '\t' {
		return 0, "", false
	}
	text = strings.TrimSpace(line[j:])
	k := len(text)
	for k > 0 && text[k-1] == '#' {
		k--
	}
	switch {
	case k == 0:
		text = ""
	case k < len(text) && (text[k-1] == ' ' || text[k-1] == '\t'):
		text = strings.TrimSpace(text[:k])
	}
	return n, text, true
}

// headingLine rewrites a heading line at another level, keeping its text
// as written (closing hashes included).
func headingLine(line string, level int) string {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	for i < len(line) && line[i] == '#' {
		i++
	}
	rest := strings.TrimLeft(line[i:], " \t")
	h := strings.Repeat("#", level)
	if rest == "" {
		return h
	}
	return h + " " + rest
}

// sectionKey normalizes a heading for matching known names: letters only,
// lowercase, so "Raw Concept", "raw_concept" and "RAW  CONCEPT:" agree.
func sectionKey(heading string) string {
	// An ASCII heading's key is made in a buffer on the stack and, when it
	// is one the codec knows, returned as that key's constant: every
	// heading of every entry an open or a question parses is keyed, and in
	// WebAssembly an allocation costs what parsing a line does.
	var buf [32]byte
	n := 0
	for i := 0; i < len(heading); i++ {
		c := heading[i]
		if c >= 0x80 || n == len(buf) {
			n = -1
			break
		}
		if c|0x20 >= 'a' && c|0x20 <= 'z' {
			buf[n] = c | 0x20
			n++
		}
	}
	if n >= 0 {
		if k, ok := codecKeys[string(buf[:n])]; ok {
			return k
		}
	}
	var b strings.Builder
	for _, r := range heading {
		if unicode.IsLetter(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// fence is an open fenced code block: its character and length.
type fence struct {
	ch byte
	n  int
}

// openFence recognizes a fence opener ("```go", "~~~~") and returns the
// fence and its info string.
func openFence(line string) (f fence, info string, ok bool) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return fence{}, "", false
	}
	c := line[i]
	j := i
	for j < len(line) && line[j] == c {
		j++
	}
	if j-i < 3 {
		return fence{}, "", false
	}
	// CommonMark: a backtick fence's info string may not hold backticks,
	// otherwise the line is inline code, not a fence.
	if c == '`' && strings.IndexByte(line[j:], '`') >= 0 {
		return fence{}, "", false
	}
	return fence{ch: c, n: j - i}, strings.TrimSpace(line[j:]), true
}

// closedBy reports whether line closes the fence.
func (f fence) closedBy(line string) bool {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] == f.ch {
		j++
	}
	return j-i >= f.n && isBlank(line[j:])
}

// String returns the closing line for the fence.
func (f fence) String() string { return strings.Repeat(string(f.ch), f.n) }

// fenceScanner tracks whether successive lines are inside a fenced block,
// so that headings inside code are never taken for structure.
type fenceScanner struct {
	open bool
	f    fence
}

// outside consumes a line and reports whether it is ordinary markdown
// (not a fence delimiter and not inside a fenced block).
func (s *fenceScanner) outside(line string) bool {
	if s.open {
		if s.f.closedBy(line) {
			s.open = false
		}
		return false
	}
	if f, _, ok := openFence(line); ok {
		s.open, s.f = true, f
		return false
	}
	return true
}

// Paragraphs cuts markdown text at its blank lines ("\n\n"), never inside
// a fenced code block, whose blank lines belong to it: joined with "\n\n"
// the pieces are the text again.
func Paragraphs(text string) []string {
	var out []string
	var s fenceScanner
	for _, p := range strings.Split(text, "\n\n") {
		if s.open && len(out) > 0 {
			out[len(out)-1] += "\n\n" + p
		} else {
			out = append(out, p)
		}
		for _, l := range strings.Split(p, "\n") {
			s.outside(l)
		}
	}
	return out
}

// demote2 pushes level-2 headings down to level 3: in a section body they
// would otherwise start a new section when the file is read back.
func demote2(level int) int {
	if level == 2 {
		return 3
	}
	return level
}

// demote3 pushes level-2 and level-3 headings down to level 4: inside the
// Narrative, "### " starts a named part.
func demote3(level int) int {
	if level == 2 || level == 3 {
		return 4
	}
	return level
}

// safeContent makes free text safe to embed as a section body: cleaned,
// structural headings outside code demoted, and an unclosed fence closed
// so it cannot swallow the sections that follow.
func safeContent(s string, demote func(int) int) string {
	s = cleanText(s)
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	var sc fenceScanner
	for i, l := range lines {
		if !sc.outside(l) {
			continue
		}
		if lv, _, ok := parseHeading(l); ok {
			if nl := demote(lv); nl != lv {
				lines[i] = headingLine(l, nl)
			}
		}
	}
	if sc.open {
		lines = append(lines, sc.f.String())
	}
	return strings.Join(lines, "\n")
}

// firstH1 returns the text of the first non-empty level-1 heading outside
// code, the title of a note without front matter.
func firstH1(body string) string {
	var sc fenceScanner
	for _, l := range splitLines(body) {
		if !sc.outside(l) {
			continue
		}
		if lv, t, ok := parseHeading(l); ok && lv == 1 && t != "" {
			return t
		}
	}
	return ""
}

// stripTitle removes leading "# Title" lines that only repeat the title,
// so the title lives in one place (front matter) after a rewrite.
func stripTitle(pre, title string) string {
	if title == "" {
		return pre
	}
	for pre != "" {
		first, rest, _ := strings.Cut(pre, "\n")
		lv, t, ok := parseHeading(first)
		if !ok || lv != 1 || t != title {
			break
		}
		pre = trimBlank(rest)
	}
	return pre
}

// isBullet reports a list item line ("- x", "* x", "+ x") and its text.
func isBullet(line string) (string, bool) {
	t := strings.TrimLeft(line, " \t")
	if t == "" || (t[0] != '-' && t[0] != '*' && t[0] != '+') {
		return "", false
	}
	if len(t) > 1 && t[1] != ' ' && t[1] != '\t' {
		return "", false
	}
	return strings.TrimSpace(t[1:]), true
}
