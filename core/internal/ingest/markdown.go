package ingest

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/internal/tree"
)

// A markdown file is a note, and it keeps its shape (docs/ABI.md §4.11):
// its folders are where it goes, its own front matter becomes the entry's,
// its headings stay in the entry's text with their nesting, and its links
// to other notes become relations.

// noteHeadingLevels are the heading levels a note's headings take inside
// its entry: the Narrative section is a "## " heading and its parts are
// "### " headings (Highlights, Rules, …), so a note's "## Facts" or
// "### Rules" written as they are would read back as the entry's own
// sections. The note's heading levels, outermost first, take levels 4, 5
// and 6; deeper ones stay at 6.
var noteHeadingLevels = []int{4, 5, 6}

// maxFolderLevels is how deep an entry's folder may be: domain, topic and
// subtopic (docs/format.md).
const maxFolderLevels = 3

// splitMarkdown makes a note one entry: titled by its front matter's title,
// else by a level-1 heading that opens it, else by its file name; its text
// the note's body with its headings renested (noteHeadingLevels) and the
// opening heading that titles it dropped; named by its file. A note over
// partBytes becomes entries of whole sections (cutNote), "Title (part 2 of
// 3)", each with its own lines. A front matter that does not parse is a
// warning: the note is ingested with it kept in its text, as a fenced yaml
// block.
func splitMarkdown(s *source) error {
	text := s.text
	ls := strings.Split(text, "\n")
	if end := frontMatterEnd(ls); end > 0 && strings.TrimSpace(ls[end-1]) == "..." {
		// YAML's end-of-document line closes a front matter as "---" does.
		ls[end-1] = "---"
		text = strings.Join(ls, "\n")
	}
	meta, body, err := tree.ReadNoteMatter(text)
	offset := strings.Count(text[:len(text)-len(body)], "\n")
	if err != nil {
		s.warnf("front matter not read (%v); the note is ingested with it kept as text", err)
		meta, body, offset = tree.NoteMatter{}, s.text, 0
		if end := frontMatterEnd(strings.Split(s.text, "\n")); end > 0 {
			fm := strings.SplitN(s.text, "\n", end+1)
			// The block keeps the lines it had: the fence lines take the
			// places of the lines that opened and closed it.
			fm[0], fm[end-1] = "```yaml", "```"
			body = strings.Join(fm, "\n")
		}
	}
	all := strings.Split(body, "\n")
	title := meta.Title
	if i := firstLine(all); i >= 0 {
		if lv, h := atxHeading(all[i]); lv == 1 && (title == "" || h == title) {
			title, all[i] = h, ""
		}
	}
	base := path.Base(s.stem)
	if title == "" {
		title = base
	}
	renest(all)
	text = strings.Join(all, "\n")
	p := Piece{
		Folder:   s.noteFolder(),
		Name:     tree.EntryName(base),
		Title:    title,
		Summary:  meta.Summary,
		Tags:     meta.Tags,
		Keywords: meta.Keywords,
		Created:  meta.Created,
		Updated:  meta.Updated,
		Extra:    meta.Extra,
	}
	s.aliases = meta.Aliases
	if t := cmpTime(meta.Created, meta.Updated); !t.IsZero() {
		p.Timestamp = t.Format(time.RFC3339)
	}
	task := func(from, to int) string { return fmt.Sprintf("Note (%s)", lines(offset+from+1, offset+to+1)) }
	var parts []part
	if trimmed := strings.TrimSpace(text); trimmed == "" {
		if offset == 0 {
			return nil // an empty file
		}
		// A note of front matter alone is still a note: its entry holds
		// what the front matter says.
		parts = []part{{}}
	} else if len(text) <= partBytes {
		first, last := firstLine(all), len(all)-1
		for last > first && isBlank(all[last]) {
			last--
		}
		parts = []part{{text: trimmed, first: first, last: last}}
	} else {
		parts = cutNote(all, partBytes)
	}
	var links []link
	for _, r := range meta.Links {
		// "related: [[[other]]]" or "related: [other.md]".
		r = strings.TrimSuffix(strings.TrimPrefix(r, "[["), "]]")
		ext := strings.ToLower(path.Ext(r))
		links = append(links, link{wiki: ext != ".md" && ext != ".markdown", target: r})
	}
	s.addParts(p, parts, func(_ int, pt part) string {
		if pt.text == "" {
			return "Note (front matter)"
		}
		return task(pt.first, pt.last)
	})
	for i := len(s.pieces) - len(parts); i < len(s.pieces); i++ {
		s.pieces[i].Links = append(slices.Clone(links), noteLinks(s.pieces[i].Text)...)
	}
	return nil
}

// cutNote cuts a long note's lines into parts of at most max bytes at its
// headings: whole sections (a heading and what follows it, outside fenced
// code) go together while they fit, and a section longer than max is cut
// by cutText, at paragraphs, then lines. Part lines index ls; each part
// names the sections it holds (sections).
func cutNote(ls []string, max int) (parts []part) {
	var starts []int
	var heads []heading
	var code fence
	for i, l := range ls {
		if code.line(l) || code.open() {
			continue
		}
		if lv, h := atxHeading(l); lv > 0 {
			heads = append(heads, heading{i, lv, h})
			if i > 0 {
				starts = append(starts, i)
			}
		}
	}
	defer func() {
		for i := range parts {
			parts[i].sections = sections(heads, parts[i])
		}
	}()
	starts = append([]int{0}, append(starts, len(ls))...)
	from, size := 0, 0
	flush := func(to int) {
		if text := strings.TrimSpace(strings.Join(ls[from:to], "\n")); text != "" {
			first, last := from+firstLine(ls[from:to]), to-1
			for isBlank(ls[last]) {
				last--
			}
			parts = append(parts, part{text: text, first: first, last: last})
		}
		from, size = to, 0
	}
	for k := 0; k+1 < len(starts); k++ {
		a, b := starts[k], starts[k+1]
		n := len(strings.Join(ls[a:b], "\n")) + 1
		if size > 0 && size+n > max {
			flush(a)
		}
		if n > max {
			for _, pt := range cutText(strings.Join(ls[a:b], "\n"), max) {
				parts = append(parts, part{text: pt.text, first: a + pt.first, last: a + pt.last})
			}
			from = b
			continue
		}
		size += n
	}
	flush(len(ls))
	return parts
}

// A heading is one of a note's headings: its line, level and text.
type heading struct {
	line, level int
	text        string
}

// maxSections is how many headings a part's title names before "…".
const maxSections = 3

// sections names what a part of a note holds, for its title: the
// outermost of the headings among its lines, and of the heading its first
// line is under when it does not open with one (a section cut in several
// parts, or the note's opening text); empty for a note without headings.
func sections(heads []heading, pt part) string {
	var in []heading
	for k, h := range heads {
		switch {
		case h.line >= pt.first && h.line <= pt.last:
			in = append(in, h)
		case h.line < pt.first && (k+1 == len(heads) || heads[k+1].line > pt.first):
			in = append(in, h) // the section the part continues
		}
	}
	if len(in) == 0 {
		return ""
	}
	top := slices.MinFunc(in, func(a, b heading) int { return a.level - b.level }).level
	var names []string
	for _, h := range in {
		if h.level == top {
			names = append(names, h.text)
		}
	}
	if len(names) > maxSections {
		names = append(names[:maxSections], "…")
	}
	return strings.Join(names, ", ")
}

// cmpTime is the first of the times that is not zero.
func cmpTime(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// firstLine is the index of the first line that is not blank, -1 when all
// are.
func firstLine(ls []string) int {
	for i, l := range ls {
		if !isBlank(l) {
			return i
		}
	}
	return -1
}

// renest rewrites a note's headings outside fenced code, in place, at the
// levels noteHeadingLevels gives their nesting: the distinct levels the note
// uses, outermost first, take 4, 5 and 6. A setext heading becomes an ATX
// one, its underline a blank line, so that every line keeps its number.
func renest(ls []string) {
	type head struct {
		i, level int
		text     string
	}
	var heads []head
	var code fence
	for i, l := range ls {
		if code.line(l) || code.open() {
			continue
		}
		if lv, t := atxHeading(l); lv > 0 {
			heads = append(heads, head{i, lv, t})
			continue
		}
		if lv := setextLevel(l); lv > 0 && i > 0 && !isBlank(ls[i-1]) && atxLevel(ls[i-1]) == 0 &&
			(len(heads) == 0 || heads[len(heads)-1].i != i-1) {
			heads = append(heads, head{i - 1, lv, strings.TrimSpace(ls[i-1])})
			ls[i] = ""
		}
	}
	var used []int
	for _, h := range heads {
		if !slices.Contains(used, h.level) {
			used = append(used, h.level)
		}
	}
	slices.Sort(used)
	for _, h := range heads {
		lv := noteHeadingLevels[min(slices.Index(used, h.level), len(noteHeadingLevels)-1)]
		ls[h.i] = strings.Repeat("#", lv) + " " + h.text
	}
}

// noteFolder is where a note's entries go: its folders as domain, topic and
// subtopic, slugged ("notes/billing/stripe/webhooks.md" →
// notes/billing/stripe). The domain option comes first, before the folders;
// folders deeper than maxFolderLevels fold into the last level
// ("a/b/c/d/x.md" → a/b/c_d); a note with no folder goes to the domain
// documents, and a note with one folder level gets its file name as its
// topic ("notes/todo.md" → notes/todo), since an entry sits in a topic.
func (s *source) noteFolder() string {
	var dirs []string
	if s.opts.Domain != "" {
		dirs = append(dirs, folderSlug(s.opts.Domain))
	}
	if d := path.Dir(s.name); d != "." {
		for _, seg := range strings.Split(d, "/") {
			dirs = append(dirs, folderSlug(seg))
		}
	}
	switch len(dirs) {
	case 0:
		dirs = []string{"documents", folderSlug(path.Base(s.stem))}
	case 1:
		dirs = append(dirs, folderSlug(path.Base(s.stem)))
	}
	if len(dirs) > maxFolderLevels {
		dirs = append(dirs[:maxFolderLevels-1], strings.Join(dirs[maxFolderLevels-1:], "_"))
	}
	return strings.Join(dirs, "/")
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
