package tree

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"gopkg.in/yaml.v2"
)

// The codec reads hand-written markdown tolerantly and writes one
// canonical form. Every rule below comes in a pair (how a part is read,
// how it is written) and the pairs are chosen so that writing what was
// read gives the same bytes again: Render(ParseEntry(Render(e))) ==
// Render(e) for any entry, and a hand-written file is stable after its
// first rewrite.

// Section keys (see sectionKey) of the "## " sections the codec knows.
const (
	keyReason     = "reason"
	keyRawConcept = "rawconcept"
	keyNarrative  = "narrative"
	keyFacts      = "facts"
	keySnippets   = "snippets"
	keyRelations  = "relations"
)

// knownSections lists the structured sections. Only the first occurrence
// of each is structured; repeats are kept verbatim in Entry.Other, which is
// lossless and needs no merge rules.
var knownSections = map[string]bool{
	keyReason: true, keyRawConcept: true, keyNarrative: true,
	keyFacts: true, keySnippets: true, keyRelations: true,
}

// codecKeys are the section keys the codec knows (sectionKey), each
// mapped to itself.
var codecKeys = func() map[string]string {
	m := map[string]string{}
	for k := range knownSections {
		m[k] = k
	}
	for _, l := range rawLabels {
		m[l.key] = l.key
	}
	for _, p := range narrativeParts {
		m[p.key] = p.key
	}
	return m
}()

// knownKeys are the front-matter keys with Entry fields; an Extra entry
// with one of these names is not written (it would shadow the field).
var knownKeys = map[string]bool{
	"title": true, "summary": true, "tags": true, "related": true,
	"keywords": true, "createdAt": true, "updatedAt": true,
}

// ParseEntry parses a markdown file into an Entry. A file without front
// matter is valid (Obsidian note): its title comes from the first "# "
// heading or from the file name ("my_note.md" -> "my note"). Invalid
// UTF-8, a "---" front matter that is never closed, malformed YAML (the
// YAML error is wrapped) and badly typed known keys are errors that name
// the path; the caller reports them and never overwrites the file.
func ParseEntry(path string, data []byte) (*Entry, error) {
	ms, head, body, err := splitFile(path, data)
	if err != nil {
		return nil, err
	}
	e := &Entry{Path: path, Comments: frontComments(head, ms)}
	if err := e.setFrontMatter(ms); err != nil {
		return nil, fmt.Errorf("tree: parse %s: %w", path, err)
	}
	if e.Title == "" {
		e.Title = firstH1(body)
	}
	if e.Title == "" {
		e.Title = titleFromPath(path)
	}
	pre, secs := splitSections(body)
	e.Preamble = stripTitle(trimBlank(pre), e.Title)
	e.setSections(secs)
	return e, nil
}

// splitFile is how every markdown file of the tree is read first: the
// bytes must be valid UTF-8, a byte-order mark is dropped, line endings
// become LF, and the front matter (ordered) is split from the body; head
// is the text before the body when YAML read it (splitFrontMatter). Errors
// name the path.
func splitFile(path string, data []byte) (ms yaml.MapSlice, head, body string, err error) {
	if !utf8.Valid(data) {
		return nil, "", "", fmt.Errorf("tree: parse %s: not valid UTF-8", path)
	}
	text := normalizeNewlines(strings.TrimPrefix(string(data), "\uFEFF"))
	ms, head, body, err = splitFrontMatter(text)
	if err != nil {
		return nil, "", "", fmt.Errorf("tree: parse %s: %w", path, err)
	}
	return ms, head, body, nil
}

// titleFromPath makes a title from a file name: extension dropped,
// underscores read as spaces, case kept.
func titleFromPath(p string) string {
	base := p[strings.LastIndexByte(p, '/')+1:]
	if len(base) >= 3 && strings.EqualFold(base[len(base)-3:], ".md") {
		base = base[:len(base)-3]
	}
	base = strings.ToValidUTF8(base, "\uFFFD")
	return strings.TrimSpace(strings.ReplaceAll(base, "_", " "))
}

// setFrontMatter fills the front-matter fields from decoded YAML.
func (e *Entry) setFrontMatter(ms yaml.MapSlice) error {
	for _, it := range ms {
		k := keyString(it.Key)
		var err error
		switch k {
		case "title":
			e.Title, err = scalarField(it.Value)
		case "summary":
			e.Summary, err = scalarField(it.Value)
		case "tags":
			e.Tags, err = stringList(it.Value, true)
		case "keywords":
			e.Keywords, err = stringList(it.Value, true)
		case "related":
			e.Related, err = stringList(it.Value, false)
		case "createdAt":
			e.CreatedAt, err = parseTime(it.Value)
		case "updatedAt":
			e.UpdatedAt, err = parseTime(it.Value)
		default:
			e.Extra = append(e.Extra, KeyValue{Key: k, Value: yamlFlow(it.Value, ctxValue)})
		}
		if err != nil {
			return fmt.Errorf("front matter key %q: %w", k, err)
		}
	}
	return nil
}

// scalarField reads a single-valued text key (title, summary).
func scalarField(v interface{}) (string, error) {
	s, ok := scalarString(v)
	if !ok {
		return "", fmt.Errorf("expected text, found a %s", yamlKind(v))
	}
	return strings.TrimSpace(s), nil
}

// rawSection is a "## " section as found in the file: its heading, and
// the lines after it joined by "\n" as they are in the file.
type rawSection struct {
	heading string
	body    string
}

// splitSections cuts a body at level-2 headings outside code: pre is the
// lines before the first, each section's body the lines after its heading,
// joined by "\n". Each is the span of body its lines cover, not a string
// made of them: in WebAssembly an allocation costs what parsing a line
// does, and every entry an open or a question reads is cut here.
func splitSections(body string) (pre string, secs []rawSection) {
	if body == "" {
		return "", nil
	}
	var sc fenceScanner
	from, to := -1, -1 // the span of the current part's lines; none yet
	part := func() string {
		if from < 0 {
			return ""
		}
		return body[from:to]
	}
	for start := 0; ; {
		end := len(body)
		if i := strings.IndexByte(body[start:], '\n'); i >= 0 {
			end = start + i
		}
		l := body[start:end]
		if lv, t, ok := parseHeading(l); sc.outside(l) && ok && lv == 2 {
			if len(secs) == 0 {
				pre = part()
			} else {
				secs[len(secs)-1].body = part()
			}
			secs = append(secs, rawSection{heading: t})
			from, to = -1, -1
		} else {
			if from < 0 {
				from = start
			}
			to = end
		}
		if end == len(body) {
			break
		}
		start = end + 1
	}
	if len(secs) == 0 {
		pre = part()
	} else {
		secs[len(secs)-1].body = part()
	}
	return pre, secs
}

// setSections fills the section fields; see knownSections for repeats
// and structured for the sections that stay in Other as written.
func (e *Entry) setSections(secs []rawSection) {
	seen := map[string]bool{}
	for _, s := range secs {
		body := trimBlank(s.body)
		k := sectionKey(s.heading)
		if !knownSections[k] || seen[k] || !structured(k, body) {
			e.Other = append(e.Other, Section{Heading: s.heading, Body: body})
			continue
		}
		seen[k] = true
		switch k {
		case keyReason:
			e.Reason = body
		case keyRawConcept:
			e.RawConcept = parseRawConcept(body)
		case keyNarrative:
			e.Narrative = parseNarrative(body)
		case keyFacts:
			e.Facts = parseFacts(body)
		case keySnippets:
			e.Snippets = parseSnippets(body)
		case keyRelations:
			e.LegacyRelations = parseRelations(body)
		}
	}
}

// Render writes an Entry as markdown, deterministically: front matter in
// a fixed key order (title, summary, tags, related, keywords, createdAt,
// updatedAt, then Extra in order; empty fields omitted; lists in flow
// style; times RFC3339 UTC), the preamble, then the sections Reason, Raw
// Concept, Narrative, Facts, Snippets, Relations (only for legacy
// relations) and Other in order, empty ones omitted.
//
// Render writes the canonical form of its input, so some text changes on
// the first write: CRLF becomes LF, "##"/"###" headings inside a section's
// text are demoted so they cannot start a new section, unclosed code
// fences are closed, a fact wrapped over lines is folded onto one, and
// a leading "# Title" line repeating the title is dropped. An empty Title
// is filled the way ParseEntry would (first "# " heading, else file name).
func Render(e *Entry) []byte {
	if e == nil {
		return nil
	}
	title, body := renderBody(e)
	var b strings.Builder
	writeFrontMatter(&b, e, title)
	b.WriteString(body)
	return []byte(b.String())
}

// Body returns the markdown below the front matter as Render writes it,
// without the newlines around it.
func Body(e *Entry) string {
	_, body := renderBody(e)
	return strings.Trim(body, "\n")
}

// renderBody returns the title Render writes and the body below the front
// matter.
func renderBody(e *Entry) (title, body string) {
	secs := renderSections(e)
	pre := safeContent(e.Preamble, demote2)
	title = strings.TrimSpace(strings.ToValidUTF8(e.Title, "\uFFFD"))
	if title == "" {
		title = firstH1(joinBody(pre, secs))
	}
	if title == "" {
		title = titleFromPath(e.Path)
	}
	return title, joinBody(stripTitle(pre, title), secs)
}

// joinBody lays out the body: blocks separated by blank lines.
func joinBody(pre string, secs []string) string {
	var b strings.Builder
	if pre != "" {
		b.WriteString("\n" + pre + "\n")
	}
	for _, s := range secs {
		b.WriteString("\n" + s + "\n")
	}
	return b.String()
}

// writeFrontMatter writes the "---" block. It is always written, even
// when empty, so that a body starting with "---" is never mistaken for
// front matter.
func writeFrontMatter(b *strings.Builder, e *Entry, title string) {
	b.WriteString("---\n")
	done := make([]bool, len(e.Comments))
	comments := func(k string) { writeComments(b, e.Comments, done, k) }
	scalar := func(k, v string) {
		if v != "" {
			comments(k)
			b.WriteString(k + ": " + yamlString(v, ctxValue) + "\n")
		}
	}
	list := func(k string, l []string) {
		l = cleanList(l)
		if len(l) == 0 {
			return
		}
		comments(k)
		parts := make([]string, len(l))
		for i, s := range l {
			parts[i] = yamlString(s, ctxFlow)
		}
		b.WriteString(k + ": [" + strings.Join(parts, ", ") + "]\n")
	}
	scalar("title", title)
	scalar("summary", strings.TrimSpace(strings.ToValidUTF8(e.Summary, "\uFFFD")))
	list("tags", e.Tags)
	list("related", e.Related)
	list("keywords", e.Keywords)
	if t := formatTime(e.CreatedAt); t != "" {
		comments("createdAt")
		b.WriteString("createdAt: " + t + "\n")
	}
	if t := formatTime(e.UpdatedAt); t != "" {
		comments("updatedAt")
		b.WriteString("updatedAt: " + t + "\n")
	}
	written := map[string]bool{}
	for _, kv := range e.Extra {
		k := strings.ToValidUTF8(kv.Key, "\uFFFD")
		if knownKeys[k] || written[k] {
			continue
		}
		written[k] = true
		if kv.Key != "" { // "" names the comments after the last key
			comments(kv.Key)
		}
		b.WriteString(yamlString(k, ctxKey) + ": " + canonExtraValue(kv.Value) + "\n")
	}
	// Those of keys no longer written, and those after the last key.
	for i, kv := range e.Comments {
		if !done[i] {
			b.WriteString("#" + oneLineComment(kv.Value) + "\n")
		}
	}
	b.WriteString("---\n")
}

// renderSections renders every "## " section in order.
func renderSections(e *Entry) []string {
	// An Other section named like a known one is read back as that section
	// unless the known one comes first; so the known heading is written
	// (empty if need be) whenever such an Other section exists.
	var others []string
	shadowed := map[string]bool{}
	for _, o := range e.Other {
		h := canonHeading(o.Heading)
		body := safeContent(o.Body, demote2)
		if k := sectionKey(h); knownSections[k] && structured(k, body) {
			shadowed[k] = true
		}
		others = append(others, sectionBlock(h, body))
	}
	var out []string
	add := func(k, heading, body string) {
		if body != "" || shadowed[k] {
			out = append(out, sectionBlock(heading, body))
		}
	}
	add(keyReason, "Reason", safeContent(e.Reason, demote2))
	add(keyRawConcept, "Raw Concept", renderRawConcept(e.RawConcept))
	add(keyNarrative, "Narrative", renderNarrative(e.Narrative))
	add(keyFacts, "Facts", renderFacts(e.Facts))
	add(keySnippets, "Snippets", renderSnippets(e.Snippets))
	add(keyRelations, "Relations", renderRelations(e.LegacyRelations))
	return append(out, others...)
}

// canonHeading is a heading as it reads back: one line, trimmed, closing
// hashes removed. It repeats until stable because removing one closing
// sequence can expose another ("a ## ##").
func canonHeading(h string) string {
	h = oneLine(h)
	for {
		_, t, _ := parseHeading("## " + h)
		if t == h {
			return t
		}
		h = t
	}
}

// sectionBlock is "## Heading" followed by the body, if any.
func sectionBlock(h, body string) string {
	line := "## " + h
	if h == "" {
		line = "##"
	}
	if body == "" {
		return line
	}
	return line + "\n" + body
}

// ---- Raw Concept -----------------------------------------------------

// rawLabels are the Raw Concept fields in rendering order.
var rawLabels = [...]struct {
	key, label string
	get        func(*api.RawConcept) *string
}{
	{"task", "Task", func(r *api.RawConcept) *string { return &r.Task }},
	{"changes", "Changes", func(r *api.RawConcept) *string { return &r.Changes }},
	{"files", "Files", nil},
	{"flow", "Flow", func(r *api.RawConcept) *string { return &r.Flow }},
	{"timestamp", "Timestamp", func(r *api.RawConcept) *string { return &r.Timestamp }},
	{"author", "Author", func(r *api.RawConcept) *string { return &r.Author }},
}

// rawLabel recognizes a Raw Concept field line, "**Task:** value" or the
// "**Task**: value" variant (a letter, then letters and spaces), and
// returns its key and the value text after the label. Scanned by hand
// rather than with a regular expression: every line of the section of
// every entry a question reads is tried, and Go's regexp took a third of
// the parsing of the entries a question reads in WebAssembly. A label's
// letters and spaces hold neither ":" nor "*", so the label ends at the
// first other byte, where the delimiter must begin.
func rawLabel(line string) (key, rest string, ok bool) {
	s, found := strings.CutPrefix(line, "**")
	if !found || s == "" || !isASCIILetter(s[0]) {
		return "", "", false
	}
	i := 1
	for i < len(s) && (isASCIILetter(s[i]) || s[i] == ' ') {
		i++
	}
	if d := s[i:]; !strings.HasPrefix(d, ":**") && !strings.HasPrefix(d, "**:") {
		return "", "", false
	}
	if j := rawLabelIndex(sectionKey(s[:i])); j >= 0 {
		return rawLabels[j].key, s[i+3:], true
	}
	return "", "", false
}

// rawLabelIndex returns the place of the label key k in rawLabels, or -1.
func rawLabelIndex(k string) int {
	for i := range rawLabels {
		if rawLabels[i].key == k {
			return i
		}
	}
	return -1
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// parseRawConcept reads the labelled lines. A value runs until the next
// known label (the paper's example wraps Task over two lines); text
// before the first label belongs to Task, and a repeated label appends to
// its field, so nothing in the section is lost.
func parseRawConcept(body string) api.RawConcept {
	type fileLine struct {
		text   string
		inline bool
	}
	// The lines of each label, by its place in rawLabels (an array, not a
	// map: see sectionKey).
	var vals [len(rawLabels)][]string
	var files []fileLine
	cur := rawLabelIndex("task")
	for _, l := range splitLines(body) {
		k, rest, ok := rawLabel(l)
		if ok {
			cur = rawLabelIndex(k)
		}
		switch {
		case rawLabels[cur].key == "files":
			if ok {
				files = append(files, fileLine{rest, true})
			} else {
				files = append(files, fileLine{l, false})
			}
		case ok:
			vals[cur] = append(vals[cur], strings.TrimLeftFunc(rest, unicode.IsSpace))
		default:
			vals[cur] = append(vals[cur], l)
		}
	}
	var rc api.RawConcept
	for i, l := range rawLabels {
		if l.get != nil {
			*l.get(&rc) = strings.TrimSpace(strings.Join(vals[i], "\n"))
		}
	}
	for _, f := range files {
		if item, ok := isBullet(f.text); ok && !f.inline {
			rc.Files = append(rc.Files, item)
			continue
		}
		rc.Files = append(rc.Files, strings.Split(f.text, ",")...)
	}
	rc.Files = cleanList(rc.Files)
	return rc
}

// renderRawConcept writes one block per non-empty field. Files are written
// inline ("**Files:** a, b") unless a name holds a comma, then as a bullet
// list under "**Files:**".
func renderRawConcept(rc api.RawConcept) string {
	var blocks []string
	for _, l := range rawLabels {
		if l.get == nil {
			files := cleanList(rc.Files)
			if len(files) == 0 {
				continue
			}
			inline := true
			for _, f := range files {
				if strings.Contains(f, ",") {
					inline = false
				}
			}
			if inline {
				blocks = append(blocks, "**Files:** "+strings.Join(files, ", "))
			} else {
				blocks = append(blocks, "**Files:**\n- "+strings.Join(files, "\n- "))
			}
			continue
		}
		v := strings.TrimSpace(cleanText(*l.get(&rc)))
		if v == "" {
			continue
		}
		lines := strings.Split(v, "\n")
		for i := 1; i < len(lines); i++ {
			// A continuation line that looks like a label would start
			// another field when read back; the backslash keeps it text.
			if _, _, ok := rawLabel(lines[i]); ok {
				lines[i] = `\` + lines[i]
			}
		}
		// Fences are closed per field: the labels are not fence-aware, so a
		// fence left open would hide the next field from markdown readers
		// and shift text between fields on the next read.
		blocks = append(blocks, safeContent("**"+l.label+":** "+strings.Join(lines, "\n"), demote2))
	}
	return strings.Join(blocks, "\n")
}

// ---- Narrative -------------------------------------------------------

// narrativeParts are the "### " parts of the Narrative in rendering order.
var narrativeParts = [...]struct {
	key, heading string
	get          func(*api.Narrative) *string
}{
	{"structure", "Structure", func(n *api.Narrative) *string { return &n.Structure }},
	{"dependencies", "Dependencies", func(n *api.Narrative) *string { return &n.Dependencies }},
	{"highlights", "Highlights", func(n *api.Narrative) *string { return &n.Highlights }},
	{"rules", "Rules", func(n *api.Narrative) *string { return &n.Rules }},
	{"examples", "Examples", func(n *api.Narrative) *string { return &n.Examples }},
	{"diagrams", "Diagrams", func(n *api.Narrative) *string { return &n.Diagrams }},
}

// parseNarrative splits the Narrative at the first "### " heading of each
// known part; any other "### " heading is text of the current part.
func parseNarrative(body string) api.Narrative {
	var n api.Narrative
	// The lines of the text before any part (0) and of each part, by its
	// place in narrativeParts plus one (arrays, not maps: see sectionKey).
	var acc [len(narrativeParts) + 1][]string
	var seen [len(narrativeParts) + 1]bool
	cur := 0
	var sc fenceScanner
	for _, l := range splitLines(body) {
		if sc.outside(l) {
			if lv, t, ok := parseHeading(l); ok && lv == 3 {
				if i := narrativeIndex(sectionKey(t)); i >= 0 && !seen[i+1] {
					seen[i+1], cur = true, i+1
					continue
				}
			}
		}
		acc[cur] = append(acc[cur], l)
	}
	n.Text = trimBlank(strings.Join(acc[0], "\n"))
	for i, p := range narrativeParts {
		*p.get(&n) = trimBlank(strings.Join(acc[i+1], "\n"))
	}
	return n
}

// narrativeIndex returns the place of the part key k in narrativeParts,
// or -1.
func narrativeIndex(k string) int {
	for i := range narrativeParts {
		if narrativeParts[i].key == k {
			return i
		}
	}
	return -1
}

// renderNarrative writes Text, then each non-empty part under "### ".
func renderNarrative(n api.Narrative) string {
	var parts []string
	if t := safeContent(n.Text, demote3); t != "" {
		parts = append(parts, t)
	}
	for _, p := range narrativeParts {
		if c := safeContent(*p.get(&n), demote3); c != "" {
			parts = append(parts, "### "+p.heading+"\n"+c)
		}
	}
	return strings.Join(parts, "\n\n")
}

// ---- Facts -----------------------------------------------------------

// parseFacts reads one fact per list item; lines that are not list items
// continue the previous fact (hand-wrapped lines), a blank line ends it.
func parseFacts(body string) []api.Fact {
	var raw [][]string
	open := false
	for _, l := range splitLines(body) {
		if isBlank(l) {
			open = false
			continue
		}
		item, ok := isBullet(l)
		if !ok {
			item = strings.TrimSpace(l)
		}
		if open && !ok {
			raw[len(raw)-1] = append(raw[len(raw)-1], item)
			continue
		}
		raw = append(raw, []string{item})
		open = true
	}
	var out []api.Fact
	for _, r := range raw {
		if f := parseFactText(strings.Join(r, " ")); f != (api.Fact{}) {
			out = append(out, f)
		}
	}
	return out
}

// noBrackets drops the brackets a category is written in. Built once: a
// Replacer builds its tables at its first use, which cost more than the
// replacing itself when every fact of every entry rendered built one.
var noBrackets = strings.NewReplacer("[", "", "]", "")

// normalizeFact is the one definition of a fact's canonical form: the
// fact is written as its line text and read back with parseFactText, so
// whatever the caller put where, the result is what the file will say
// (a subject written into the statement is split out, a trailing
// "[category]" likewise, "**" is removed from subjects, every part is
// one line).
func normalizeFact(f api.Fact) api.Fact {
	cat := oneLine(noBrackets.Replace(f.Category))
	return parseFactText(FactText(api.Fact{Subject: stripStars(oneLine(f.Subject)), Statement: oneLine(f.Statement), Category: cat}))
}

// FactText is a fact's line without the bullet, as an entry's file writes it:
// "**subject**: statement [category]", absent parts left out.
func FactText(f api.Fact) string {
	var parts []string
	if f.Subject != "" {
		parts = append(parts, "**"+f.Subject+"**:")
	}
	if f.Statement != "" {
		parts = append(parts, f.Statement)
	}
	if f.Category != "" {
		parts = append(parts, "["+f.Category+"]")
	}
	return strings.Join(parts, " ")
}

// parseFactText reads a fact's line (without the bullet). Every fact of
// every file is read here when a tree is opened, so the line is cut by
// hand (cutFactSubject, cutFactCategory) rather than with regexps.
func parseFactText(text string) api.Fact {
	subj, st := "", strings.TrimSpace(text)
	for subj == "" {
		s, rest, ok := cutFactSubject(st, "**:")
		if !ok {
			s, rest, ok = cutFactSubject(st, ":**")
		}
		if !ok {
			break
		}
		subj, st = stripStars(s), strings.TrimSpace(rest)
	}
	cat := ""
	if rest, c, ok := cutFactCategory(st); ok {
		// The split is on ASCII white space while trimming is Unicode-aware;
		// both sides must be non-empty after trimming or the split would not
		// survive.
		if c, rest := strings.TrimSpace(c), strings.TrimSpace(rest); c != "" && rest != "" {
			st, cat = rest, c
		}
	}
	return api.Fact{Subject: subj, Statement: st, Category: cat}
}

// isRegexpSpace reports the ASCII white space of regexp's \s.
func isRegexpSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// cutFactSubject cuts "**subject" + delim + "statement" ("**a**: b" with
// delim "**:", "**a:** b" with ":**"): the subject is the shortest that is
// not empty and holds no line break, the statement follows the white space
// after delim and holds no line break. It matches as the expression
// ^\*\*(.+?)DELIM\s*(.*)$ does.
func cutFactSubject(st, delim string) (subj, rest string, ok bool) {
	if !strings.HasPrefix(st, "**") {
		return "", "", false
	}
	firstNL, lastNL := strings.IndexByte(st, '\n'), strings.LastIndexByte(st, '\n')
	for from := 3; from <= len(st); {
		k := strings.Index(st[from:], delim)
		if k < 0 {
			return "", "", false
		}
		i := from + k
		if firstNL >= 0 && firstNL < i {
			return "", "", false
		}
		j := i + len(delim)
		for j < len(st) && isRegexpSpace(st[j]) {
			j++
		}
		if lastNL < j {
			return st[2:i], st[j:], true
		}
		from = i + 1
	}
	return "", "", false
}

// cutFactCategory cuts a trailing " [category]": the text before it ends
// in a character that is not white space and holds no line break, white
// space separates them, and the category holds no bracket. It matches as
// the expression ^(.*\S)\s+\[([^\[\]]+)\]$ does.
func cutFactCategory(st string) (rest, cat string, ok bool) {
	if !strings.HasSuffix(st, "]") {
		return "", "", false
	}
	inner := st[:len(st)-1]
	k := strings.LastIndexByte(inner, '[')
	if k < 0 || k+1 == len(inner) || strings.IndexByte(inner[k+1:], ']') >= 0 {
		return "", "", false
	}
	a := k
	for a > 0 && isRegexpSpace(st[a-1]) {
		a--
	}
	if a == k || a == 0 || strings.IndexByte(st[:a], '\n') >= 0 {
		return "", "", false
	}
	return st[:a], inner[k+1:], true
}

// stripStars removes "**" runs from a subject and trims it.
func stripStars(s string) string {
	for strings.Contains(s, "**") {
		s = strings.ReplaceAll(s, "**", "")
	}
	return strings.TrimSpace(s)
}

// renderFacts writes "- **subject**: statement [category]" lines.
func renderFacts(facts []api.Fact) string {
	var lines []string
	for _, f := range facts {
		f = normalizeFact(f)
		if f == (api.Fact{}) {
			continue
		}
		line := "- " + FactText(f)
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// ---- Snippets --------------------------------------------------------

// parseSnippets reads each fenced block as one snippet: the content of a
// bare fence, or the whole block (fences included) when the fence names a
// language, so "```go" survives. Loose paragraphs are snippets too.
func parseSnippets(body string) []string {
	lines := splitLines(body)
	var out []string
	add := func(s string) {
		if s = trimBlank(s); s != "" {
			out = append(out, s)
		}
	}
	for i := 0; i < len(lines); {
		if isBlank(lines[i]) {
			i++
			continue
		}
		if f, info, ok := openFence(lines[i]); ok {
			j := i + 1
			for j < len(lines) && !f.closedBy(lines[j]) {
				j++
			}
			end := j + 1
			if end > len(lines) {
				end = len(lines)
			}
			if info != "" {
				add(strings.Join(lines[i:end], "\n"))
			} else {
				add(strings.Join(lines[i+1:j], "\n"))
			}
			i = end
			continue
		}
		j := i + 1
		for j < len(lines) && !isBlank(lines[j]) {
			if _, _, ok := openFence(lines[j]); ok {
				break
			}
			j++
		}
		add(strings.Join(lines[i:j], "\n"))
		i = j
	}
	return out
}

// renderSnippets writes each snippet as a fenced block. A snippet that is
// exactly one fenced block with a language is written as is; anything
// else is wrapped in a bare fence longer than any backtick run inside it,
// so snippets that contain fences survive.
func renderSnippets(snippets []string) string {
	var blocks []string
	for _, s := range snippets {
		s = cleanText(s)
		if s == "" {
			continue
		}
		if isInfoFenceBlock(s) {
			blocks = append(blocks, s)
			continue
		}
		blocks = append(blocks, Fenced(s))
	}
	return strings.Join(blocks, "\n\n")
}

// Fenced wraps text in a bare code fence longer than any backtick run
// inside it, so that the text, fences and headings included, reads back
// as it is.
func Fenced(s string) string {
	n := longestRun(s, '`') + 1
	if n < 3 {
		n = 3
	}
	f := strings.Repeat("`", n)
	return f + "\n" + s + "\n" + f
}

// isInfoFenceBlock reports text that is one fenced block with an info
// string, closed on its last line.
func isInfoFenceBlock(s string) bool {
	lines := strings.Split(s, "\n")
	f, info, ok := openFence(lines[0])
	if !ok || info == "" {
		return false
	}
	for i := 1; i < len(lines); i++ {
		if f.closedBy(lines[i]) {
			return i == len(lines)-1
		}
	}
	return false
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			if n > best {
				best = n
			}
		} else {
			n = 0
		}
	}
	return best
}

// ---- Relations -------------------------------------------------------

// structured reports whether a known section's body can be held by its
// fields without losing text: a "## Relations" section must hold only
// @path lines and a "## Facts" section only facts (factsClean). Others stay
// in Other, as written.
func structured(k, body string) bool {
	switch k {
	case keyRelations:
		return relationsClean(body)
	case keyFacts:
		return factsClean(body)
	}
	return true
}

// factsClean reports a Facts body the fact list holds whole: list items at
// the margin, the lines that continue them, blank lines. A nested or
// numbered list, a fence, an indented code block, a table, a heading or a
// quote would be folded into facts, losing its line breaks and
// indentation (a person's Python in a Facts section lost its meaning).
func factsClean(body string) bool {
	afterBlank := true
	for _, l := range splitLines(body) {
		if isBlank(l) {
			afterBlank = true
			continue
		}
		t := strings.TrimLeft(l, " \t")
		_, bullet := isBullet(l)
		_, _, fenced := openFence(l)
		_, _, heading := parseHeading(l)
		switch {
		case fenced, heading, bullet && t != l, afterBlank && !bullet && len(l)-len(t) >= 4,
			t[0] == '|', t[0] == '>', numbered(t):
			return false
		}
		afterBlank = false
	}
	return true
}

// numbered reports a line that starts an ordered list item ("1. ", "2) ").
func numbered(t string) bool {
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && (t[i+1] == ' ' || t[i+1] == '\t')
}

// relationLine matches "@path", "- @path" (and other bullets).
var relationLine = regexp.MustCompile(`^\s*(?:[-*+]\s+)?@(.*)$`)

// relationsClean reports a Relations body made only of @path lines.
func relationsClean(body string) bool {
	for _, l := range splitLines(body) {
		if !isBlank(l) && !relationLine.MatchString(l) {
			return false
		}
	}
	return true
}

// parseRelations reads the @path lines.
func parseRelations(body string) []string {
	var out []string
	for _, l := range splitLines(body) {
		if m := relationLine.FindStringSubmatch(l); m != nil {
			if p := strings.TrimSpace(m[1]); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// renderRelations writes "- @path" lines.
func renderRelations(rel []string) string {
	rel = cleanList(rel)
	if len(rel) == 0 {
		return ""
	}
	return "- @" + strings.Join(rel, "\n- @")
}
