package catalog

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/pathtab"
	"github.com/arbormem/arbor/core/internal/tree"
)

// Catalog is the in-memory view of a whole tree: entries, context files,
// files that failed to parse, and the relation index (forward links and
// backlinks in O(1) per entry). Not safe for concurrent use.
//
// Links are stored raw and resolved when asked, so a link written before
// its target existed resolves as soon as the target is Put, and dangles
// again when it is deleted. A raw link resolves, in order, to: the entry
// with exactly that path; that path + ".md"; the only entry whose path
// matches ignoring case, ".md" and spaces-vs-underscores (links holding a
// "/"); or the only entry with such a base name (links without "/").
// A leading "@", "/" or "./" is ignored. Ambiguous base names resolve to
// nothing. Backlinks stay O(1) per linking entry through a reverse index
// keyed by that normalized form.
type Catalog struct {
	// recs hold what the catalog knows of each path: every entry's card,
	// every stamp, what the listing said of each stamped file. An entry
	// restored from the persisted catalog (Restore) has a card only, until
	// Get reads its file; entries holds the entries parsed so far. Each
	// record has a slot (pathtab.Table), by which a Reload marks the files
	// its listing showed without writing the record again.
	recs      pathtab.Table[rec]
	nStamped  int // the records stamped
	nEntries  int // the records of entries
	nConflict int // the entries whose card says they hold a merge conflict
	// entries caches parsed entries. With files set, it keeps at most
	// maxParsed of them, the oldest parsed leaving first (parsed), so that
	// a tree of a million entries is not held parsed in memory; without
	// files (a catalog built in memory) it holds every entry.
	entries map[string]*tree.Entry
	parsed  []string    // paths in the order they entered entries; may hold some since gone
	files   *fileSource // where Get reads an entry it has no parse of
	// rel indexes the cards' links for Resolve, Forward and Backlinks; nil
	// until one of them is called (relations), since opening needs none
	// of it, then kept in step by putCard and Delete.
	rel      *relations
	contexts map[string]*tree.Context
	broken   map[string]error
	// dirty is set by every change to what Save writes, and cleared by
	// Save: the catalog differs from the persisted one.
	dirty bool
	// saved is what the persisted catalog holds (persist.go): its base,
	// and the paths whose records may differ from the base's.
	saved persisted
	// spell indexes the stamped files and the folders above them by
	// tree.FoldKey, for Spellings; nil until first asked, then kept in step
	// by SetStamp and Forget.
	spell *spellIndex
	// kids are the entry paths of each folder, for Folder; nil until first
	// asked, then kept in step by putCard and Delete. Sets, not sorted
	// lists: a flat folder of a million entries must not cost a sorted
	// insert per write; Folder sorts the one folder it is asked for.
	kids map[string]map[string]struct{}
}

// rec is what the catalog holds of one path. One table of these, rather
// than a map for each field, holds a million paths in 184 MB rather than
// 299 (measured at 64 bytes a rec; the card's time of change, which
// "recent" lists entries by without reading them, made it 72, and the
// change time and inode of seen 88).
type rec struct {
	card  card // when entry: the card of the entry at the path
	stamp string
	// seen is what the listing said of the file when the catalog read
	// it (noted), for the engine's refresh: a file whose listing shows
	// it unchanged is not read again. A write by the engine drops it (the
	// time it got is not known).
	seen FileInfo
	// entry: an entry is at the path. stamped: stamp holds, for a file the
	// catalog read or the engine wrote (an entry, a context file, a broken
	// file), the SourceKey of its bytes, which a write compares with what
	// is on disk before it replaces anything.
	entry, stamped, noted bool
}

// card is what the catalog keeps of every entry, parsed or not: what views
// over the whole tree read (the outline's titles, relations, the
// lifecycle keys that seed signals, an ingested entry's sources). It is
// what the persisted catalog stores of an entry (persist.go). Most entries
// have only a title: the rest is apart, and absent then.
type card struct {
	title   string
	changed int64 // tree.Entry.Changed, Unix seconds; 0 for none
	more    *cardMore
}

// cardMore is what a card holds beyond the title. It never changes once
// made: clones of a catalog share it.
type cardMore struct {
	links     []string        // tree.Entry.Links
	lifecycle []tree.KeyValue // front-matter keys that seed signals (legacySignal)
	sources   []string        // tree.Entry.IngestedFrom
	conflict  bool            // tree.Entry.Conflicted
}

// newCard is the card of an entry with these fields.
func newCard(title string, links []string, lifecycle []tree.KeyValue, sources []string, conflict bool) card {
	cd := card{title: title}
	if len(links)+len(lifecycle)+len(sources) > 0 || conflict {
		cd.more = &cardMore{links: links, lifecycle: lifecycle, sources: sources, conflict: conflict}
	}
	return cd
}

// A card restored from the persisted catalog is decoded at its first use
// (decoded), not by the restore, which steps over it (its record gives its
// length): a query reads the cards of the entries it ranks, not of every
// entry. Until then its title holds the card as the record holds it, and
// more is one of these two, which say whether the entry holds a conflict.
var pendingCard, pendingConflictCard = &cardMore{}, &cardMore{conflict: true}

// pending reports a restored card not yet decoded.
func (cd card) pending() bool { return cd.more == pendingCard || cd.more == pendingConflictCard }

// decoded returns cd with its fields.
func (cd card) decoded() card {
	if !cd.pending() {
		return cd
	}
	return decodeCard(cd.title, cd.more.conflict)
}

func (cd card) conflict() bool { return cd.more != nil && cd.more.conflict }

func (cd card) links() []string {
	if cd = cd.decoded(); cd.more == nil {
		return nil
	}
	return cd.more.links
}

func (cd card) lifecycle() []tree.KeyValue {
	if cd = cd.decoded(); cd.more == nil {
		return nil
	}
	return cd.more.lifecycle
}

func (cd card) sources() []string {
	if cd = cd.decoded(); cd.more == nil {
		return nil
	}
	return cd.more.sources
}

// cardOf is the card of a parsed entry. Its strings are copies: a parsed
// entry's strings point into the text of its whole file (the parser slices
// rather than copies), and a card, kept for every entry of the tree, would
// otherwise keep every file's text in memory: 118 MB at 100,000 entries.
func cardOf(e *tree.Entry) card {
	var lc []tree.KeyValue
	for _, kv := range e.Extra {
		if isLifecycleKey(kv.Key) {
			lc = append(lc, tree.KeyValue{Key: strings.Clone(kv.Key), Value: strings.Clone(kv.Value)})
		}
	}
	cd := newCard(strings.Clone(e.Title), cloneAll(e.Links()), lc, cloneAll(e.IngestedFrom()), e.Conflicted())
	if t := e.Changed(); !t.IsZero() {
		cd.changed = t.Unix()
	}
	return cd
}

// card returns the card of the entry at p, decoded (kept so).
func (c *Catalog) card(p string) (card, bool) {
	i, ok := c.recs.Slot(p)
	if !ok {
		return card{}, false
	}
	r := c.recs.At(i)
	if !r.entry {
		return card{}, false
	}
	r.card = r.card.decoded()
	return r.card, true
}

// setRec stores r at p, or drops p when r holds nothing. A record new
// to the catalog gets its slot.
func (c *Catalog) setRec(p string, r rec) {
	if !r.entry && !r.stamped {
		c.recs.Remove(p)
		return
	}
	c.recs.Put(p, r)
}

// pathsWhere returns the paths whose records satisfy keep, sorted; n of
// them at most.
func (c *Catalog) pathsWhere(n int, keep func(rec) bool) []string {
	out := make([]string, 0, n)
	for p, i := range c.recs.All() {
		if keep(*c.recs.At(i)) {
			out = append(out, p)
		}
	}
	if !c.recs.Sorted() {
		sort.Strings(out)
	}
	return out
}

// cloneAll returns copies of ss in a new slice (nil for none).
func cloneAll(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.Clone(s)
	}
	return out
}

// fileSource is where a catalog restored from its persisted form reads
// the entries it holds a card of.
type fileSource struct {
	fs       host.FS
	maxBytes int
}

// pathSet is a set of paths, sorted. Almost every set holds one path (a
// file's full path or base name is rarely shared): a slice costs a
// fraction of a map, and a catalog holds three sets an entry.
type pathSet []string

// New returns an empty catalog.
func New() *Catalog {
	c := &Catalog{}
	c.init()
	return c
}

// init makes the zero Catalog usable too.
func (c *Catalog) init() { c.initSized(0) }

// initSized makes the catalog ready for about n files: a catalog restored
// whole would otherwise grow each of its maps many times over.
func (c *Catalog) initSized(n int) {
	if c.entries != nil {
		return
	}
	c.recs = pathtab.Make[rec](n)
	c.entries = map[string]*tree.Entry{}
	c.contexts = map[string]*tree.Context{}
	c.broken = map[string]error{}
}

// Clone returns a catalog holding the same entries and context files that
// can change without changing c: a curation that must be undoable works on
// a clone. Entries are shared, not copied: the catalog never changes an
// entry, callers Put a new one.
func (c *Catalog) Clone() *Catalog {
	n := New()
	c.init()
	n.recs = c.recs.Clone()
	n.nStamped, n.nEntries, n.nConflict = c.nStamped, c.nEntries, c.nConflict
	maps.Copy(n.entries, c.entries)
	n.parsed = slices.Clone(c.parsed)
	n.files = c.files
	maps.Copy(n.contexts, c.contexts)
	maps.Copy(n.broken, c.broken)
	if c.rel != nil {
		n.rel = c.rel.clone()
	}
	return n
}

// Put adds or replaces an entry and re-indexes its links. The catalog
// keeps the pointer: after changing an entry, Put it again. A Put path is
// no longer broken.
func (c *Catalog) Put(e *tree.Entry) {
	if e == nil {
		return
	}
	c.init()
	c.putCard(e.Path, cardOf(e))
	c.keep(e)
}

// maxParsed bounds the entries a catalog with files keeps parsed: the
// entries a session works on, not the tree.
const maxParsed = 1024

// keep caches the parsed entry e, dropping the oldest parsed ones beyond
// maxParsed when they can be read again.
func (c *Catalog) keep(e *tree.Entry) {
	if _, ok := c.entries[e.Path]; !ok {
		c.parsed = append(c.parsed, e.Path)
	}
	c.entries[e.Path] = e
	if c.files == nil {
		return
	}
	for len(c.entries) > maxParsed && len(c.parsed) > 0 {
		delete(c.entries, c.parsed[0])
		c.parsed = c.parsed[1:]
	}
	if len(c.parsed) > 2*maxParsed { // paths deleted since: start afresh
		c.parsed = slices.DeleteFunc(c.parsed, func(p string) bool { _, ok := c.entries[p]; return !ok })
		c.parsed = slices.Clip(c.parsed)
	}
}

// putCard adds or replaces the entry at p, known by its card only, and
// indexes its links.
func (c *Catalog) putCard(p string, cd card) {
	c.Delete(p)
	c.touch(p)
	r, _ := c.recs.Get(p)
	r.card, r.entry = cd, true
	c.setRec(p, r)
	c.nEntries++
	if cd.conflict() {
		c.nConflict++
	}
	if c.rel != nil {
		c.rel.add(p, cd.links())
	}
	if c.kids != nil {
		addKid(c.kids, p)
	}
	delete(c.broken, p)
}

// Delete removes an entry and its forward links (its backlinks from others remain, now dangling).
func (c *Catalog) Delete(path string) {
	r, ok := c.recs.Get(path)
	if !ok || !r.entry {
		return
	}
	if c.rel != nil {
		c.rel.remove(path, r.card.links())
	}
	c.touch(path)
	if r.card.conflict() {
		c.nConflict--
	}
	r.card, r.entry = card{}, false
	c.setRec(path, r)
	c.nEntries--
	delete(c.entries, path)
	if c.kids != nil {
		d := parentDir(path)
		delete(c.kids[d], path)
		if len(c.kids[d]) == 0 {
			delete(c.kids, d)
		}
	}
}

// Folder returns the paths of the entries directly in the folder dir
// ("" for the root), sorted: a folder's files in name order, which is the
// order of the pieces ingestion cuts a conversation into
// (session_07/turn_012.md). The first call indexes every entry by folder
// in O(entries); later calls cost the folder's size.
func (c *Catalog) Folder(dir string) []string {
	c.init()
	if c.kids == nil {
		c.kids = map[string]map[string]struct{}{}
		for p, i := range c.recs.All() {
			if c.recs.At(i).entry {
				addKid(c.kids, p)
			}
		}
	}
	out := make([]string, 0, len(c.kids[dir]))
	for p := range c.kids[dir] {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// addKid adds the entry at p to its folder's set.
func addKid(kids map[string]map[string]struct{}, p string) {
	d := parentDir(p)
	if kids[d] == nil {
		kids[d] = map[string]struct{}{}
	}
	kids[d][p] = struct{}{}
}

// Stamp returns the stamp of p: the SourceKey of the bytes the catalog
// last read or wrote there. ok is false when it has none (a file it has
// never seen).
func (c *Catalog) Stamp(p string) (string, bool) {
	r, ok := c.recs.Get(p)
	return r.stamp, ok && r.stamped
}

// SetStamp records the stamp of the bytes at p.
func (c *Catalog) SetStamp(p, stamp string) {
	c.init()
	r, _ := c.recs.Get(p)
	if !r.stamped {
		c.nStamped++
		if c.spell != nil {
			c.spell.add(p, 1)
		}
	}
	r.stamp, r.stamped, r.seen, r.noted = stamp, true, FileInfo{}, false
	c.setRec(p, r)
	c.touch(p)
}

// Forget drops everything the catalog holds of p, whose file is gone: the
// entry, context file or broken file, and its stamp.
func (c *Catalog) Forget(p string) {
	c.Delete(p)
	c.DeleteContext(p)
	c.ClearBroken(p)
	if r, ok := c.recs.Get(p); ok && r.stamped {
		c.nStamped--
		if c.spell != nil {
			c.spell.add(p, -1)
		}
	}
	c.recs.Remove(p)
	c.touch(p)
}

// FileInfo is what a listing says of a file: enough to tell that it has
// not changed without reading it.
type FileInfo struct {
	Size    int64
	ModTime int64 // Unix milliseconds; 0 when the storage has none
	// Change and Ino are host.DirEntry's: a tool that writes a file and
	// sets its modification time back (cp -p, rsync -a, tar x, unzip)
	// leaves its size and time as noted, and a new change time.
	Change int64
	Ino    uint64
}

// InfoOf is what the listing de says of a file.
func InfoOf(de host.DirEntry) FileInfo {
	return FileInfo{Size: de.Size, ModTime: de.ModTime, Change: de.Change, Ino: de.Ino}
}

// latest is the later of the file's two times: the last time it changed,
// whatever a tool set its modification time to.
func (fi FileInfo) latest() int64 { return max(fi.ModTime, fi.Change) }

// Note records what the listing said of the stamped file at p when its
// stamp was taken, the listing having begun at start (Unix milliseconds,
// 0 when unknown). A time not clearly older than start is kept as no time
// (unchanged is then false, and the file is read again at the next look):
// a file changed again within the same tick of a coarse clock, after it
// was read, would show the same size and time ("racy git").
func (c *Catalog) Note(p string, fi FileInfo, start int64) {
	if i, ok := c.recs.Slot(p); ok && c.recs.At(i).stamped {
		if start != 0 && fi.latest() >= start-racySlack {
			fi.ModTime = 0
		}
		if r := c.recs.At(i); !r.noted || r.seen != fi {
			r.seen, r.noted = fi, true
			c.touch(p)
		}
	}
}

// unchanged reports whether a listing showing fi shows the file the
// catalog read: same size, times and inode, when the storage keeps a
// modification time.
func (r rec) unchanged(fi FileInfo) bool { return r.noted && fi.ModTime != 0 && r.seen == fi }

// touch records a change to what the catalog holds of p.
func (c *Catalog) touch(p string) {
	c.dirty = true
	if c.saved.since != nil {
		c.saved.since[p] = struct{}{}
	}
}

// Unsaved reports whether the catalog changed since it was last saved
// (Save) or loaded unchanged from the persisted one (Reload).
func (c *Catalog) Unsaved() bool { return c.dirty }

// Stamped returns every path the catalog holds a stamp for (entries,
// context files, broken files), sorted.
func (c *Catalog) Stamped() []string {
	return c.pathsWhere(c.nStamped, func(r rec) bool { return r.stamped })
}

// Spellings returns the files the catalog knows (entries, context files,
// broken files) and the folders holding them whose path is p's but for
// case and Unicode normalization (tree.FoldKey), p itself included when
// known, sorted. A file is told from a folder by Stamp. Paths that differ
// so are one path to Windows and macOS: the engine creates no such twin
// (docs/format.md, "Paths").
func (c *Catalog) Spellings(p string) []string {
	c.init()
	if c.spell == nil {
		c.spell = &spellIndex{holds: map[string]int{}, odd: map[string]pathSet{}, roles: map[string]int{}}
		for q, i := range c.recs.All() {
			if c.recs.At(i).stamped {
				c.spell.add(q, 1)
			}
		}
	}
	key := tree.FoldKey(p)
	out := slices.Clone(c.spell.odd[key])
	// The one plain spelling of an ASCII key is its lower case.
	if plain := strings.ToLower(key); isPlain(plain) {
		if _, file := c.Stamp(plain); file || c.spell.holds[plain] > 0 {
			i, _ := slices.BinarySearch(out, plain)
			out = slices.Insert(out, i, plain)
		}
	}
	return out
}

// spellIndex is the index of Spellings. Nearly every path is plain (ASCII
// without capitals, as the engine names what it writes), and a plain path
// is the only plain spelling of its key, so only the others are kept by
// key: a tree of 100,000 plain entries costs one count a file to index,
// not a folded copy of every path and folder (which took 570 ms under
// wasm, at the first query or write of every process, when queries asked
// it).
type spellIndex struct {
	// holds counts the known files and folders directly in each folder:
	// a folder is known while it holds one.
	holds map[string]int
	odd   map[string]pathSet // tree.FoldKey → the known paths that are not plain
	// roles counts, for a path that is not plain, whether it is known as a
	// file, a folder or (in a catalog built in memory) both.
	roles map[string]int
}

// add counts a stamped file at p in, or out (delta -1), with the folders
// it makes known or unknown.
func (s *spellIndex) add(p string, delta int) {
	s.note(p, delta)
	for q := p; ; {
		d := parentDir(q)
		if d == "" {
			return
		}
		n := s.holds[d] + delta
		if n > 0 {
			s.holds[d] = n
			if n > 1 || delta < 0 {
				return // d was known and stays so
			}
		} else {
			delete(s.holds, d)
		}
		s.note(d, delta) // d became known, or unknown
		q = d
	}
}

// note adds the known path p to, or (delta -1) removes it from, the paths
// kept by key.
func (s *spellIndex) note(p string, delta int) {
	if isPlain(p) {
		return
	}
	n := s.roles[p] + delta
	switch {
	case n == 1 && delta > 0:
		addTo(s.odd, tree.FoldKey(p), p)
	case n <= 0:
		removeFrom(s.odd, tree.FoldKey(p), p)
		delete(s.roles, p)
		return
	}
	s.roles[p] = n
}

// isPlain reports whether p is ASCII without capitals: its tree.FoldKey is
// its upper case, and no other plain path has that key.
func isPlain(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// parentDir is the folder holding p, "" at the root.
func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// KeepsParsed reports whether the catalog keeps every entry parsed, so
// that Get returns the same *tree.Entry until the entry changes: a tree of
// at most maxParsed entries, or a catalog without files.
func (c *Catalog) KeepsParsed() bool {
	return c.files == nil || c.nEntries <= maxParsed
}

// Has reports whether the catalog holds an entry at path, without reading it.
func (c *Catalog) Has(path string) bool {
	_, ok := c.card(path)
	return ok
}

// Title returns the title of the entry at path, without reading it.
func (c *Catalog) Title(path string) (string, bool) {
	cd, ok := c.card(path)
	return cd.title, ok
}

// Changed returns when the entry at path last changed by its front matter
// (tree.Entry.Changed: updatedAt, else createdAt), without reading it;
// zero for an entry without dates, or no entry.
func (c *Catalog) Changed(path string) time.Time {
	if cd, ok := c.card(path); ok && cd.changed != 0 {
		return time.Unix(cd.changed, 0).UTC()
	}
	return time.Time{}
}

// ModTime returns the modification time (host.FileTime's clock, Unix
// milliseconds) the file at p had when the catalog last listed it, and
// false when it holds none (the engine wrote the file since, or the time
// was too recent to trust: Note).
func (c *Catalog) ModTime(p string) (int64, bool) {
	r, ok := c.recs.Get(p)
	return r.seen.ModTime, ok && r.noted && r.seen.ModTime != 0
}

// Sources returns the files the entry at path was ingested from
// (tree.Entry.IngestedFrom), without reading it.
func (c *Catalog) Sources(path string) []string {
	cd, _ := c.card(path)
	return cd.sources()
}

// Get returns an entry. An entry restored from the persisted catalog is
// read and parsed at its first Get: when its file still holds the bytes
// of its stamp, the parse is kept. When it does not (changed on disk
// since the catalog read it, and not yet refreshed), Get returns what the
// file holds now without keeping it, as a session opened after the change
// would: the stamp still names the old bytes, so a refresh or an operation
// on the path finds the change and re-indexes it. ok is false when there
// is no entry at path or its file can no longer be read or parsed.
func (c *Catalog) Get(path string) (*tree.Entry, bool) {
	if e, ok := c.entries[path]; ok {
		return e, true
	}
	if _, ok := c.card(path); !ok || c.files == nil {
		return nil, false
	}
	e, current, err := c.readEntry(path)
	if err != nil {
		return nil, false
	}
	if current {
		c.keep(e)
	}
	return e, true
}

// readEntry reads and parses the entry at p from its file, and reports
// whether the file holds the bytes of p's stamp.
func (c *Catalog) readEntry(p string) (*tree.Entry, bool, error) {
	data, err := c.files.fs.ReadFile(p)
	if err != nil {
		return nil, false, err
	}
	if len(data) > c.files.maxBytes {
		return nil, false, fmt.Errorf("%s: %d bytes is over the %d-byte limit", p, len(data), c.files.maxBytes)
	}
	e, err := tree.ParseEntry(p, data)
	if err != nil {
		return nil, false, err
	}
	stamp, ok := c.Stamp(p)
	return e, ok && stamp == SourceKey(data), nil
}

// Paths returns every entry path, sorted.
func (c *Catalog) Paths() []string {
	return c.pathsWhere(c.nEntries, func(r rec) bool { return r.entry })
}

// Unsorted yields the path of every entry in no particular order (a map's),
// for what does not depend on it, such as counts: Paths sorts them, which
// at 100,000 entries is a tenth of a second under wasm.
func (c *Catalog) Unsorted() iter.Seq[string] {
	return func(yield func(string) bool) {
		for p, i := range c.recs.All() {
			if c.recs.At(i).entry && !yield(p) {
				return
			}
		}
	}
}

// Len returns the number of entries.
func (c *Catalog) Len() int { return c.nEntries }

// Forward returns the entry paths p links to, resolved (wikilinks by path or
// unique base name), sorted; unresolved targets are returned as written.
// Resolved and unresolved targets are sorted together; a caller tells
// them apart with Get.
func (c *Catalog) Forward(p string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range c.linksOf(p) {
		t, ok := c.Resolve(l)
		if !ok {
			t = l
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// Backlinks returns the entries that link to p, sorted. Only links that
// resolve to p count, so a base-name link stops counting once the base
// name becomes ambiguous.
func (c *Catalog) Backlinks(p string) []string {
	if _, ok := c.card(p); !ok {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	rev := c.relations().rev
	// The third key catches "x.md" resolving to "x.md.md" by appended ".md".
	for _, key := range []string{linkKey(p), linkKey(baseName(p)), linkKey(trimMD(p))} {
		for _, src := range rev[key] {
			if seen[src] {
				continue
			}
			seen[src] = true
			for _, l := range c.linksOf(src) {
				if t, ok := c.Resolve(l); ok && t == p {
					out = append(out, src)
					break
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// Resolve returns the path of the entry a raw link (a related: item, a
// legacy @path or a wikilink target, as written) points at, by the rules
// in the Catalog comment, and false when it points at no entry or at an
// ambiguous base name.
func (c *Catalog) Resolve(raw string) (string, bool) {
	t := LinkTarget(raw)
	if t == "" {
		return "", false
	}
	if _, ok := c.card(t); ok {
		return t, true
	}
	if _, ok := c.card(t + ".md"); ok {
		return t + ".md", true
	}
	idx := c.relations().byBase
	if strings.Contains(t, "/") {
		idx = c.relations().byPath
	}
	if set := idx[linkKey(t)]; len(set) == 1 {
		return set[0], true
	}
	return "", false
}

// LinkTarget strips what is not part of a link's target: surrounding
// space, the legacy "@" and a leading "/" or "./" (links are relative to
// the root).
func LinkTarget(raw string) string {
	t := strings.TrimSpace(raw)
	t = strings.TrimPrefix(t, "@")
	for {
		switch {
		case strings.HasPrefix(t, "./"):
			t = t[2:]
		case strings.HasPrefix(t, "/"):
			t = t[1:]
		default:
			return t
		}
	}
}

// linkKey is the loose form links are matched in: lowercase, no ".md",
// spaces as underscores ("Invoice Retry Policy" ~ "invoice_retry_policy.md").
func linkKey(s string) string {
	s = strings.ToLower(s)
	s = strings.TrimSuffix(s, ".md")
	return strings.ReplaceAll(s, " ", "_")
}

// trimMD drops one ".md" extension, in any case.
func trimMD(p string) string {
	if tree.IsMarkdown(p) {
		return p[:len(p)-3]
	}
	return p
}

// isMD reports whether p ends in ".md", in any case.

// linksOf returns the raw links of the entry at p.
func (c *Catalog) linksOf(p string) []string {
	cd, _ := c.card(p)
	return cd.links()
}

// relations is the index of the cards' links by the loose keys Resolve
// matches (linkKey).
type relations struct {
	rev    map[string]pathSet // link key -> entries holding such a link
	byPath map[string]pathSet // link key of a full path -> entry paths
	byBase map[string]pathSet // link key of a base name -> entry paths
}

// relations returns c.rel, building it from the cards at the first call.
func (c *Catalog) relations() *relations {
	if c.rel == nil {
		r := &relations{rev: map[string]pathSet{}, byPath: make(map[string]pathSet, c.nEntries), byBase: make(map[string]pathSet, c.nEntries)}
		// Appended, then each set sorted once: a sorted insert costs the
		// set's size, and a base name thousands of entries share
		// (message_10.md in every chat) made the build quadratic (18 s at
		// 100k under wasm, the first `stats` of a process).
		for p, i := range c.recs.All() {
			if rc := c.recs.At(i); rc.entry {
				rc.card = rc.card.decoded()
				r.put(p, rc.card.links(), appendTo)
			}
		}
		for _, m := range []map[string]pathSet{r.rev, r.byPath, r.byBase} {
			for k, set := range m {
				if len(set) > 1 {
					slices.Sort(set)
					m[k] = slices.Compact(set)
				}
			}
		}
		c.rel = r
	}
	return c.rel
}

// add indexes the entry at p and its links.
func (r *relations) add(p string, links []string) { r.put(p, links, addTo) }

// put indexes the entry at p and its links with add, which puts a path in
// the set at a key.
func (r *relations) put(p string, links []string, add func(m map[string]pathSet, key, p string)) {
	for _, l := range links {
		add(r.rev, linkKey(LinkTarget(l)), p)
	}
	add(r.byPath, linkKey(p), p)
	add(r.byBase, linkKey(baseName(p)), p)
}

// remove drops the entry at p and its links.
func (r *relations) remove(p string, links []string) {
	for _, l := range links {
		removeFrom(r.rev, linkKey(LinkTarget(l)), p)
	}
	removeFrom(r.byPath, linkKey(p), p)
	removeFrom(r.byBase, linkKey(baseName(p)), p)
}

func (r *relations) clone() *relations {
	n := &relations{rev: make(map[string]pathSet, len(r.rev)), byPath: make(map[string]pathSet, len(r.byPath)), byBase: make(map[string]pathSet, len(r.byBase))}
	for _, m := range [][2]map[string]pathSet{{n.rev, r.rev}, {n.byPath, r.byPath}, {n.byBase, r.byBase}} {
		for k, set := range m[1] {
			m[0][k] = slices.Clone(set)
		}
	}
	return n
}

// baseName is the last segment of a path.
func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// addTo adds p to the set at key.
func addTo(m map[string]pathSet, key, p string) {
	s := m[key]
	if i, found := slices.BinarySearch(s, p); !found {
		m[key] = slices.Insert(s, i, p)
	}
}

// appendTo appends p to the set at key, which is then unsorted.
func appendTo(m map[string]pathSet, key, p string) { m[key] = append(m[key], p) }

// removeFrom removes p from the set at key, dropping empty sets.
func removeFrom(m map[string]pathSet, key, p string) {
	s := m[key]
	i, found := slices.BinarySearch(s, p)
	switch {
	case !found:
	case len(s) == 1:
		delete(m, key)
	default:
		m[key] = slices.Delete(s, i, i+1)
	}
}

// sortedKeys returns a map's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// PutContext adds or replaces a context file.
func (c *Catalog) PutContext(ctx *tree.Context) {
	if ctx == nil {
		return
	}
	c.init()
	c.contexts[ctx.Path] = ctx
	c.touch(ctx.Path)
}

// DeleteContext removes a context file.
func (c *Catalog) DeleteContext(path string) {
	if _, ok := c.contexts[path]; ok {
		delete(c.contexts, path)
		c.touch(path)
	}
}

// Context returns a context file by its path.
func (c *Catalog) Context(path string) (*tree.Context, bool) {
	ctx, ok := c.contexts[path]
	return ctx, ok
}

// ContextPaths returns every context.md path, sorted.
func (c *Catalog) ContextPaths() []string { return sortedKeys(c.contexts) }

// errUnknownBroken stands in when MarkBroken is given no error.
var errUnknownBroken = errors.New("tree: file could not be parsed")

// MarkBroken records a file that could not be parsed. It does not remove
// an entry already catalogued at that path; the caller decides that.
func (c *Catalog) MarkBroken(path string, err error) {
	c.init()
	if err == nil {
		err = errUnknownBroken
	}
	c.broken[path] = err
	c.touch(path)
}

// ClearBroken forgets a broken file (it was fixed or removed).
func (c *Catalog) ClearBroken(path string) {
	if _, ok := c.broken[path]; ok {
		delete(c.broken, path)
		c.touch(path)
	}
}

// Broken reports whether a path failed to parse, and why.
func (c *Catalog) Broken(path string) (error, bool) {
	err, ok := c.broken[path]
	return err, ok
}

// BrokenPaths returns every broken path, sorted.
func (c *Catalog) BrokenPaths() []string { return sortedKeys(c.broken) }

// Conflicts lists, sorted, the files of the tree that hold a merge
// conflict section (tree.ConflictHeading): entries and context files.
func (c *Catalog) Conflicts() []string {
	c.init()
	var out []string
	for p, i := range c.recs.All() {
		if c.nConflict == len(out) {
			break // the rest holds none: no open pays for a scan of every entry
		}
		if r := c.recs.At(i); r.entry && r.card.conflict() {
			out = append(out, p)
		}
	}
	for p, cx := range c.contexts {
		if cx.Conflicted() {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
