// Package retrieve answers questions from a memory in tiers (docs/ABI.md
// §4.4 and §6.4): the exact and fuzzy caches (tiers 0 and 1), a direct
// answer from the index (tier 2), then, when the host can reach a model,
// one grounded call over the best entries (tier 3) and an agentic loop
// over the tree (tier 4). Between search and the answer, evidence rules
// (time, named authors, siblings and openers, own words, piece length,
// replied-to) rescore the pool of best matches, and the lifecycle orders
// what is kept.
//
// The package reads the tree (catalog and index) and records accesses in
// the lifecycle signals; it never writes an entry.
package retrieve

import (
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/agent"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/prompt"
	"github.com/arbormem/arbor/core/internal/search"
	"github.com/arbormem/arbor/core/internal/vectors"
)

// Retriever answers queries over one open tree. Not safe for concurrent
// use: the engine serves one call at a time.
type Retriever struct {
	index   *search.Index
	catalog *catalog.Catalog
	signals *catalog.Signals
	fs      host.FS
	clock   host.Clock
	log     host.Logger
	loops   *agent.Loops
	cache   *queryCache
	vectors *vectors.Store // nil: embeddings off (fuse.go)
	off     Off
	own     ownCache // what entries say themselves (ownwords.go)
	// gen counts the changes to the tree, so that a query that waited on a
	// model knows whether the tree changed under it.
	gen uint64
}

// Config is what a Retriever answers from.
type Config struct {
	Index   *search.Index
	Catalog *catalog.Catalog
	Signals *catalog.Signals
	// FS reads the entries tier 3 shows the model.
	FS    host.FS
	Clock host.Clock
	Log   host.Logger
	// Loops run tiers 3 and 4.
	Loops *agent.Loops
	// Vectors are the embedding vectors of the tree's files, fused with
	// BM25's matches (fuse.go); nil leaves embeddings off.
	Vectors *vectors.Store
	// Off switches mechanisms off, for the ablation of the retrieval
	// benchmark (internal/ablation, read by engine.Open); the zero value
	// keeps every one on.
	Off Off
}

// Off names the mechanisms of this package a Retriever leaves off.
type Off struct {
	TimeWindow    bool // entries dated within the time a question names are not raised (dated)
	DurationWords bool // words asking for a duration stay in the search (withoutFraming)
	NamedAuthors  bool // authors
	Siblings      bool // the episode evidence of siblings
	Openers       bool // the openers of siblings
	OwnWords      bool // ownWords
	PieceLength   bool // pieceLength
	RepliedTo     bool // replied
	FuzzyCache    bool // tier 1
}

// New returns a Retriever over c.
func New(c Config) *Retriever {
	return &Retriever{index: c.Index, catalog: c.Catalog, signals: c.Signals, fs: c.FS, clock: c.Clock, log: c.Log, loops: c.Loops, vectors: c.Vectors, cache: newQueryCache(!c.Off.FuzzyCache), off: c.Off, own: ownCache{budget: ownBudget}}
}

// Changed tells the Retriever that the tree changed: any write may change
// any answer, so the cached ones go, and an answer a model is still working
// out will not be cached (see gen).
func (rv *Retriever) Changed() {
	rv.cache.clear()
	rv.gen++
}

// tools are the read-only tools of a query's model over the live tree,
// within what the query's filters keep.
func (rv *Retriever) tools(sc search.Scope) *agent.Toolbox {
	tb := agent.NewToolbox(rv.index, rv.catalog, rv.fs, prompt.QueryTools())
	if !sc.Filter.IsZero() {
		tb.Within(sc.Filter, func(path string) bool { return rv.admits(sc, path) })
	}
	return tb
}
