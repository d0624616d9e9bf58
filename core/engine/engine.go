// Package engine is Arbor's façade: it opens a memory root through the host
// file interface (core/host), answers every method of docs/ABI.md with the
// contract's types (core/api), and keeps the catalog, the search index, the
// lifecycle signals and the query cache in step with every write. The work
// itself lives in the packages under core/internal: curate (the
// operations), retrieve (the tiers of a query), agent (calls that wait on a
// model), curatefrom, ingest, catalog (the loaded tree and its signals) and
// search (the index). Every host (native Go, wasm under wazero, Node, the
// browser) reaches the engine through Session.Call, so they all share one
// JSON contract. It must not touch the OS directly.
package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/agent"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/curate"
	"github.com/arbormem/arbor/core/internal/curatefrom"
	"github.com/arbormem/arbor/core/internal/ingest"
	"github.com/arbormem/arbor/core/internal/retrieve"
	"github.com/arbormem/arbor/core/internal/search"
	"github.com/arbormem/arbor/core/internal/tree"
	"github.com/arbormem/arbor/core/internal/vectors"
)

// IndexDir is where the search index persists itself (docs/ABI.md §4.10).
const IndexDir = ".arbor/index"

// FlushAfter is the number of documents curate may change before it
// persists the index itself: a bulk curate is persisted as it goes, so a
// process that never flushes or closes leaves the next open at most this
// many documents to re-analyze, while a small curate does no index I/O.
const FlushAfter = 100

// Options configure Open. Only FS is required; every other field has the
// default its comment gives.
type Options struct {
	FS     host.FS     // the memory root
	Clock  host.Clock  // default host.SystemClock
	Logger host.Logger // default host.NopLogger
	// MaxFileBytes bounds the files the engine reads and writes; 0 means
	// api.DefaultMaxFileBytes (1 MiB).
	MaxFileBytes int
	// Lifecycle is the lifecycle model; nil means
	// api.DefaultLifecycleModel().
	Lifecycle *api.LifecycleModel
	// FlushAfter and FlushInterval batch the writes of state.json: 0 means
	// api.DefaultFlushAfter and api.DefaultFlushInterval; a negative
	// interval turns the time-based write off.
	FlushAfter    int
	FlushInterval time.Duration
	// LLM tunes the calls that talk to a model (docs/ABI.md §6.5); zero
	// fields keep their defaults.
	LLM api.LLMOptions
	// ReadOnly opens the root under a read-only grant (docs/sandbox.md):
	// nothing is written, not even .arbor/; the index and the lifecycle
	// signals live in memory. Ingest and CurateFrom are refused with
	// api.CodeReadOnly, and every operation of Curate fails with
	// host.ErrReadOnly (Session refuses the whole "curate" call).
	ReadOnly bool
	// Embedder is the host's embedding model (docs/ABI.md §2.3); nil, or
	// one naming no model, leaves embeddings off and every answer as BM25
	// and the evidence rules give it.
	Embedder host.Embedder
}

// Engine is an open memory root. Its methods are not safe for concurrent
// use: hosts serialize calls (the ABI is strictly sequential).
type Engine struct {
	fs        *host.Shared
	clock     host.Clock
	log       host.Logger
	maxBytes  int
	catalog   *catalog.Catalog
	index     *search.Index
	signals   *catalog.Signals
	curator   *curate.Curator
	loops     *agent.Loops
	retriever *retrieve.Retriever
	vectors   *vectors.Store // nil: embeddings off
	warnings  []api.Warning
	synced    api.IndexStats  // how the open brought the index in step
	pending   []curate.Change // committed by the current curate, not yet indexed
	readOnly  bool
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
	fsys := opts.FS
	if opts.ReadOnly {
		// Every write below is meant to be skipped; one that is not fails
		// here instead of reaching the tree. It is no Locker either: the
		// root's lock is a file, and the engine writes nothing.
		fsys = host.ReadOnly(fsys)
	}
	e := &Engine{fs: host.Share(fsys), clock: opts.Clock, log: opts.Logger, maxBytes: opts.MaxFileBytes, readOnly: opts.ReadOnly}
	if e.clock == nil {
		e.clock = host.SystemClock{}
	}
	if e.log == nil {
		e.log = host.NopLogger{}
	}
	if e.maxBytes <= 0 {
		e.maxBytes = api.DefaultMaxFileBytes
	}
	// Opening writes (the index, the ignore rules, a corrupt state file
	// kept aside): it runs alone on the root like every write.
	var res api.OpenResult
	if err := e.fs.Exclusive(func() (err error) {
		res, err = e.open(opts, false)
		if errors.Is(err, search.ErrSegmentLost) {
			// A file the manifest names is damaged or was removed by hand:
			// no process removes one another may still read (search/store.go).
			e.log.Log("warn", fmt.Sprintf("index: %v; rebuilding it from the tree", err))
			e.warnings = nil
			res, err = e.open(opts, true)
		}
		return err
	}); err != nil {
		return nil, api.OpenResult{}, fmt.Errorf("engine: open: %w", err)
	}
	return e, res, nil
}

// open is Open holding the root's lock; fresh ignores the persisted index.
func (e *Engine) open(opts Options, fresh bool) (api.OpenResult, error) {
	// The listing may begin before the walk does: a host lists the walk's
	// first answers ahead while the index and the catalog are restored
	// (docs/ABI.md §2). Its start is taken now, before either, so that a
	// file time within the catalog's two seconds of slack of the listing
	// still proves nothing.
	listed := time.UnixMilli(host.FileTime(e.fs))
	// Restoring the index and the catalog, and comparing the listing with
	// them, allocates about what the open keeps: the collector waits until
	// the open reads a file (a changed one, or one whose document the index
	// lacks), from which what it allocates grows with what changed. An
	// open that read nothing resumes it with what it allocated held.
	resume := pauseGC()
	defer resume(false)
	sopts := search.Options{Progress: host.Reporter(e.log, api.PhaseIndex), Merged: host.Reporter(e.log, api.PhaseMerge)}
	var off retrieve.Off
	ablate(&sopts, &off)
	idx, err := search.Open(sopts, search.Store{FS: e.fs, Dir: IndexDir, Logger: e.log, ReadOnly: e.readOnly, Fresh: fresh, Sources: e.indexSources})
	if err != nil {
		return api.OpenResult{}, err
	}
	e.index = idx
	// A read-only engine leaves the journal of an operation a killed
	// process left to the next writable open, which records it.
	if !e.readOnly {
		e.ignoreState()
		// An operation a killed process left half-recorded is logged first,
		// as the files show it, before the tree is read.
		if msg, err := (&curate.Curator{FS: e.fs, Clock: e.clock}).Recover(); err != nil {
			e.warn([]api.Warning{{Kind: api.WarnInterrupted, Path: curate.JournalPath, Message: err.Error()}})
		} else if msg != "" {
			e.warn([]api.Warning{{Kind: api.WarnInterrupted, Path: curate.JournalPath, Message: msg}})
		}
	}
	// The persisted catalog spares reading the files it shows unchanged;
	// one that cannot be trusted is left aside and the tree read whole.
	prev, err := catalog.Restore(e.fs, e.maxBytes)
	if err != nil && !errors.Is(err, catalog.ErrNoCatalog) {
		path, msg := api.CatalogFile, err.Error()
		if fe := (*catalog.FileError)(nil); errors.As(err, &fe) {
			path, msg = fe.File, fe.Err.Error()
		}
		e.warn([]api.Warning{{Kind: api.WarnState, Path: path, Message: msg + "; the catalog is read again from the tree"}})
	}
	// The tree is read and indexed in one pass: a file's document is built
	// and indexed, in batches, while what it is made from is at hand, so
	// that a cold build holds no more of the tree than a batch.
	var indexed func(int)
	if p := host.Reporter(e.log, api.PhaseIndex); p != nil {
		indexed = func(n int) { p(n, 0) }
	}
	sync := idx.NewSyncer(indexed)
	o := catalog.ReloadOptions{Prev: prev, Now: listed, Source: func(s search.Source) error {
		if err := sync.Add(s); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		return nil
	}}
	read := host.Reporter(e.log, api.PhaseRead)
	o.Read = func(n int) {
		resume(false)
		if read != nil {
			read(n, 0)
		}
	}
	cat, warnings, err := catalog.Reload(e.fs, e.maxBytes, o)
	resume(err == nil)
	if err != nil {
		idx.Abandon() // nothing half-synced is saved
		return api.OpenResult{}, err
	}
	e.catalog = cat
	e.warn(warnings)
	synced, err := sync.Done()
	if err != nil {
		idx.Abandon()
		return api.OpenResult{}, fmt.Errorf("index: %w", err)
	}
	// The catalog is saved with the index (flush, close), not here: an
	// open writes nothing it need not, so that a storage refusing writes
	// (a full quota) can still be opened.
	model := api.DefaultLifecycleModel()
	if opts.Lifecycle != nil {
		model = *opts.Lifecycle
	}
	e.signals, warnings = catalog.OpenSignals(e.fs, e.clock, e.log, cat, catalog.SignalOptions{Model: model, FlushAfter: opts.FlushAfter, FlushEvery: opts.FlushInterval, ReadOnly: e.readOnly})
	e.warn(warnings)
	e.curator = &curate.Curator{FS: e.fs, Clock: e.clock, Catalog: cat, MaxFileBytes: e.maxBytes, OnChange: e.onChange, Log: e.log, Progress: host.Reporter(e.log, api.PhaseWrite), Versions: &curate.Versions{}}
	e.loops = agent.NewLoops(e.clock, e.log, opts.LLM)
	var embedded *api.EmbeddingsInfo
	if e.vectors = vectors.Open(vectors.Options{FS: e.fs, Log: e.log, Embedder: opts.Embedder, ReadOnly: e.readOnly}); e.vectors != nil {
		rep := e.vectors.Sync(cat.IndexSources)
		embedded = e.vectors.Info(rep)
		// Saved at once, unlike the index: vectors cost a model call each,
		// and a process that never flushes would pay them again.
		if err := e.vectors.Save(); err != nil {
			e.log.Log("warn", err.Error())
		}
	}
	e.retriever = retrieve.New(retrieve.Config{Index: idx, Catalog: cat, Signals: e.signals, FS: e.fs, Clock: e.clock, Log: e.log, Loops: e.loops, Vectors: e.vectors, Off: off})
	e.synced = synced
	res := api.OpenResult{Entries: cat.Len(), Contexts: len(cat.ContextPaths()), Warnings: e.currentWarnings(), Index: synced, Embeddings: embedded}
	e.log.Log("info", fmt.Sprintf("opened %d entries, %d context files, %d warnings; index: %d reused, %d indexed, %d removed",
		res.Entries, res.Contexts, len(res.Warnings), synced.Reused, synced.Indexed, synced.Removed))
	return res, nil
}

// indexSources gives the index the sources of the tree as the catalog
// holds it (catalog.Catalog.IndexSources), when it finds a file of the
// persisted index gone (search.Store.Sources).
func (e *Engine) indexSources(add func(search.Source) error) error {
	if e.catalog == nil {
		return errors.New("the tree is not read yet")
	}
	return e.catalog.IndexSources(add)
}

// saveCatalog persists the catalog when it changed since it was persisted
// (catalog.Catalog.Save), unless the engine is read-only. The caller holds
// the root's lock. A failure is logged: the catalog is a cache, and the
// next open reads what it lacks from the tree.
func (e *Engine) saveCatalog() {
	if e.readOnly || !e.catalog.Unsaved() {
		return
	}
	if err := e.catalog.Save(e.fs); err != nil {
		e.log.Log("warn", unsaved("catalog", err))
	}
}

// ignoreState writes api.IgnoreFile when it is missing, so that a tree
// kept in git stays clean whatever the engine writes in .arbor/. A
// failure is logged: the tree itself is unaffected.
func (e *Engine) ignoreState() {
	if _, err := e.fs.Stat(api.IgnoreFile); err == nil {
		return
	}
	if err := e.fs.WriteFile(api.IgnoreFile, []byte(api.IgnoreRules)); err != nil {
		e.log.Log("warn", fmt.Sprintf("write %s: %v", api.IgnoreFile, err))
	}
}

// warn records and logs files the engine could not use.
func (e *Engine) warn(ws []api.Warning) {
	for _, w := range ws {
		e.warnings = append(e.warnings, w)
		e.log.Log("warn", w.Path+": "+w.Message)
	}
}

// onChange records a committed change; curate indexes them together.
func (e *Engine) onChange(ch curate.Change) {
	e.pending = append(e.pending, ch)
}

// Curate applies operations in order (docs/ABI.md §4.2), then brings the
// index and the query cache in step with the tree in one index batch: a
// batch per operation would make bluge build and merge a segment for each.
func (e *Engine) Curate(p api.CurateParams) api.CurateResult {
	return e.curate(p.Operations).API()
}

// curate is Curate with the outcomes the callers inside the engine read.
func (e *Engine) curate(ops []api.Operation) curate.Result {
	var res curate.Result
	err := e.fs.Exclusive(func() error {
		res = e.curator.Apply(ops)
		e.curated(res)
		e.reindex()
		return nil
	})
	if err != nil {
		return curate.Refuse(ops, err)
	}
	return res
}

// curated brings the lifecycle signals in step with the successful
// operations of a curate call, in order: ADD starts an entry fresh, an
// update adds its bonus, a MERGE carries the source's signal into the
// target, a MOVE carries each moved entry's to its new path, and removed
// entries lose theirs.
func (e *Engine) curated(res curate.Result) {
	for _, a := range res.Applied {
		if a.Status != api.StatusSuccess {
			continue
		}
		switch {
		case a.Created:
			e.signals.Created(a.Path)
		case a.Type == api.OpUpdate || a.Type == api.OpUpsert:
			e.signals.Updated(a.Path)
		case a.Type == api.OpMerge:
			e.signals.Merged(a.Path, a.Target)
		case a.Type == api.OpDelete:
			e.signals.Deleted(a.Path)
		case a.Type == api.OpMove:
			for _, from := range slices.Sorted(maps.Keys(a.Moved)) {
				e.signals.Moved(from, a.Moved[from])
			}
		}
	}
}

// reindex applies the pending changes to the index, the last change of a
// path winning.
func (e *Engine) reindex() {
	if len(e.pending) == 0 {
		return
	}
	e.retriever.Changed()
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
			e.retriever.Removed(p)
		case ch.Entry != nil:
			put = append(put, catalog.EntryDoc(ch.Entry))
			e.retriever.Indexed(ch.Entry)
		case ch.Context != nil:
			put = append(put, catalog.ContextDoc(ch.Context))
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
	if e.vectors != nil {
		// Written files are embedded now; a failure leaves them to BM25
		// until the next write or open, and never fails the write.
		e.vectors.Sync(e.catalog.IndexSources)
	}
	if e.index.Unflushed() >= FlushAfter {
		if err := e.index.Flush(); err != nil {
			e.log.Log("warn", unsaved("index", err))
		}
		e.saveCatalog()
		e.saveVectors()
	}
}

// saveVectors persists the vectors when they changed (vectors.Store.Save),
// unless the engine is read-only. The caller holds the root's lock. A
// failure is logged: the vectors are a cache, made again when lost.
func (e *Engine) saveVectors() {
	if e.readOnly {
		return
	}
	if err := e.vectors.Save(); err != nil {
		e.log.Log("warn", err.Error())
	}
}

// Writable refuses method, which writes to the tree, when the engine is
// open read-only: an *api.Error with api.CodeReadOnly naming the grant.
func (e *Engine) Writable(method string) error {
	if !e.readOnly {
		return nil
	}
	return api.Errorf(api.CodeReadOnly, "%s: the memory is open read-only (the host granted no writes): nothing was written", method)
}

// Search returns ranked results, without the tiers of Query.
func (e *Engine) Search(p api.SearchParams) (api.SearchResult, error) {
	start := time.Now()
	limit, err := p.Check(10)
	if err != nil {
		return api.SearchResult{}, err
	}
	sc, err := e.retriever.Scope(p.Filters)
	if err != nil {
		return api.SearchResult{}, err
	}
	r, err := e.index.SearchIn(p.Query, limit, sc)
	if err != nil {
		return api.SearchResult{}, fmt.Errorf("search %q: %w", p.Query, err)
	}
	hits := make([]api.Hit, len(r.Hits))
	for i, h := range r.Hits {
		hits[i] = h.Hit
	}
	return api.SearchResult{Query: p.Query, Results: hits, Total: r.Total, TookMs: api.TookMs(start)}, nil
}

// Query runs the tiers that need no model (docs/ABI.md §4.4): the exact
// and fuzzy caches, then a direct answer from the index; otherwise it
// returns the best results and says that a synthesized answer would need a
// model.
func (e *Engine) Query(p api.SearchParams) (api.QueryResult, error) { return e.retriever.Query(p) }

// QueryLLM runs every tier (docs/ABI.md §6.4). Tiers 0–2 answer as Query
// does; when they cannot and p.LLM is set, it returns an api.Pending, and
// the final api.QueryResult comes from Resume.
func (e *Engine) QueryLLM(p api.QueryParams) (any, error) { return e.retriever.QueryLLM(p) }

// CurateFrom turns raw material into entries through a model (docs/ABI.md
// §6.6): it returns an api.Pending, and the final api.CurateFromResult
// comes from Resume. Nothing reaches the tree before the loop ends.
func (e *Engine) CurateFrom(p api.CurateFromParams) (any, error) {
	if err := e.Writable("curateFrom"); err != nil {
		return nil, err
	}
	return curatefrom.Start(curatefrom.Config{FS: e.fs, Clock: e.clock, Catalog: e.catalog, Index: e.index, MaxFileBytes: e.maxBytes,
		Loops: e.loops, Apply: func(ops []api.Operation) api.CurateResult { return e.curate(ops).API() }}, p)
}

// Resume continues a call waiting on a model with the model's answer or
// the host's error; the result is the next api.Pending or the call's final
// result.
func (e *Engine) Resume(p api.ResumeParams) (any, error) { return e.loops.Resume(p) }

// Cancel abandons a call waiting on a model: nothing it staged reaches the
// tree.
func (e *Engine) Cancel(p api.CancelParams) (api.CancelResult, error) { return e.loops.Cancel(p) }

// Ingest splits files into entries and writes them through curate
// (docs/ABI.md §4.11); an unchanged file writes nothing.
func (e *Engine) Ingest(p api.IngestParams) (res api.IngestResult, err error) {
	if err := e.Writable("ingest"); err != nil {
		return api.IngestResult{}, err
	}
	// One lock for the whole run: the manifest it reads at the start is
	// the one it writes back, with another process's records in it.
	lerr := e.fs.Exclusive(func() error {
		res, err = ingest.Run(e.fs, e.log, e.catalog, e.curate, p)
		return nil
	})
	if lerr != nil {
		return api.IngestResult{}, lerr
	}
	return res, err
}

// Read returns one entry or context file with its relations.
func (e *Engine) Read(p api.ReadParams) (api.ReadResult, error) {
	clean, err := e.locate(p.Path)
	if err != nil {
		return api.ReadResult{}, err
	}
	ctx, isContext := e.catalog.Context(clean)
	en, isEntry := e.catalog.Get(clean)
	if !isContext && !isEntry {
		return api.ReadResult{}, e.missing(clean)
	}
	data, err := e.fs.ReadFile(clean)
	if err != nil {
		return api.ReadResult{}, fmt.Errorf("read %s: %w", clean, err)
	}
	res := api.ReadResult{Path: clean, Markdown: string(data), Version: tree.Version(data), Tags: []string{}, Keywords: []string{}, Relations: []string{}, Backlinks: []string{}}
	if isContext {
		res.Kind, res.Title = "context", ctx.Title
		return res, nil
	}
	res.Kind, res.Title, res.Summary = "entry", en.Title, en.Summary
	if read, err := tree.ParseEntry(clean, data); err == nil {
		// What an operation made from this version may replace (curate's
		// checkBase): the entry as read, not as the catalog last held it.
		e.curator.Versions.Put(res.Version, read)
	}
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
	e.signals.Access(clean)
	return res, nil
}

// locate cleans a path from outside and, when it names no file the
// catalog knows, finds the entry it spells differently, as curate does
// (docs/format.md, "Paths").
func (e *Engine) locate(p string) (string, error) {
	clean, err := api.CleanPath(p)
	if err != nil {
		return "", err
	}
	if _, known := e.catalog.Stamp(clean); !known && tree.IsEntryPath(clean) {
		if clean, err = e.curator.Locate(clean); err != nil {
			return "", api.Errorf(api.CodeNotFound, "%v", err)
		}
	}
	return clean, nil
}

// missing is the error for a located path that holds no entry (or
// context file) the engine can read: a file it cannot parse, a folder, or
// nothing.
func (e *Engine) missing(clean string) error {
	if berr, broken := e.catalog.Broken(clean); broken {
		return api.Errorf(api.CodeMalformed, "%s cannot be parsed (the file is left as it is): %v", clean, berr)
	}
	if e.catalog.HasFolder(clean) {
		return api.Errorf(api.CodeNotFound, "%s is a folder, not an entry: list it with \"tree\"", clean)
	}
	return api.Errorf(api.CodeNotFound, "no entry %s", clean)
}

// Tree returns the hierarchy below a folder, depth-limited when Depth > 0.
func (e *Engine) Tree(p api.TreeParams) (*api.Node, error) { return e.catalog.Outline(p) }

// Stats counts the tree.
func (e *Engine) Stats() api.StatsResult {
	s := e.counts()
	for p := range e.catalog.Unsorted() {
		s.Relations += len(e.catalog.Forward(p))
	}
	return s
}

// counts is Stats without the relations, which resolving every entry's
// links makes the costly part: "status" shows no relations.
func (e *Engine) counts() api.StatsResult {
	s := api.StatsResult{Domains: map[string]int{}, Warnings: e.currentWarnings()}
	for p := range e.catalog.Unsorted() {
		s.Entries++
		domain, _, _ := strings.Cut(p, "/")
		if !strings.Contains(p, "/") {
			domain = "(root)"
		}
		s.Domains[domain]++
	}
	s.Contexts = len(e.catalog.ContextPaths())
	s.Maturity = e.signals.Maturity()
	return s
}

// currentWarnings are the warnings of the open and, as the tree holds them
// now, the files a merge left in conflict (an UPDATE resolves one, a sync
// brings one): never nil.
func (e *Engine) currentWarnings() []api.Warning {
	ws := append([]api.Warning{}, e.warnings...)
	for _, p := range e.catalog.Conflicts() {
		ws = append(ws, api.Warning{Kind: api.WarnConflict, Path: p,
			Message: "a merge kept both versions of what two sides changed differently, in its \"" + tree.ConflictHeading + "\" section: resolve it with an UPDATE of the entry (or edit the file and delete the section)"})
	}
	return ws
}

// Flush writes what the engine holds in memory: the search index's changes
// to IndexDir and the lifecycle signals to state.json. Curate persists the
// index by itself only past FlushAfter changed documents, since the tree is
// written at once and is the source of truth: an index persisted late only
// costs the next Open the re-analysis of what changed.
func (e *Engine) Flush() (res api.FlushResult, err error) {
	if lerr := e.fs.Exclusive(func() error {
		res, err = e.flush()
		return nil
	}); lerr != nil {
		return res, fmt.Errorf("engine: flush: %w", lerr)
	}
	return res, err
}

func (e *Engine) flush() (api.FlushResult, error) {
	ierr := e.index.Flush()
	if errors.Is(ierr, host.ErrNoSpace) {
		ierr = fmt.Errorf("index not saved, the disk is full (the answers stand; the next open reads from the tree what it lacks): %w", ierr)
	} else if ierr != nil {
		ierr = fmt.Errorf("index: %w", ierr)
	}
	e.saveCatalog()
	e.saveVectors()
	res, serr := e.signals.Flush()
	if err := errors.Join(ierr, serr); err != nil {
		return res, fmt.Errorf("engine: flush: %w", err)
	}
	return res, nil
}

// Close writes pending lifecycle signals, then persists the search index
// and releases it (an index that cannot be saved is logged, not returned:
// the next Open rebuilds it from the tree; so are signals a full disk
// refused).
func (e *Engine) Close() error {
	e.loops.Drop()
	var ferr, cerr error
	lerr := e.fs.Exclusive(func() error {
		_, ferr = e.signals.Flush()
		cerr = e.index.Close()
		e.saveCatalog()
		e.saveVectors()
		return nil
	})
	if lerr != nil {
		// Nothing could be saved; the index is released all the same.
		cerr = errors.Join(lerr, e.index.Close())
	}
	if errors.Is(ferr, host.ErrNoSpace) {
		// The signals counted since the last save (reads, mostly) are
		// lost, not the tree: the command that read asked for nothing
		// that failed, and says so as the index's save does.
		e.log.Log("warn", unsaved("lifecycle signals", ferr))
		ferr = nil
	}
	if err := errors.Join(ferr, cerr); err != nil {
		return fmt.Errorf("engine: close: %w", err)
	}
	return nil
}
