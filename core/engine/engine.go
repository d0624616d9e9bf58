// Package engine is Arbor's façade: it opens a memory root through the host
// file interface, keeps the catalog and the search index in step with every
// curate operation, and answers queries. Every host (native Go, wasm under
// wazero, Node, the browser) reaches the engine through Call, so they all
// share one JSON contract (docs/ABI.md). It must not touch the OS directly.
package engine

import (
	"errors"
	"fmt"
	"hash/fnv"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/atoms"
	"github.com/arbormem/arbor/core/internal/curate"
	"github.com/arbormem/arbor/core/internal/search"
	"github.com/arbormem/arbor/core/internal/tree"
)

// IndexDir is where the search index persists itself (docs/ABI.md §4.9).
const IndexDir = ".arbor/index"

// FlushAfter is the number of documents curate may change before it
// persists the index itself: a bulk curate is persisted as it goes, so a
// process that never flushes or closes leaves the next open at most this
// many documents to re-analyze, while a small curate does no index I/O.
const FlushAfter = 100

// Options configure Open.
type Options struct {
	FS           host.FS     // the memory root; required
	Clock        host.Clock  // default host.SystemClock
	Logger       host.Logger // default host.NopLogger
	MaxFileBytes int         // default DefaultMaxFileBytes
	// Lifecycle is the model of DESIGN §4; nil means api.DefaultLifecycleModel().
	Lifecycle *api.LifecycleModel
	// FlushAfter and FlushInterval batch the writes of state.json: see
	// DefaultFlushAfter and DefaultFlushInterval (0 means those; a negative
	// interval turns the time-based write off).
	FlushAfter    int
	FlushInterval time.Duration
	// LLM tunes the calls that talk to a model (docs/ABI.md §6).
	LLM api.LLMOptions
}

// Engine is an open memory root. Its methods are not safe for concurrent
// use: hosts serialize calls (the ABI is strictly sequential).
type Engine struct {
	fs       host.FS
	clock    host.Clock
	log      host.Logger
	maxBytes int
	catalog  *tree.Catalog
	own      map[string]ownCached // by path: what pieces of an exchange say themselves (ownwords.go)
	index    *search.Index
	curator  *curate.Curator
	cache    *queryCache
	signals  *signals
	warnings []api.Warning
	pending  []curate.Change // committed by the current Curate, not yet indexed
	llmOpts  api.LLMOptions
	conts    continuations // calls waiting on a model
	// gen counts the writes to the tree, so a call that waited on a model
	// knows whether the tree changed under it.
	gen uint64
}

// Open reads the whole tree through the host and brings the persisted
// search index in step with it, analyzing only new and changed files (all
// of them when there is no usable persisted index). Files that cannot be
// used are reported in OpenResult.Warnings and left untouched.
func Open(opts Options) (*Engine, api.OpenResult, error) {
	if opts.FS == nil {
		return nil, api.OpenResult{}, errors.New("engine: open: no file system")
	}
	if err := opts.LLM.Validate(); err != nil {
		return nil, api.OpenResult{}, err
	}
	e := &Engine{fs: opts.FS, clock: opts.Clock, log: opts.Logger, maxBytes: opts.MaxFileBytes, catalog: tree.NewCatalog(), cache: newQueryCache(), llmOpts: opts.LLM.WithDefaults()}
	if e.clock == nil {
		e.clock = host.SystemClock{}
	}
	if e.log == nil {
		e.log = host.NopLogger{}
	}
	if e.maxBytes <= 0 {
		e.maxBytes = api.DefaultMaxFileBytes
	}
	idx, err := search.Open(search.Options{}, search.Store{FS: e.fs, Dir: IndexDir, Logger: e.log})
	if err != nil {
		return nil, api.OpenResult{}, fmt.Errorf("engine: open: %w", err)
	}
	e.index = idx
	var srcs []search.Source
	if err := e.walk("", &srcs); err != nil {
		idx.Close()
		return nil, api.OpenResult{}, fmt.Errorf("engine: open: %w", err)
	}
	synced, err := idx.Sync(srcs)
	if err != nil {
		idx.Close()
		return nil, api.OpenResult{}, fmt.Errorf("engine: open: index: %w", err)
	}
	e.loadSignals(opts)
	e.curator = &curate.Curator{FS: e.fs, Clock: e.clock, Catalog: e.catalog, MaxFileBytes: e.maxBytes, OnChange: e.onChange}
	res := api.OpenResult{Entries: len(e.catalog.Paths()), Contexts: len(e.catalog.ContextPaths()), Warnings: e.warnings, Index: synced}
	if res.Warnings == nil {
		res.Warnings = []api.Warning{}
	}
	e.log.Log("info", fmt.Sprintf("opened %d entries, %d context files, %d warnings; index: %d reused, %d indexed, %d removed",
		res.Entries, res.Contexts, len(res.Warnings), synced.Reused, synced.Indexed, synced.Removed))
	return e, res, nil
}

// walk loads every markdown file below dir. Dot-names (.arbor, .git,
// .obsidian) are skipped: they are tooling, not knowledge.
func (e *Engine) walk(dir string, srcs *[]search.Source) error {
	list, err := e.fs.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list %q: %w", dir, err)
	}
	for _, de := range list {
		if strings.HasPrefix(de.Name, ".") {
			continue
		}
		p := de.Name
		if dir != "" {
			p = dir + "/" + de.Name
		}
		if de.IsDir {
			if err := e.walk(p, srcs); err != nil {
				return err
			}
			continue
		}
		if !strings.HasSuffix(strings.ToLower(de.Name), ".md") {
			continue
		}
		if de.Size > int64(e.maxBytes) {
			e.warn(p, fmt.Sprintf("skipped: %d bytes is over the %d-byte limit", de.Size, e.maxBytes))
			continue
		}
		data, err := e.fs.ReadFile(p)
		if err != nil {
			e.warn(p, fmt.Sprintf("unreadable: %v", err))
			continue
		}
		if src, ok := e.load(p, data); ok {
			*srcs = append(*srcs, src)
		}
	}
	return nil
}

// load parses one file into the catalog and returns the source of its
// search document, keyed by the file's bytes (sourceKey): the index builds
// the document only when the file changed since it was indexed.
func (e *Engine) load(p string, data []byte) (search.Source, bool) {
	if path.Base(p) == "context.md" {
		ctx, err := tree.ParseContext(p, data)
		if err != nil {
			e.catalog.MarkBroken(p, err)
			e.warn(p, err.Error())
			return search.Source{}, false
		}
		e.catalog.PutContext(ctx)
		return search.Source{Path: p, Key: sourceKey(data), Doc: func() search.Doc { return contextDoc(ctx) }}, true
	}
	en, err := tree.ParseEntry(p, data)
	if err != nil {
		e.catalog.MarkBroken(p, err)
		e.warn(p, err.Error())
		return search.Source{}, false
	}
	e.catalog.Put(en)
	return search.Source{Path: p, Key: sourceKey(data), Doc: func() search.Doc { return entryDoc(en) }}, true
}

// docVersion is part of every source key: raise it when the documents made
// from files change in a way docFingerprint's probes do not show, so that
// the next open builds every document again and re-indexes those that
// changed.
const docVersion = 1

// sourceKey is the key of a file's search document (search.Source): a hash
// of the file's bytes and of the code that makes documents from files
// (docVersion, docFingerprint). A path's document is a function of these
// alone, so an equal key means an unchanged document.
func sourceKey(data []byte) string {
	h := fnv.New64a()
	h.Write([]byte(docFingerprint()))
	h.Write(data)
	return strconv.FormatUint(h.Sum64(), 16)
}

// docProbes are files whose documents fingerprint the code that makes
// documents: front matter, every section, markup, wikilinks, a chat
// transcript and a context.md.
var docProbes = []struct{ path, text string }{
	{"eng/billing/retry_policy.md", "---\ntitle: Retry Policy\nsummary: retried **three** times\ntags: [billing, E-mail]\n" +
		"keywords: retry, invoices\nrelated: [eng/billing/dunning.md]\nstatus: draft\ncreatedAt: 2026-01-10T09:00:00Z\n---\n" +
		"# Retry Policy\n\nSee [[dunning#Emails|the emails]] and ![[chart.png]].\n\n## Reason\nWhy **we** wrote it.\n\n" +
		"## Raw Concept\n**Task:** map the [[retry]] flow\n**Files:** a.go, b.go\n**Flow:** fail -> retry\n**Author:** Ann\n\n" +
		"## Narrative\nUser: how often?\n\nAssistant: **three** times, then escalate.\n\nUser: thanks\n\n" +
		"### Rules\n#### Detail\nRetry at 24 h.\n### Structure\n- one\n\n## Facts\n- **retries**: three [policy]\n- plain fact\n\n" +
		"## Snippets\n```go\nretry(3)\n```\n\n## Relations\n- @eng/billing/dunning.md\n\n## Notes ##\n価値観 가치관 café\r\n"},
	{"eng/notes.md", "# Plain note\n\nNo front matter, a [[link]] and text.\n"},
	{"eng/billing/context.md", "---\ntitle: Billing\n---\n\n# Billing\n\nInvoices and **payments**.\n"},
}

var docFP struct {
	sync.Once
	fp string
}

// probeDoc is the document load makes of a file.
func probeDoc(p, text string) (search.Doc, error) {
	if path.Base(p) == "context.md" {
		ctx, err := tree.ParseContext(p, []byte(text))
		if err != nil {
			return search.Doc{}, err
		}
		return contextDoc(ctx), nil
	}
	en, err := tree.ParseEntry(p, []byte(text))
	if err != nil {
		return search.Doc{}, err
	}
	return entryDoc(en), nil
}

// docFingerprint hashes docVersion and the documents load makes of
// docProbes, so that a change to parsing or to entryDoc that shows in them
// changes every source key.
func docFingerprint() string {
	docFP.Do(func() {
		h := fnv.New128a()
		fmt.Fprintf(h, "version %d\n", docVersion)
		for _, p := range docProbes {
			d, err := probeDoc(p.path, p.text)
			fmt.Fprintf(h, "%#v %v\n", d, err)
		}
		docFP.fp = fmt.Sprintf("%x", h.Sum(nil))
	})
	return docFP.fp
}

func (e *Engine) warn(p, msg string) {
	e.warnings = append(e.warnings, api.Warning{Path: p, Message: msg})
	e.log.Log("warn", p+": "+msg)
}

// entryDoc is the index document of an entry. In a chat transcript
// narrative, the assistant's turns are indexed as an aside: the memory is
// what the person said, and long assistant answers would otherwise outweigh
// it (bench/retrieval/REPORT.md).
func entryDoc(en *tree.Entry) search.Doc {
	d := search.Doc{Path: en.Path, Kind: "entry", Title: en.Title, Summary: en.Summary, Tags: en.Tags, Keywords: en.Keywords}
	said, assistant := atoms.Split(en.Narrative.Text)
	if assistant == nil {
		d.Content = en.Text()
		return d
	}
	own := *en
	own.Narrative.Text = joinTurns(said, "**")
	d.Content = own.Text()
	d.Aside = strings.ReplaceAll(joinTurns(assistant, ""), "**", "")
	return d
}

// joinTurns writes turns back as a transcript, labels marked with mark.
func joinTurns(ts []atoms.Turn, mark string) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Text
		if t.Speaker != "" {
			parts[i] = mark + t.Speaker + ":" + mark + " " + t.Text
		}
	}
	return strings.Join(parts, "\n\n")
}

func contextDoc(c *tree.Context) search.Doc {
	return search.Doc{Path: c.Path, Kind: "context", Title: c.Title, Content: c.Body}
}

// onChange records a committed change; Curate indexes them together.
func (e *Engine) onChange(ch curate.Change) {
	e.pending = append(e.pending, ch)
}

// Curate applies operations in order (DESIGN §3), then brings the index and
// the query cache in step with the tree in one index batch: a batch per
// operation would make bluge build and merge a segment for each.
func (e *Engine) Curate(p api.CurateParams) api.CurateResult {
	return e.curate(p.Operations).API()
}

// curate is Curate with the outcomes the callers inside the engine read.
func (e *Engine) curate(ops []api.Operation) curate.Result {
	res := e.curator.Apply(ops)
	e.curated(res)
	e.reindex()
	return res
}

// reindex applies the pending changes to the index, the last change of a
// path winning.
func (e *Engine) reindex() {
	if len(e.pending) == 0 {
		return
	}
	// Any write may change any answer: cached ones from the older tree go,
	// and a model answer still being worked out is not cached (see gen).
	e.cache.clear()
	e.gen++
	last := map[string]curate.Change{}
	var order []string
	for _, ch := range e.pending {
		if _, seen := last[ch.Path]; !seen {
			order = append(order, ch.Path)
		}
		last[ch.Path] = ch
	}
	e.pending = e.pending[:0]
	var put []search.Doc
	var del []string
	for _, p := range order {
		switch ch := last[p]; {
		case ch.Removed:
			del = append(del, p)
		case ch.Entry != nil:
			put = append(put, entryDoc(ch.Entry))
		case ch.Context != nil:
			put = append(put, contextDoc(ch.Context))
		}
	}
	// The tree is the source of truth; a stale index entry is logged and
	// repaired by the next open.
	if err := e.index.Delete(del...); err != nil {
		e.log.Log("error", fmt.Sprintf("index: delete %v: %v", del, err))
	}
	if err := e.index.Put(put...); err != nil {
		e.log.Log("error", fmt.Sprintf("index: put %d documents: %v", len(put), err))
	}
	if e.index.Unflushed() >= FlushAfter {
		if err := e.index.Flush(); err != nil {
			e.log.Log("warn", fmt.Sprintf("index: %v", err))
		}
	}
}

// Search returns ranked results.
func (e *Engine) Search(p api.SearchParams) (api.SearchResult, error) {
	start := time.Now()
	limit, err := clampLimit(p.Limit, 10)
	if err != nil {
		return api.SearchResult{}, err
	}
	r, err := e.index.Search(p.Query, limit)
	if err != nil {
		return api.SearchResult{}, fmt.Errorf("search %q: %w", p.Query, err)
	}
	hits := make([]api.Hit, len(r.Hits))
	for i, h := range r.Hits {
		hits[i] = h.Hit
	}
	return api.SearchResult{Query: p.Query, Results: hits, Total: r.Total, TookMs: since(start)}, nil
}

func clampLimit(limit, def int) (int, error) {
	switch {
	case limit == 0:
		return def, nil
	case limit < 0 || limit > 100:
		return 0, errorf(api.CodeInvalidParams, "limit %d: want 1 to 100", limit)
	}
	return limit, nil
}

func since(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}

// Read returns one entry or context file with its relations.
func (e *Engine) Read(p api.ReadParams) (api.ReadResult, error) {
	clean, err := api.CleanPath(p.Path)
	if err != nil {
		return api.ReadResult{}, err
	}
	ctx, isContext := e.catalog.Context(clean)
	en, isEntry := e.catalog.Get(clean)
	if !isContext && !isEntry {
		if berr, broken := e.catalog.Broken(clean); broken {
			return api.ReadResult{}, errorf(api.CodeMalformed, "%s cannot be parsed (the file is left as it is): %v", clean, berr)
		}
		if e.isFolder(clean) {
			return api.ReadResult{}, errorf(api.CodeNotFound, "%s is a folder, not an entry: list it with \"tree\"", clean)
		}
		return api.ReadResult{}, errorf(api.CodeNotFound, "no entry %s", clean)
	}
	data, err := e.fs.ReadFile(clean)
	if err != nil {
		return api.ReadResult{}, fmt.Errorf("read %s: %w", clean, err)
	}
	res := api.ReadResult{Path: clean, Markdown: string(data), Tags: []string{}, Keywords: []string{}, Relations: []string{}, Backlinks: []string{}}
	if isContext {
		res.Kind, res.Title = "context", ctx.Title
		return res, nil
	}
	res.Kind, res.Title, res.Summary = "entry", en.Title, en.Summary
	res.Tags = append(res.Tags, en.Tags...)
	res.Keywords = append(res.Keywords, en.Keywords...)
	if !en.CreatedAt.IsZero() {
		t := en.CreatedAt.UTC()
		res.CreatedAt = &t
	}
	if !en.UpdatedAt.IsZero() {
		t := en.UpdatedAt.UTC()
		res.UpdatedAt = &t
	}
	res.Relations = append(res.Relations, e.catalog.Forward(clean)...)
	res.Backlinks = append(res.Backlinks, e.catalog.Backlinks(clean)...)
	e.access(clean)
	return res, nil
}

// Tree returns the hierarchy below a folder, depth-limited when Depth > 0.
func (e *Engine) Tree(p api.TreeParams) (*api.Node, error) { return buildTree(e.catalog, p) }

// buildTree is Tree over any catalog: a curation's staged view of the tree
// is listed to the model the same way.
func buildTree(cat *tree.Catalog, p api.TreeParams) (*api.Node, error) {
	root := ""
	if p.Path != "" {
		clean, err := api.CleanPath(p.Path)
		if err != nil {
			return nil, err
		}
		root = clean
	}
	nodes := map[string]*api.Node{"": {Name: "", Path: "", Kind: "root"}}
	var folder func(string) *api.Node
	folder = func(dir string) *api.Node {
		if n, ok := nodes[dir]; ok {
			return n
		}
		up := path.Dir(dir)
		if up == "." {
			up = ""
		}
		parent := folder(up)
		n := &api.Node{Name: path.Base(dir), Path: dir, Kind: folderKind(dir)}
		if ctx, ok := cat.Context(dir + "/context.md"); ok {
			n.Title = ctx.Title
		}
		parent.Children = append(parent.Children, n)
		nodes[dir] = n
		return n
	}
	for _, cp := range cat.ContextPaths() {
		if d := path.Dir(cp); d != "." {
			folder(d)
		}
	}
	for _, ep := range cat.Paths() {
		d := path.Dir(ep)
		if d == "." {
			d = ""
		}
		parent := folder(d)
		en, _ := cat.Get(ep)
		parent.Children = append(parent.Children, &api.Node{Name: path.Base(ep), Path: ep, Kind: "entry", Title: en.Title})
	}
	for _, n := range nodes {
		sortNodes(n.Children)
	}
	top, ok := nodes[root]
	if !ok {
		return nil, errorf(api.CodeNotFound, "no folder %s", root)
	}
	if p.Depth > 0 {
		prune(top, p.Depth)
	}
	return top, nil
}

// isFolder reports whether dir holds entries or context files.
func (e *Engine) isFolder(dir string) bool {
	for _, list := range [][]string{e.catalog.Paths(), e.catalog.ContextPaths()} {
		i := sort.SearchStrings(list, dir+"/")
		if i < len(list) && strings.HasPrefix(list[i], dir+"/") {
			return true
		}
	}
	return false
}

func folderKind(dir string) string {
	switch strings.Count(dir, "/") {
	case 0:
		return "domain"
	case 1:
		return "topic"
	case 2:
		return "subtopic"
	}
	return "folder"
}

// sortNodes puts folders before entries, each by name.
func sortNodes(ns []*api.Node) {
	sort.Slice(ns, func(i, j int) bool {
		if (ns[i].Kind == "entry") != (ns[j].Kind == "entry") {
			return ns[j].Kind == "entry"
		}
		return ns[i].Name < ns[j].Name
	})
}

func prune(n *api.Node, depth int) {
	if depth <= 0 {
		n.Children = nil
		return
	}
	for _, c := range n.Children {
		prune(c, depth-1)
	}
}

// Stats counts the tree.
func (e *Engine) Stats() api.StatsResult {
	s := api.StatsResult{Domains: map[string]int{}, Warnings: e.warnings}
	for _, p := range e.catalog.Paths() {
		s.Entries++
		domain, _, _ := strings.Cut(p, "/")
		if !strings.Contains(p, "/") {
			domain = "(root)"
		}
		s.Domains[domain]++
		s.Relations += len(e.catalog.Forward(p))
	}
	s.Contexts = len(e.catalog.ContextPaths())
	s.Maturity = e.maturityCounts()
	if s.Warnings == nil {
		s.Warnings = []api.Warning{}
	}
	return s
}

// Flush writes what the engine holds in memory: the search index's changes
// to IndexDir and the lifecycle signals to state.json. Curate persists the
// index by itself only past FlushAfter changed documents, since the tree is
// written at once and is the source of truth: an index persisted late only
// costs the next Open the re-analysis of what changed.
func (e *Engine) Flush() (api.FlushResult, error) {
	ierr := e.index.Flush()
	if ierr != nil {
		ierr = fmt.Errorf("index: %w", ierr)
	}
	res, serr := e.flushSignals()
	if err := errors.Join(ierr, serr); err != nil {
		return res, fmt.Errorf("engine: flush: %w", err)
	}
	return res, nil
}

// Close writes pending lifecycle signals, then persists the search index
// and releases it (an index that cannot be saved is logged, not returned:
// the next Open rebuilds it from the tree).
func (e *Engine) Close() error {
	e.dropContinuations()
	_, ferr := e.flushSignals()
	if err := e.index.Close(); err != nil {
		return fmt.Errorf("engine: close: %w", errors.Join(ferr, err))
	}
	if ferr != nil {
		return fmt.Errorf("engine: close: %w", ferr)
	}
	return nil
}
