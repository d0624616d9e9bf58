package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/prompt"
	"github.com/arbormem/arbor/core/internal/search"
)

// Toolbox runs the read-only tools of docs/ABI.md §6 over one view of the
// tree: the live one for queries, a curation's staged one for curateFrom
// (so the model sees what it wrote). Search always runs on the live index.
type Toolbox struct {
	index *search.Index
	cat   *catalog.Catalog
	fs    host.FS
	// offered are the tools the model was given; others are unknown to it.
	offered []api.Tool
	// seen collects the entries whose content the model was shown (search
	// excerpts, whole entries): the only paths an answer may cite.
	seen map[string]bool
	// read lists the entries read in full, in order: a loop that ends
	// without an answer presents them.
	readOrder []string
	// filter and admit, set by Within, confine the tools to what a
	// query's filters keep (docs/ABI.md §4.4): the model of a question
	// asked of one domain, tag or span searches, reads and lists only
	// that, as tiers 2 and 3 do.
	filter search.Filter
	admit  func(path string) bool
}

// NewToolbox returns the tools offered over a view of the tree (cat,
// read through fsys), searching index.
func NewToolbox(index *search.Index, cat *catalog.Catalog, fsys host.FS, offered []api.Tool) *Toolbox {
	return &Toolbox{index: index, cat: cat, fs: fsys, offered: offered, seen: map[string]bool{}}
}

// Within confines the tools to the files filter keeps; admit says
// whether it keeps the file at a path (as the filtered search would).
func (tb *Toolbox) Within(filter search.Filter, admit func(path string) bool) {
	tb.filter, tb.admit = filter, admit
}

// admits reports whether the tools may show the file at path.
func (tb *Toolbox) admits(path string) bool { return tb.admit == nil || tb.admit(path) }

// outside is the answer to a tool call about a file the filters leave out.
func outside(path string) error {
	return fmt.Errorf("%s is outside this question's filters", path)
}

// See records that the model was shown path (an answer may cite it).
func (tb *Toolbox) See(path string) { tb.seen[path] = true }

// Seen reports whether the model was shown path.
func (tb *Toolbox) Seen(path string) bool { return tb.seen[path] }

// ReadOrder lists the entries the model read in full, in order.
func (tb *Toolbox) ReadOrder() []string { return tb.readOrder }

// Answer is the conversation msgs followed by the model's turn resp and
// the result of each tool call it made, as run returns it: the messages to
// send back. step numbers the ids given to calls that came without one (a
// model may leave them empty), so that each result is tied to its call.
func Answer(msgs []api.Message, resp *api.LLMResponse, step int, run func(api.ToolCall) string) []api.Message {
	calls := withCallIDs(resp.ToolCalls, step)
	msgs = append(msgs, api.Message{Role: api.RoleAssistant, Content: resp.Content, ToolCalls: calls})
	for _, tc := range calls {
		msgs = append(msgs, api.Message{Role: api.RoleTool, Content: run(tc), ToolCallID: tc.ID})
	}
	return msgs
}

// withCallIDs gives every call an id (a model may leave it empty), so
// that each tool answer is tied to its call.
func withCallIDs(calls []api.ToolCall, step int) []api.ToolCall {
	out := make([]api.ToolCall, len(calls))
	copy(out, calls)
	for i := range out {
		if out[i].ID == "" {
			out[i].ID = fmt.Sprintf("call_%d_%d", step, i+1)
		}
	}
	return out
}

// Run executes one tool call and returns the text for the model. Every
// failure (bad JSON, unknown tool, bad arguments, missing entry) becomes an
// "error: …" answer the model can act on; nothing here fails the call.
func (tb *Toolbox) Run(tc api.ToolCall) string {
	out, err := tb.dispatch(tc)
	if err != nil {
		return "error: " + err.Error()
	}
	return out
}

func (tb *Toolbox) dispatch(tc api.ToolCall) (string, error) {
	var names []string
	for _, t := range tb.offered {
		names = append(names, t.Name)
	}
	if !slices.Contains(names, tc.Name) {
		return "", fmt.Errorf("unknown tool %q: the tools are %s", tc.Name, strings.Join(names, ", "))
	}
	switch tc.Name {
	case prompt.ToolSearch:
		var a struct {
			Query string `json:"query"`
			Limit int    `json:"limit"`
		}
		if err := DecodeArgs(tc.Arguments, &a); err != nil {
			return "", err
		}
		return tb.search(a.Query, a.Limit)
	case prompt.ToolRead:
		var a struct {
			Path string `json:"path"`
		}
		if err := DecodeArgs(tc.Arguments, &a); err != nil {
			return "", err
		}
		return tb.read(a.Path)
	case prompt.ToolList:
		var a struct {
			Path  string `json:"path"`
			Depth int    `json:"depth"`
		}
		if err := DecodeArgs(tc.Arguments, &a); err != nil {
			return "", err
		}
		return tb.list(a.Path, a.Depth)
	case prompt.ToolRelations:
		var a struct {
			Path      string `json:"path"`
			Direction string `json:"direction"`
		}
		if err := DecodeArgs(tc.Arguments, &a); err != nil {
			return "", err
		}
		return tb.relations(a.Path, a.Direction)
	}
	return "", fmt.Errorf("tool %q is not run here", tc.Name)
}

func (tb *Toolbox) search(q string, limit int) (string, error) {
	if strings.TrimSpace(q) == "" {
		return "", errors.New("query is required")
	}
	if err := api.CheckQuery(q); err != nil {
		return "", err
	}
	switch {
	case limit == 0:
		limit = prompt.SearchDefault
	case limit < 0 || limit > prompt.SearchMax:
		return "", fmt.Errorf("limit %d: want 1 to %d", limit, prompt.SearchMax)
	}
	r, err := tb.index.SearchIn(q, limit, search.Scope{Filter: tb.filter})
	if err != nil {
		return "", fmt.Errorf("search %q: %v", q, err)
	}
	if len(r.Hits) == 0 {
		return "no entry matches " + q, nil
	}
	type item struct {
		Path    string  `json:"path"`
		Title   string  `json:"title"`
		Score   float64 `json:"score"`
		Excerpt string  `json:"excerpt"`
	}
	items := make([]item, 0, len(r.Hits))
	for _, h := range r.Hits {
		tb.seen[h.Path] = true
		items = append(items, item{h.Path, h.Title, h.Score, h.Excerpt})
	}
	b, _ := json.Marshal(map[string]any{"results": items, "total": r.Total})
	return string(b), nil
}

// resolve finds the file a model means by p: the path as given, or the
// entry a link of that text resolves to (models drop ".md" or write the
// base name alone).
func (tb *Toolbox) resolve(p string) (string, error) {
	clean, err := api.CleanPath(strings.TrimPrefix(strings.TrimSpace(p), "/"))
	if err != nil {
		return "", err
	}
	if tb.cat.Has(clean) {
		return clean, nil
	}
	if _, ok := tb.cat.Context(clean); ok {
		return clean, nil
	}
	if r, ok := tb.cat.Resolve(clean); ok {
		return r, nil
	}
	return "", fmt.Errorf("no entry %s (list_tree shows what exists)", clean)
}

func (tb *Toolbox) read(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("path is required")
	}
	clean, err := tb.resolve(p)
	if err != nil {
		return "", err
	}
	if !tb.admits(clean) {
		return "", outside(clean)
	}
	data, err := tb.fs.ReadFile(clean)
	if err != nil {
		return "", fmt.Errorf("read %s: %v", clean, err)
	}
	tb.seen[clean] = true
	if !slices.Contains(tb.readOrder, clean) {
		tb.readOrder = append(tb.readOrder, clean)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "path: %s\n", clean)
	if fw := tb.kept(tb.cat.Forward(clean)); len(fw) > 0 {
		fmt.Fprintf(&b, "links to: %s\n", strings.Join(fw, ", "))
	}
	if bl := tb.kept(tb.cat.Backlinks(clean)); len(bl) > 0 {
		fmt.Fprintf(&b, "linked from: %s\n", strings.Join(bl, ", "))
	}
	b.WriteString("\n")
	b.WriteString(Clip(string(data), prompt.ReadMaxChars))
	return b.String(), nil
}

// Clip cuts s to max characters, saying so.
func Clip(s string, max int) string {
	rs := []rune(s)
	if len(rs) <= max {
		return s
	}
	return string(rs[:max]) + fmt.Sprintf("\n[… cut: %d of %d characters shown]", max, len(rs))
}

func (tb *Toolbox) list(p string, depth int) (string, error) {
	if depth < 0 || depth > 4 {
		return "", fmt.Errorf("depth %d: want 1 to 4", depth)
	}
	root := strings.Trim(strings.TrimSpace(p), "/")
	n, err := tb.cat.Outline(api.TreeParams{Path: root, Depth: depth})
	if ae := (*api.Error)(nil); errors.As(err, &ae) {
		return "", errors.New(ae.Message)
	} else if err != nil {
		return "", err
	}
	return renderTree(tb.prune(n), prompt.ListMaxLines), nil
}

// mayHold reports whether the folder at path may hold entries the domain
// and topic filters keep.
func (tb *Toolbox) mayHold(path string) bool {
	parts := strings.Split(path, "/")
	if tb.filter.Domain != "" && parts[0] != tb.filter.Domain {
		return false
	}
	return tb.filter.Topic == "" || len(parts) < 2 || parts[1] == tb.filter.Topic
}

// kept is paths without those the filters leave out.
func (tb *Toolbox) kept(paths []string) []string {
	if tb.admit == nil {
		return paths
	}
	var out []string
	for _, p := range paths {
		if tb.admit(p) {
			out = append(out, p)
		}
	}
	return out
}

// prune drops from an outline the entries the filters leave out, and the
// folders that held only those. Folders cut by the outline's depth stay:
// what they hold is not known here.
func (tb *Toolbox) prune(n *api.Node) *api.Node {
	if tb.admit == nil {
		return n
	}
	out := *n
	out.Children = nil
	for _, c := range n.Children {
		if c.Kind == "entry" {
			if tb.admit(c.Path) {
				out.Children = append(out.Children, c)
			}
			continue
		}
		if len(c.Children) == 0 {
			if tb.mayHold(c.Path) {
				out.Children = append(out.Children, c)
			}
			continue
		}
		if k := tb.prune(c); len(k.Children) > 0 {
			out.Children = append(out.Children, k)
		}
	}
	return &out
}

// renderTree lists a node's descendants one per line, indented, at most
// maxLines lines.
func renderTree(n *api.Node, maxLines int) string {
	var lines []string
	total := 0
	var walk func(*api.Node, int)
	walk = func(n *api.Node, depth int) {
		for _, c := range n.Children {
			total++
			if len(lines) < maxLines {
				line := strings.Repeat("  ", depth) + c.Path
				if c.Kind != "entry" {
					line += "/"
				}
				if c.Title != "" {
					line += " — " + c.Title
				}
				lines = append(lines, line)
			}
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	if total == 0 {
		return "(empty: no entries yet)"
	}
	if total > len(lines) {
		lines = append(lines, fmt.Sprintf("[… %d more not shown: list a folder]", total-len(lines)))
	}
	return strings.Join(lines, "\n")
}

func (tb *Toolbox) relations(p, dir string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("path is required")
	}
	switch dir {
	case "":
		dir = "both"
	case "forward", "backward", "both":
	default:
		return "", fmt.Errorf("direction %q: want forward, backward or both", dir)
	}
	clean, err := tb.resolve(p)
	if err != nil {
		return "", err
	}
	if !tb.admits(clean) {
		return "", outside(clean)
	}
	type link struct {
		Path  string `json:"path"`
		Title string `json:"title,omitempty"`
	}
	titled := func(paths []string) []link {
		out := []link{}
		for _, q := range tb.kept(paths) {
			l := link{Path: q}
			l.Title, _ = tb.cat.Title(q)
			out = append(out, l)
		}
		return out
	}
	res := map[string]any{"path": clean}
	if dir != "backward" {
		res["forward"] = titled(tb.cat.Forward(clean))
	}
	if dir != "forward" {
		res["backward"] = titled(tb.cat.Backlinks(clean))
	}
	b, _ := json.Marshal(res)
	return string(b), nil
}

// Overview is the tree's domains and topics for a system prompt (the
// paper injects such a listing, up to 200 lines, for ambient awareness),
// within the filters.
func (tb *Toolbox) Overview() string {
	n, err := tb.cat.Outline(api.TreeParams{Depth: 2})
	if err != nil {
		return "(empty: no entries yet)"
	}
	return renderTree(tb.prune(n), prompt.ListMaxLines)
}
