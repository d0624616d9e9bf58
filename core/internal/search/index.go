package search

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/gcpause"
	"github.com/arbormem/arbor/core/internal/pathtab"
	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/index"
	"github.com/blugelabs/bluge/index/mergeplan"
	bsearch "github.com/blugelabs/bluge/search"
)

// Doc is one indexed document: an entry or a context.md.
type Doc struct {
	Path    string // unique id, relative path like "engineering/billing/invoice_retry_policy.md"
	Kind    string // "entry" or "context"; empty means "entry"
	Title   string // the title, boosted ×3 by default
	Summary string // a short summary, searchable and preferred for excerpts on ties
	Content string // full plain text body
	// Aside is text the entry carries as context rather than states: the
	// conversation a remark replies to, the other party's turns of a chat
	// transcript. It is searchable at AsideBoost, so that what an entry
	// says outranks what it merely quotes.
	Aside    string
	Tags     []string // curated tags, boosted ×2 by default
	Keywords []string // curated keywords, boosted ×2 by default
	// Date is when the document last changed (an entry's updatedAt, else
	// createdAt); zero when it has none. Only filters read it.
	Date time.Time
}

// Hit is one ranked result: what crosses the ABI (api.Hit) and what the
// engine's rerankers read besides.
type Hit struct {
	api.Hit
	Raw     float64  // the raw BM25 score s (Score is ŝ = s/(1+s))
	Matched []string // the query terms (analyzed, as in Result.Terms) this doc matches, at least in part (a compound's part, a CJK run's bigram)
	// AllTerms: the document came from the AND pass (it matches every
	// query term), not from the OR pass that fills the slots left.
	AllTerms bool
}

// Result is the answer to one Search.
type Result struct {
	Hits  []Hit    // at most limit hits, best first; ties by path ascending
	Total int      // number of matching docs in the widest pass that produced the hits
	Terms []string // analyzed query terms, in query order, without duplicates
	// Unmatched lists the significant query terms (≥ 4 characters in the
	// query, ≥ 2 for CJK) that match no document at all, exactly or as a
	// prefix expansion (fuzzy matches do not count): out-of-domain signal.
	Unmatched []string
	Mode      string // ModeAnd, ModeFill or ModeOr: which passes produced the hits
}

// Search modes reported in Result.Mode.
const (
	ModeAnd = "and" // every query term matched (the first pass)
	ModeOr  = "or"  // fallback: any query term matched
	// ModeFill: the documents matching every term first, then documents
	// matching some of them in the slots left.
	ModeFill = "and+or"
)

// DefaultLimit is the number of hits Search returns when limit ≤ 0.
const DefaultLimit = 10

// ErrClosed is returned by the methods of a closed Index.
var ErrClosed = errors.New("search: index is closed")

// Options tunes ranking. The zero value means the documented defaults.
type Options struct {
	TitleBoost   float64 // boost of Doc.Title; default 3
	PathBoost    float64 // boost of the path words (split on / _ - ., ".md" dropped); default 1.5
	SummaryBoost float64 // boost of Doc.Summary; default 1
	ContentBoost float64 // boost of Doc.Content; default 1
	AsideBoost   float64 // boost of Doc.Aside; default 0.5
	TagBoost     float64 // boost of Doc.Tags; default 2
	KeywordBoost float64 // boost of Doc.Keywords; default 2

	// PrefixBoost multiplies the field boost of the prefix expansions of the
	// last query word (search as you type); default 0.4, negative disables.
	PrefixBoost float64
	// FuzzyBoost multiplies the field boost of the expansions within one
	// edit of a long query word; default 0.3, negative disables.
	FuzzyBoost float64
	// PrefixMinLen is the length in characters the last query word needs
	// for prefix matching; default 3.
	PrefixMinLen int
	// FuzzyMinLen is the length in characters a query word needs for fuzzy
	// matching (its stem must also have at least 4 bytes); default 5.
	FuzzyMinLen int
	// MaxExpansions caps the prefix or fuzzy expansions of one term in one
	// field (shortest first); default 16.
	MaxExpansions int

	// ExcerptLen is the maximum length of Hit.Excerpt in characters;
	// default 240.
	ExcerptLen int

	// K1 is BM25's term-frequency saturation; default 1.2.
	K1 float64
	// B is BM25's length normalization; default 0.75, negative means 0.
	B float64

	// The switches below turn mechanisms off for the ablation of the
	// retrieval benchmark (internal/ablation, read by engine.Open); their
	// zero values keep every mechanism on.

	// KeepScaffolding searches question scaffolding ("how many times",
	// "can you tell me") as terms (scaffold.go).
	KeepScaffolding bool
	// AsideInContent indexes Doc.Aside as content. Documents are not
	// analysed again when an index is reopened, so an index stored under
	// one setting must not be opened under the other.
	AsideInContent bool

	// Progress, when not nil, is told how many of the documents a Put
	// indexes are done: 0 before the first batch, then after each. (A
	// Syncer reports to the function it is given.)
	Progress func(done, total int)
	// Merged, when not nil, is told how many of the documents the merges
	// of a save's upkeep (upkeep.go) take in are done: 0 before the first
	// merge of a round of them, then after each.
	Merged func(done, total int)
}

// withDefaults returns o with its zero values replaced by the defaults.
func (o Options) withDefaults() Options {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.TitleBoost, 3)
	def(&o.PathBoost, 1.5)
	def(&o.SummaryBoost, 1)
	def(&o.ContentBoost, 1)
	def(&o.AsideBoost, 0.5)
	def(&o.TagBoost, 2)
	def(&o.KeywordBoost, 2)
	def(&o.PrefixBoost, 0.4)
	def(&o.FuzzyBoost, 0.3)
	defInt(&o.PrefixMinLen, 3)
	defInt(&o.FuzzyMinLen, 5)
	defInt(&o.MaxExpansions, 16)
	defInt(&o.ExcerptLen, 240)
	def(&o.K1, 1.2)
	def(&o.B, 0.75)
	if o.B < 0 {
		o.B = 0
	}
	return o
}

// The searchable fields, in a fixed order (fieldStats and lengths use it).
const (
	fTitle = iota
	fPath
	fSummary
	fContent
	fTags
	fKeywords
	fAside
	numFields
)

var fieldNames = [numFields]string{"title", "path", "summary", "content", "tags", "keywords", "aside"}

// kindField is the stored (and indexed, as a keyword) Doc.Kind.
const kindField = "kind"

// listSep joins Tags and Keywords into one field value.
const listSep = "\n"

// Index is a full-text index of documents. Its methods are safe for
// concurrent use; Search calls run in parallel, writes are serialized.
type Index struct {
	opts   Options
	boosts [numFields]float64

	cfg    config
	mu     sync.RWMutex
	writer *index.Writer
	reader *index.Snapshot // after the last write
	closed bool
	warmed bool // reader's dictionaries are loaded (warm)

	// docs holds every live document's bookkeeping, by path, each in a
	// slot by which a Syncer marks it; stats the totals of its field
	// lengths (BM25, see score.go). gen changes when docs is made again,
	// and with docs.Gen when its slots are given anew: a Syncer's marks
	// survive neither.
	docs  pathtab.Table[docMeta]
	stats [numFields]fieldStats
	gen   uint64
	// digest is the sum of the documents' docDigest. pending, while a
	// stored index's table is not decoded (docs.go), holds what decodes
	// it: docs is empty meanwhile, and stats and digest are the
	// manifest's summary. recount says the summary proved wrong.
	digest  uint64
	pending atomic.Pointer[lazyDocs]
	recount bool

	// Persistence (store.go): the Store (nil for an in-memory index),
	// whether anything changed since the last flush and how many document
	// writes that was.
	store     *storeState
	dirty     bool
	unflushed int
	// reloading serializes reloads (store.go): the calls that meet one
	// lost file reload once.
	reloading sync.Mutex
	// words keeps the expansions of the words questions asked with.
	words wordExpansions
}

// New returns an empty in-memory index.
func New(opts Options) (*Index, error) {
	return open(opts, func() index.Directory { return index.NewInMemoryDirectory() })
}

// open builds an Index over the bluge directory dir makes.
func open(opts Options, dir func() index.Directory) (*Index, error) {
	x := newIndexOf(opts)
	if err := x.start(dir, buildPolicy); err != nil {
		return nil, err
	}
	return x, nil
}

// newIndexOf returns an Index with its options, not open yet (start).
func newIndexOf(opts Options) *Index {
	o := opts.withDefaults()
	return &Index{
		opts: o,
		boosts: [numFields]float64{
			fTitle: o.TitleBoost, fPath: o.PathBoost, fSummary: o.SummaryBoost,
			fContent: o.ContentBoost, fTags: o.TagBoost, fKeywords: o.KeywordBoost,
			fAside: o.AsideBoost,
		},
	}
}

// start opens x's bluge writer and reader over the directory dir makes,
// merging by policy, with empty bookkeeping; Open (store.go) then restores
// it from a manifest. A reload (store.go) starts x again over another
// directory.
func (x *Index) start(dir func() index.Directory, policy mergeplan.Options) error {
	x.newDocs(0)
	sims := make(map[string]bsearch.Similarity, numFields)
	for f, name := range fieldNames {
		sims[name] = &bm25{stats: &x.stats[f], k1: x.opts.K1, b: x.opts.B}
	}
	x.cfg = newConfig(dir, sims, policy)
	return x.restart()
}

// restart opens x's bluge writer and reader over the directory of its
// configuration, as it holds them (a start, or after an upkeep), leaving
// x's bookkeeping as it is.
func (x *Index) restart() error {
	w, err := index.OpenWriter(x.cfg.index)
	if err != nil {
		return fmt.Errorf("search: open index writer: %w", err)
	}
	r, err := w.Reader()
	if err != nil {
		_ = w.Close()
		return fmt.Errorf("search: open index reader: %w", err)
	}
	x.writer, x.reader, x.warmed = w, r, false
	return nil
}

// stop closes x's bluge reader and writer.
func (x *Index) stop() error {
	var errs []error
	if x.reader != nil {
		if err := x.reader.Close(); err != nil {
			errs = append(errs, fmt.Errorf("search: close reader: %w", err))
		}
	}
	if x.writer != nil {
		if err := x.writer.Close(); err != nil {
			errs = append(errs, fmt.Errorf("search: close writer: %w", err))
		}
	}
	x.reader, x.writer = nil, nil
	return errors.Join(errs...)
}

// Put adds or replaces documents (by Path), in batches of about
// maxBatchBytes of text. When a path occurs more than once, the last
// occurrence wins. An error leaves the batches before it applied.
func (x *Index) Put(docs ...Doc) error {
	return x.retry(func() error { return x.put(docs, nil, nil, true) })
}

// put is Put with the documents' hashes when the caller has them already,
// and the keys of their sources (Sync) when it knows them; report tells
// Options.Progress of the batches (a Syncer reports its own).
func (x *Index) put(docs []Doc, hashes, keys []string, report bool) error {
	if len(docs) == 0 {
		return nil
	}
	last := make(map[string]int, len(docs))
	for i, d := range docs {
		if d.Path == "" {
			return fmt.Errorf("search: put: document %d has an empty path", i)
		}
		if n := docBytes(d); n > maxFieldBytes {
			return fmt.Errorf("search: put: %s: %d bytes of text, more than the %d a document can hold", d.Path, n, maxFieldBytes)
		}
		last[d.Path] = i
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	if err := x.docsWritable(); err != nil {
		return err
	}
	type pending struct {
		path      string
		hash, key string
		fields    [numFields]*textField
	}
	var ps []pending
	batch, size := bluge.NewBatch(), 0
	total, done := len(last), 0
	progress := func() {
		if report && x.opts.Progress != nil {
			x.opts.Progress(done, total)
		}
	}
	apply := func() error {
		if len(ps) == 0 {
			return nil
		}
		if err := x.writer.Batch(batch); err != nil {
			return fmt.Errorf("search: put %d documents: %w", len(ps), err)
		}
		// bluge analyzed the fields before Batch returned: their lengths are set.
		for _, p := range ps {
			var l [numFields]int32
			for f, tf := range p.fields {
				if tf != nil {
					l[f] = int32(tf.Length())
				}
			}
			// A document put without its source's key is known by its content
			// hash only, until a Sync gives the key again.
			x.setDoc(p.path, docMeta{lens: l, hash: p.hash, key: p.key}, true)
			x.store.touch(p.path)
		}
		x.dirty = true
		x.unflushed += len(ps)
		done += len(ps)
		progress()
		batch, size, ps = bluge.NewBatch(), 0, nil
		// What indexing keeps grows the heap: past the pacing an open held,
		// the collector's own comes back at once.
		gcpause.Settle()
		return nil
	}
	progress()
	for i, d := range docs {
		if last[d.Path] != i {
			continue
		}
		if n := docBytes(d); size > 0 && size+n > maxBatchBytes {
			if err := apply(); err != nil {
				return errors.Join(err, x.refresh())
			}
		}
		if x.opts.AsideInContent && d.Aside != "" {
			d.Content, d.Aside = d.Content+"\n\n"+d.Aside, ""
		}
		doc, fields := document(d)
		batch.Update(bluge.Identifier(d.Path), doc)
		size += docBytes(d)
		h, k := "", ""
		if hashes != nil {
			h = hashes[i]
		} else {
			h = docHash(d)
		}
		if keys != nil {
			k = keys[i]
		}
		ps = append(ps, pending{d.Path, h, k, fields})
	}
	if err := apply(); err != nil {
		return errors.Join(err, x.refresh())
	}
	return x.refresh()
}

// docBytes is the size of the text of d that the index analyzes.
func docBytes(d Doc) int {
	n := len(d.Path) + len(d.Title) + len(d.Summary) + len(d.Content) + len(d.Aside)
	for _, t := range d.Tags {
		n += len(t)
	}
	for _, k := range d.Keywords {
		n += len(k)
	}
	return n
}

// Delete removes documents by path; unknown paths are ignored.
func (x *Index) Delete(paths ...string) error {
	return x.retry(func() error { return x.delete(paths) })
}

func (x *Index) delete(paths []string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	if err := x.docsWritable(); err != nil {
		return err
	}
	batch := bluge.NewBatch()
	n := 0
	for _, p := range paths {
		if _, ok := x.docs.Slot(p); ok {
			batch.Delete(bluge.Identifier(p))
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if err := x.writer.Batch(batch); err != nil {
		return fmt.Errorf("search: delete %d documents: %w", n, err)
	}
	for _, p := range paths {
		if _, ok := x.docs.Slot(p); ok {
			x.store.touch(p)
		}
		x.setDoc(p, docMeta{}, false)
	}
	// Here, where no Syncer holds marks (a Sync deletes last), the slots
	// of documents deleted since are given back.
	if x.docs.Dead() > max(x.docs.Len(), 1024) {
		x.docs.Compact()
	}
	x.dirty = true
	x.unflushed += n
	return x.refresh()
}

// Count returns the number of documents in the index.
func (x *Index) Count() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.docCount()
}

// Close flushes a stored index (a failure is logged as a warning: the tree
// still holds everything, and the next open rebuilds what the stored index
// lacks) and releases the index. Further calls return ErrClosed; closing
// twice is a no-op.
func (x *Index) Close() error {
	err := x.retry(func() error {
		x.mu.Lock()
		defer x.mu.Unlock()
		if x.closed {
			return nil
		}
		return x.flush()
	})
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	if err != nil && x.store != nil {
		x.store.warn(fmt.Sprintf("search index %s: not saved: %v", x.store.Dir, err))
	}
	x.closed = true
	err = x.stop()
	x.reap() // merges that ended while the writer closed
	return err
}

// Abandon releases the index without saving it: an open that failed half
// way leaves the stored index as it was.
func (x *Index) Abandon() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	x.closed = true
	return x.stop()
}

// Flush writes a stored index's changes to its Store, after merging the
// segments that call for it (upkeep.go); it does nothing for an in-memory
// index, a read-only Store, or when nothing changed since the last flush
// and no segment called for a merge.
func (x *Index) Flush() error {
	return x.retry(func() error {
		x.mu.Lock()
		defer x.mu.Unlock()
		if x.closed {
			return ErrClosed
		}
		return x.flush()
	})
}

func (x *Index) flush() error {
	if x.store == nil || x.store.ReadOnly {
		return nil
	}
	// The writer's flush is when its segments are kept up (upkeep.go), even
	// when nothing else changed: an index no process writes to would keep
	// what an earlier version left for good.
	switch changed, err := x.upkeep(); {
	case err != nil && x.lossOf() != nil:
		return err // the caller's retry reloads the index
	case err != nil:
		x.store.warn(fmt.Sprintf("search index %s: merge segments: %v; saved as they are", x.store.Dir, err))
	case changed:
		x.dirty = true
	}
	if !x.dirty {
		return nil
	}
	if err := x.docsWritable(); err != nil {
		return fmt.Errorf("search: flush %s: %w", x.store.Dir, err)
	}
	if err := x.store.save(&x.docs, docSummary{digest: x.digest, stats: x.stats}); err != nil {
		return fmt.Errorf("search: flush %s: %w", x.store.Dir, err)
	}
	x.dirty, x.unflushed = false, 0
	x.reap()
	return nil
}

// Unflushed is the number of documents written or deleted since the last
// flush (or since Open).
func (x *Index) Unflushed() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.unflushed
}

// Source is one document given to Sync, named by what it is made from so
// that an unchanged document need not even be built.
type Source struct {
	Path string
	// Key identifies everything the document is made from (for a file of
	// the tree: its bytes and the code that derives the document from
	// them): a source whose Key is the one stored for Path gives the
	// document already indexed. "" means no key: the document is built and
	// compared by content.
	Key string
	// Doc builds the document of Path, which it is given (one function can
	// serve every source: an open gives one per file of the tree, and a
	// function per source was an allocation each). Its Path must be Path.
	// Sync calls it only when Key is not the one stored for Path.
	Doc func(path string) Doc
	// Kept says that the caller found the source as it was when Key was
	// made (a file whose stamp the catalog holds), and that Doc builds
	// its document anew whenever called: a Syncer may hold the source
	// back and call Doc later.
	Kept bool
}

// Sync makes the index hold exactly the documents of srcs (by Path, the
// last occurrence winning). A document is kept as it is when its source's
// key is the one stored with it, or else when the built document has the
// same content hash (its new key is then stored); new and changed
// documents are analyzed in batches, others are deleted.
func (x *Index) Sync(srcs []Source) (api.IndexStats, error) {
	s := x.NewSyncer(nil)
	for _, src := range srcs {
		if err := s.Add(src); err != nil {
			return s.st, err
		}
	}
	return s.Done()
}

// Syncer is a Sync given its sources one at a time, as a tree is read:
// documents are built and indexed in batches of about maxBatchBytes of
// text as they come, so that neither the documents nor what they are made
// from pile up, and the memory of a cold build does not grow with the
// tree.
type Syncer struct {
	x        *Index
	progress func(indexed int)
	// The documents the index held that were added are marked by their
	// slot in seen, as of the index's gen and its docs' Gen; the paths
	// added that it did not hold are in fresh. Marks rather than a set of
	// every path: the set cost two map operations per document (hashed in
	// software under WebAssembly) and 13 MB at 300,000. next is the slot
	// after the last one added: sources come in about path order, the
	// order of the slots of a restored index (pathtab.Table.Find).
	seen   pathtab.Marks
	gen    uint64
	next   uint32
	fresh  map[string]struct{}
	st     api.IndexStats
	rekey  map[uint32]string
	batch  []Doc
	hashes []string
	keys   []string
	size   int
	// While the index's table is pending (docs.go) and every source so far
	// was found unchanged by its caller (Source.Kept), the sources are
	// held back, with the sum of their docDigest: equal to the index's
	// digest and count at Done, they are the documents it holds, and
	// nothing is decoded or compared. The first other source, or
	// unequal sums, releases them to Add.
	holding bool
	held    []Source
	heldSum uint64
	holdFor int // the index's documents: the room held gets at its first source
}

// NewSyncer starts a Sync; progress, when not nil, is told how many
// documents were indexed so far after each batch.
func (x *Index) NewSyncer(progress func(indexed int)) *Syncer {
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := &Syncer{x: x, progress: progress, gen: x.gen, fresh: map[string]struct{}{}, rekey: map[uint32]string{}}
	if l := x.pending.Load(); l != nil {
		s.holding, s.holdFor = true, l.n
	} else {
		s.seen = pathtab.NewMarks(x.docs.Slots(), x.docs.Gen())
	}
	return s
}

// release ends the holding back of sources: the index's table decoded,
// the sources held are given to Add.
func (s *Syncer) release() error {
	s.holding = false
	x := s.x
	x.mu.RLock()
	err := x.docsReady()
	if err == nil {
		s.seen = pathtab.NewMarks(x.docs.Slots(), x.docs.Gen())
	}
	x.mu.RUnlock()
	if err != nil {
		return err
	}
	held := s.held
	s.held = nil
	for _, src := range held {
		if err := s.Add(src); err != nil {
			return err
		}
	}
	return nil
}

// current reports whether the Syncer's marks still name x's documents;
// x.mu is held.
func (s *Syncer) current() bool { return s.x.gen == s.gen && s.x.docs.Gen() == s.seen.Gen() }

// Add gives the Syncer one source. A path added again replaces what was
// added before.
func (s *Syncer) Add(src Source) error {
	if s.holding {
		if src.Kept && src.Key != "" {
			if s.held == nil {
				s.held = make([]Source, 0, s.holdFor)
			}
			s.held = append(s.held, src)
			s.heldSum += docDigest(src.Path, src.Key)
			return nil
		}
		if err := s.release(); err != nil {
			return err
		}
	}
	x := s.x
	x.mu.RLock()
	i, ok := x.docs.Find(src.Path, s.next)
	var m docMeta
	if ok {
		m = *x.docs.At(i)
		s.next = i + 1
	}
	same := ok && src.Key != "" && m.key == src.Key
	if ok && s.current() {
		// A document replaced keeps its slot (setDoc): the mark stays.
		s.seen.Mark(i)
	}
	x.mu.RUnlock()
	if !ok {
		s.fresh[src.Path] = struct{}{}
	}
	if same {
		s.st.Reused++
		return nil
	}
	d := src.Doc(src.Path)
	if d.Path != src.Path {
		return fmt.Errorf("search: sync: the source of %q built a document for %q", src.Path, d.Path)
	}
	dh := docHash(d)
	if ok && dh == m.hash {
		s.st.Reused++
		if src.Key != "" {
			s.rekey[i] = src.Key
		}
		return nil
	}
	s.batch = append(s.batch, d)
	s.hashes = append(s.hashes, dh)
	s.keys = append(s.keys, src.Key)
	if s.size += docBytes(d); s.size >= maxBatchBytes {
		return s.put()
	}
	return nil
}

// put indexes the pending batch.
func (s *Syncer) put() error {
	if len(s.batch) == 0 {
		return nil
	}
	if err := s.x.put(s.batch, s.hashes, s.keys, false); err != nil {
		return errors.Join(err, s.x.lossOf())
	}
	if err := s.x.lossOf(); err != nil {
		return err
	}
	s.st.Indexed += len(s.batch)
	s.batch, s.hashes, s.keys, s.size = nil, nil, nil, 0
	if s.progress != nil {
		s.progress(s.st.Indexed)
	}
	return nil
}

// Done indexes what is pending, stores the new keys of unchanged
// documents and deletes the documents of paths never added.
func (s *Syncer) Done() (api.IndexStats, error) {
	if s.holding {
		x := s.x
		x.mu.RLock()
		l := x.pending.Load()
		same := l != nil && x.gen == s.gen && len(s.held) == l.n && s.heldSum == x.digest
		x.mu.RUnlock()
		if same {
			s.st.Reused += len(s.held)
			s.holding, s.held = false, nil
			return s.st, nil
		}
		if err := s.release(); err != nil {
			return s.st, err
		}
	}
	if err := s.put(); err != nil {
		return s.st, err
	}
	x := s.x
	var del []string
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return s.st, ErrClosed
	}
	if !s.current() {
		// Reloaded (store.go) or renumbered meanwhile: which documents
		// were added is no longer known, and deleting by guess could
		// drop what the tree holds.
		x.mu.Unlock()
		return s.st, errors.New("search: sync: the index was reloaded during the sync")
	}
	for i, k := range s.rekey {
		if x.docs.Live(i) {
			m, p := x.docs.At(i), x.docs.Path(i)
			x.digest += docDigest(p, k) - docDigest(p, m.key)
			m.key = k
			x.store.touch(p)
		}
	}
	if len(s.rekey) > 0 {
		// Persisting the keys spares the next open building these documents.
		x.dirty = true
	}
	for p, i := range x.docs.All() {
		if s.seen.Marked(i) {
			continue
		}
		if _, ok := s.fresh[p]; !ok {
			del = append(del, p)
		}
	}
	x.mu.Unlock()
	sort.Strings(del)
	if err := x.delete(del); err != nil {
		return s.st, errors.Join(err, x.lossOf())
	}
	if err := x.lossOf(); err != nil {
		return s.st, err
	}
	s.st.Removed = len(del)
	return s.st, nil
}

// docMeta is what the index keeps of a live document: its field lengths,
// the hash of its content and the key of the Source it was synced from
// (see Sync; empty after a Put).
type docMeta struct {
	hash, key string
	lens      [numFields]int32
}

// newDocs empties the bookkeeping of documents, making room for n.
func (x *Index) newDocs(n int) {
	x.docs = pathtab.Make[docMeta](n)
	x.stats = [numFields]fieldStats{}
	x.digest, x.recount = 0, false
	x.pending.Store(nil)
	x.gen++
}

// setDoc replaces the bookkeeping of one document (removes it if !live).
// A document replaced keeps its slot.
func (x *Index) setDoc(path string, m docMeta, live bool) {
	old, had := x.docs.Get(path)
	if had {
		countLens(&x.stats, old.lens, -1)
		x.digest -= docDigest(path, old.key)
	}
	switch {
	case !live:
		x.docs.Remove(path)
	default:
		x.docs.Put(path, m)
		countLens(&x.stats, m.lens, 1)
		x.digest += docDigest(path, m.key)
	}
}

// countLens adds (sign 1) or removes (-1) a document's field lengths to
// the totals stats.
func countLens(stats *[numFields]fieldStats, lens [numFields]int32, sign int) {
	for f, n := range lens {
		if n > 0 {
			stats[f].docs += sign
			stats[f].sum += sign * int(n)
		}
	}
}

// refresh replaces the reader by a snapshot of the writer's current state.
func (x *Index) refresh() error {
	r, err := x.writer.Reader()
	if err != nil {
		return fmt.Errorf("search: refresh reader: %w", err)
	}
	old := x.reader
	x.reader, x.warmed = r, false
	if err := old.Close(); err != nil {
		return fmt.Errorf("search: close previous reader: %w", err)
	}
	x.reap()
	return nil
}

// warm loads the term dictionary of every field in every segment of the
// reader, once per reader, before queries read it. ice (v1.0.0,
// Segment.dictionary) reads a segment's dictionary at its first use while
// holding the segment's lock, and a read that fails (a stored segment's
// file removed by another process: ErrSegmentLost) returns without
// releasing it: the next query of that segment would wait forever,
// holding the index's read lock, and the reload that answers the loss
// would wait for that. Loaded here under the write lock, where no query
// runs, a dictionary is cached for every later use: no query reads under
// a segment's lock. A failed read is the index's loss as any other (the
// caller's retry reloads). Queries use every searchable field, so this
// loads nothing the first query would not but the keyword fields of
// filters (filter.go), which are small beside the text.
func (x *Index) warm() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.warmed || x.closed {
		return nil
	}
	// A segment whose read failed may hold its lock: once a loss is known,
	// nothing reads this reader's dictionaries again (a reload replaces it).
	if f := x.filesLocked(); f != nil && f.lost.Load() {
		err, _ := f.loss()
		return err
	}
	for _, f := range append(fieldNames[:], filterFields...) {
		if _, err := x.reader.DictionaryLookup(f); err != nil {
			return fmt.Errorf("search: load the dictionary of %s: %w", f, err)
		}
	}
	x.warmed = true
	return nil
}

// reap removes the segment files this index spilled and bluge has since
// merged away, which no manifest ever named, once its reader no longer
// reads them; once the index is closed (no reader), every spilled file
// no manifest named. Called with x.mu held for writing: no query reads an
// older reader.
func (x *Index) reap() {
	if x.store == nil || x.store.dir == nil {
		return
	}
	var live map[uint64]bool // nil: closed
	if x.reader != nil {
		live = map[uint64]bool{}
		for _, seg := range x.reader.Segments() {
			live[seg.ID()] = true
		}
	}
	for _, name := range x.store.dir.unread(live) {
		if err := x.store.FS.Remove(path.Join(x.store.Dir, name)); err != nil && !errors.Is(err, host.ErrNotFound) {
			// Left for the grace period of a later save (retire).
			x.store.warn(fmt.Sprintf("search index %s: remove merged segment: %v", x.store.Dir, err))
		}
	}
}

// document converts a Doc into a bluge document, returning its searchable
// fields (nil when empty) so that Put can read their analyzed lengths.
func document(d Doc) (*bluge.Document, [numFields]*textField) {
	kind := d.Kind
	if kind == "" {
		kind = "entry"
	}
	doc := bluge.NewDocument(d.Path)
	doc.AddField(bluge.NewKeywordField(kindField, kind).StoreValue())
	filterTerms(doc, d)
	var texts [numFields]string
	texts[fTitle] = d.Title
	texts[fPath] = pathText(d.Path)
	texts[fSummary] = d.Summary
	texts[fContent] = d.Content
	texts[fTags] = strings.Join(d.Tags, listSep)
	texts[fKeywords] = strings.Join(d.Keywords, listSep)
	texts[fAside] = d.Aside
	var fields [numFields]*textField
	for f, text := range texts {
		if strings.TrimSpace(text) == "" {
			continue
		}
		// The path is stored as the document id.
		tf := newTextField(fieldNames[f], text, f != fPath)
		doc.AddField(tf)
		fields[f] = tf
	}
	return doc, fields
}

// pathText is the searchable text of a path: the path without a ".md"
// extension; analysis splits it into words on / _ - and dots.
func pathText(p string) string {
	if len(p) >= 3 && strings.EqualFold(p[len(p)-3:], ".md") {
		return p[:len(p)-3]
	}
	return p
}
