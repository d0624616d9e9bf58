package tree

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Context is a context.md file: what a domain, topic or subtopic covers.
type Context struct {
	Path  string `json:"path"`  // e.g. "engineering/context.md"
	Title string `json:"title"` // from front matter or "# " heading
	Body  string `json:"body"`  // markdown after the front matter
	Raw   []byte `json:"-"`
}

// ParseContext parses a context.md file (front matter optional). The
// title comes from a front-matter "title:", else the first "# " heading,
// else the folder name ("invoice_retry" -> "Invoice Retry"). Body is the
// markdown after the front matter with LF line endings. Invalid UTF-8, an
// unclosed or malformed front matter are errors naming the path.
func ParseContext(path string, data []byte) (*Context, error) {
	ms, _, body, err := splitFile(path, data)
	if err != nil {
		return nil, err
	}
	c := &Context{Path: path, Body: body, Raw: data}
	for _, it := range ms {
		if keyString(it.Key) == "title" {
			if c.Title, err = scalarField(it.Value); err != nil {
				return nil, fmt.Errorf("tree: parse %s: front matter key %q: %w", path, "title", err)
			}
		}
	}
	if c.Title == "" {
		c.Title = firstH1(body)
	}
	if c.Title == "" {
		dir := ""
		if i := strings.LastIndexByte(path, '/'); i >= 0 {
			dir = path[:i]
		}
		c.Title = folderTitle(dir[strings.LastIndexByte(dir, '/')+1:])
	}
	return c, nil
}

// folderTitle makes a display title from a folder name: underscores as
// spaces, each word capitalized, the rest of the word kept as written.
func folderTitle(name string) string {
	words := strings.Fields(strings.ReplaceAll(name, "_", " "))
	for i, w := range words {
		r, n := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[n:]
	}
	return strings.Join(words, " ")
}

// NewContext renders the default context.md for a folder (depth 1 domain,
// 2 topic, 3 subtopic): a title made from the folder name, and the sections
// docs/format.md lists for that level, each holding a one-line placeholder that
// says what belongs there. Folders deeper than three levels (possible in
// an imported vault) get the subtopic layout. The result is deterministic.
func NewContext(folder string) []byte {
	var segs []string
	for _, s := range strings.Split(strings.Trim(folder, "/"), "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	name := "Memory"
	if len(segs) > 0 {
		name = folderTitle(segs[len(segs)-1])
	}
	var sections [][2]string
	switch len(segs) {
	case 0, 1:
		sections = [][2]string{
			{"Purpose", "Not written yet: what the " + name + " domain is for and why its knowledge is kept."},
			{"Scope", "Not written yet: what belongs under " + name + ", and what belongs elsewhere."},
			{"Topics", "Not written yet: the topics under " + name + ", one line each."},
		}
	case 2:
		sections = [][2]string{
			{"Overview", "Not written yet: what the " + name + " topic covers within " + folderTitle(segs[0]) + "."},
			{"Key Concepts", "Not written yet: the main ideas, terms and components of " + name + "."},
			{"Related Topics", "Not written yet: other topics that " + name + " depends on or affects."},
		}
	default:
		sections = [][2]string{
			{"Focus", "Not written yet: the narrow question " + name + " answers."},
			{"Relation to Parent", "Not written yet: how " + name + " fits within " + folderTitle(segs[len(segs)-2]) + "."},
		}
	}
	var b strings.Builder
	b.WriteString("# " + name + "\n")
	for _, s := range sections {
		b.WriteString("\n## " + s[0] + "\n" + s[1] + "\n")
	}
	return []byte(b.String())
}
