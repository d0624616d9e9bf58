package catalog

import (
	"errors"
	"fmt"
	"hash/fnv"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/atoms"
	"github.com/arbormem/arbor/core/internal/pathtab"
	"github.com/arbormem/arbor/core/internal/search"
	"github.com/arbormem/arbor/core/internal/tree"
)

// Load reads every markdown file of a tree into a new catalog and returns
// the search sources of those it could parse, keyed by their bytes
// (SourceKey): the index builds a source's document only when its file
// changed since it was indexed. Files that cannot be used (too large,
// unreadable, malformed) are reported as warnings, kept in the catalog as
// broken when they fail to parse, and left untouched. Dot-names (.arbor,
// .git, .obsidian) are skipped: they are tooling, not knowledge.
func Load(fsys host.FS, maxBytes int) (*Catalog, []search.Source, []api.Warning, error) {
	var srcs []search.Source
	cat, warnings, err := Reload(fsys, maxBytes, ReloadOptions{Source: func(s search.Source) error {
		srcs = append(srcs, s)
		return nil
	}})
	return cat, srcs, warnings, err
}

// ReloadOptions tune a Reload.
type ReloadOptions struct {
	// Prev is a catalog of the same tree (Restore): every file whose
	// listing shows it unchanged (Note) is taken from it instead of
	// read.
	Prev *Catalog
	// Now is when the listing began (Note), by the clock that stamps the
	// files (host.FileTime); zero trusts every listed time.
	Now time.Time
	// Read, when not nil, is told the number of files read so far after
	// each.
	Read func(n int)
	// Source is given each file's search source as soon as it is made
	// (search.Syncer.Add), so that documents are built and indexed while
	// what they are made from is at hand; an error stops the Reload.
	Source func(search.Source) error
}

// Reload is Load that reads only what changed since o.Prev, and gives the
// sources to o.Source as it goes. Sources taken from Prev carry the stamps
// it holds; an entry's document is built from its file only when the
// index asks for it (its key changed), and a file found then not to hold
// its stamp's bytes is taken anew.
//
// Reload takes Prev over: the catalog it returns is Prev brought up to
// date, so that what did not change costs no copy (Prev must not be used
// afterwards, and is left half-updated when Reload fails).
func Reload(fsys host.FS, maxBytes int, o ReloadOptions) (*Catalog, []api.Warning, error) {
	l := &loader{fs: fsys, maxBytes: maxBytes, cat: o.Prev, onRead: o.Read, emit: o.Source, restored: o.Prev != nil}
	l.rereadDoc = l.reread
	if l.cat == nil {
		l.cat = New()
	} else {
		if l.cat.recs.Dead() > max(l.cat.recs.Len(), 1024) {
			// The slots of records removed since are given back now, rather
			// than by a Put in the middle of the walk, where the marks
			// would be lost.
			l.cat.recs.Compact()
		}
		l.seen = pathtab.NewMarks(l.cat.recs.Slots(), l.cat.recs.Gen())
	}
	if !o.Now.IsZero() {
		l.start = o.Now.UnixMilli()
	}
	if l.emit == nil {
		l.emit = func(search.Source) error { return nil }
	}
	l.cat.files = &fileSource{fs: fsys, maxBytes: maxBytes}
	if err := l.walk(""); err != nil {
		return nil, nil, err
	}
	if !l.restored {
		l.cat.dirty = true
		return l.cat, l.warnings, nil
	}
	if l.cat.recs.Gen() != l.seen.Gen() {
		// Four billion records made in one walk: which were listed is no
		// longer known, and forgetting by guess could lose a file.
		return nil, nil, errors.New("catalog: the records were renumbered during the walk")
	}
	// What the listing no longer shows is gone. Every file listed has a
	// stamp, so equal counts mean nothing is.
	if l.seen.Count() != l.cat.nStamped {
		var gone []string
		for p, i := range l.cat.recs.All() {
			if l.cat.recs.At(i).stamped && !l.seen.Marked(i) {
				gone = append(gone, p)
			}
		}
		for _, p := range gone {
			l.cat.Forget(p)
			l.changed = true
		}
	}
	// The catalog is unsaved only when a stamp or a listing changed: a
	// storage without modification times has every file read at each
	// open, and writing an identical catalog would only make it look
	// changed to the other memories sharing it.
	l.cat.dirty = l.changed
	return l.cat, l.warnings, nil
}

// loader is one Load.
type loader struct {
	fs       host.FS
	maxBytes int
	cat      *Catalog
	// When the catalog was restored (ReloadOptions.Prev), the stamped
	// files the listing showed are marked by their records' slots in
	// seen, and changed is set when one of them was read to another stamp
	// or listing than the catalog held. Marks rather than a set of the
	// paths listed: the set was 50 MB at a million files, and marks kept
	// in the records cost a write per file. next is the slot after the
	// last record found: a walk lists files in about path order, the
	// order of a restored catalog's records (pathtab.Table.Find).
	restored bool
	seen     pathtab.Marks
	next     uint32
	changed  bool
	start    int64 // Unix milliseconds when the listing began; 0 trusts every time
	onRead   func(n int)
	read     int // files read
	emit     func(search.Source) error
	// rereadDoc is reread, made a func once: a source's Doc, which every
	// unchanged entry's source shares.
	rereadDoc func(string) search.Doc
	warnings  []api.Warning
}

func (l *loader) warn(p, msg string) {
	l.warnings = append(l.warnings, api.Warning{Kind: api.WarnFile, Path: p, Message: msg})
}

// walk loads every markdown file below dir and reports names in it that
// are twins (twins). Dot-names (.arbor, .git, .obsidian) are skipped: they
// are tooling, not knowledge. The listings come from one walk of the
// tree (host.WalkFiles), through the host's fs_walk where it has one.
func (l *loader) walk(dir string) error {
	return host.WalkFiles(l.fs, dir, func(d string, list []host.DirEntry) error {
		l.twins(d, list)
		return nil
	}, l.file)
}

// file loads the file de of the folder dir, as the listing describes it.
func (l *loader) file(dir string, de host.DirEntry) error {
	if !tree.IsMarkdown(de.Name) {
		return nil
	}
	if de.Size > int64(l.maxBytes) {
		l.warn(host.JoinPath(dir, de.Name), fmt.Sprintf("skipped: %d bytes is over the %d-byte limit", de.Size, l.maxBytes))
		return nil
	}
	fi := InfoOf(de)
	// One look-up of the file, not one per question: an open asks these
	// of every file of the tree.
	p, i, ok := l.cat.recs.FindIn(dir, de.Name, l.next)
	if ok {
		l.next = i + 1
		if r := l.cat.recs.At(i); l.restored && r.unchanged(fi) {
			l.see(i)
			return l.reuse(p, r)
		}
	}
	data, err := l.fs.ReadFile(p)
	l.counted()
	if err != nil {
		l.warn(p, fmt.Sprintf("unreadable: %v", err))
		return nil
	}
	if src, ok := l.reload(p, fi, data); ok {
		return l.emit(src)
	}
	return nil
}

// reuse emits the source of the unchanged file p as the catalog holds it
// (r), without reading it.
func (l *loader) reuse(p string, r *rec) error {
	if r.entry {
		return l.emit(search.Source{Path: p, Key: r.stamp, Doc: l.rereadDoc, Kept: true})
	}
	if ctx, ok := l.cat.Context(p); ok {
		return l.emit(search.Source{Path: p, Key: r.stamp, Doc: func(string) search.Doc { return ContextDoc(ctx) }, Kept: true})
	}
	err, _ := l.cat.Broken(p) // Restore keeps no other kind
	l.warn(p, err.Error())
	return nil
}

// IndexSources gives add the search source of every file the catalog
// holds, keyed by its stamp, as an open gives them: the index rebuilds
// from them when another process removed the files of the index it read
// (search.Store.Sources). An entry that can no longer be read gets a
// document of its title; a refresh or the next open finds it as it is.
func (c *Catalog) IndexSources(add func(search.Source) error) error {
	for _, p := range c.Paths() {
		key, _ := c.Stamp(p)
		if err := add(search.Source{Path: p, Key: key, Doc: c.indexDoc}); err != nil {
			return err
		}
	}
	for _, p := range c.ContextPaths() {
		key, _ := c.Stamp(p)
		ctx, _ := c.Context(p)
		if err := add(search.Source{Path: p, Key: key, Doc: func(string) search.Doc { return ContextDoc(ctx) }}); err != nil {
			return err
		}
	}
	return nil
}

// indexDoc is the document of the entry at p, for IndexSources: one
// that can no longer be read gets a document of its title.
func (c *Catalog) indexDoc(p string) search.Doc {
	if en, ok := c.Get(p); ok {
		return EntryDoc(en)
	}
	title, _ := c.Title(p)
	return search.Doc{Path: p, Kind: "entry", Title: title}
}

// see marks the file whose record is at slot i as listed, if stamped.
func (l *loader) see(i uint32) {
	if l.cat.recs.At(i).stamped {
		l.seen.Mark(i)
	}
}

// reload takes the bytes read at p, listed as fi, and notes whether the
// catalog changed with them.
func (l *loader) reload(p string, fi FileInfo, data []byte) (search.Source, bool) {
	was, _ := l.cat.recs.Get(p)
	_, pending := l.cat.saved.since[p]
	src, ok := l.load(p, data)
	l.cat.Note(p, fi, l.start)
	if l.restored {
		i, _ := l.cat.recs.Slot(p) // Take stamped p
		l.see(i)
		now := *l.cat.recs.At(i)
		if !was.stamped || was.stamp != now.stamp || was.noted != now.noted || was.seen != now.seen {
			l.changed = true
		} else if !pending {
			// Read to the record the base holds (a storage without
			// modification times has every file read): nothing for the
			// delta (persist.go).
			delete(l.cat.saved.since, p)
		}
	}
	return src, ok
}

// reread builds the document of the reused entry p from its file, when
// the index's key for it differs from the stamp. A file that does not hold
// the stamp's bytes changed without its size or time showing it: it is
// taken anew, and read again at the next open. One that can no longer be
// read or parsed is forgotten (the next open finds it as it is) and gets
// a document of its title, which the next open replaces.
func (l *loader) reread(p string) search.Doc {
	// A Syncer may call it after the walk (Source.Kept), when Reload has
	// set the catalog's dirty flag from changed already: a change here
	// sets both.
	title, _ := l.cat.Title(p)
	data, err := l.fs.ReadFile(p)
	l.counted()
	if err == nil && len(data) <= l.maxBytes {
		if s, _ := l.cat.Stamp(p); s == SourceKey(data) {
			if en, err := tree.ParseEntry(p, data); err == nil {
				l.cat.keep(en)
				return EntryDoc(en)
			}
		} else if _, err := l.cat.Take(p, data); err == nil {
			l.changed, l.cat.dirty = true, true
			en, _ := l.cat.Get(p)
			return EntryDoc(en)
		}
	}
	l.cat.Forget(p)
	l.changed, l.cat.dirty = true, true
	return search.Doc{Path: p, Kind: "entry", Title: title}
}

// twins warns of the names in dir that differ only in case or Unicode
// normalization (api.WarnTwins), one warning per group, in name order.
func (l *loader) twins(dir string, list []host.DirEntry) {
	if !maybeTwins(list) {
		return
	}
	groups := map[string][]string{}
	var keys []string
	for _, de := range list {
		if strings.HasPrefix(de.Name, ".") {
			continue
		}
		k := tree.FoldKey(de.Name)
		if len(groups[k]) == 1 {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], de.Name)
	}
	for _, k := range keys {
		names := groups[k]
		sort.Strings(names)
		paths := make([]string, len(names))
		quoted := make([]string, len(names))
		for i, n := range names {
			paths[i] = path.Join(dir, n)
			quoted[i] = strconv.Quote(n)
		}
		l.warnings = append(l.warnings, api.Warning{Kind: api.WarnTwins, Path: paths[0], Paths: paths,
			Message: fmt.Sprintf("%s differ only in %s: Windows and macOS hold one of them, so a copy there loses the others; rename or merge them",
				strings.Join(quoted, " and "), twinDifference(names))})
	}
}

// maybeTwins reports whether a listing may hold twins: plain names, the
// names the engine writes, fold to themselves, and a listing holds no name
// twice.
func maybeTwins(list []host.DirEntry) bool {
	return slices.ContainsFunc(list, func(de host.DirEntry) bool { return !isPlain(de.Name) })
}

// twinDifference says how twin names differ: in case, in Unicode form, or
// both.
func twinDifference(names []string) string {
	byCase, byForm := false, false
	for _, n := range names[1:] {
		switch {
		case norm.NFC.String(n) == norm.NFC.String(names[0]):
			byForm = true
		case n != names[0] && strings.EqualFold(n, names[0]):
			byCase = true
		default:
			byCase, byForm = true, true
		}
	}
	switch {
	case byCase && byForm:
		return "case and Unicode form"
	case byForm:
		return "Unicode form (composed and decomposed accents)"
	}
	return "case"
}

// load parses one file into the catalog and returns the source of its
// search document, keyed by the file's bytes (SourceKey): the index builds
// the document only when the file changed since it was indexed.
func (l *loader) load(p string, data []byte) (search.Source, bool) {
	key, err := l.cat.Take(p, data)
	if err != nil {
		l.warn(p, err.Error())
		return search.Source{}, false
	}
	if ctx, ok := l.cat.Context(p); ok {
		return search.Source{Path: p, Key: key, Doc: func(string) search.Doc { return ContextDoc(ctx) }}, true
	}
	en, _ := l.cat.Get(p)
	return search.Source{Path: p, Key: key, Doc: func(string) search.Doc { return EntryDoc(en) }}, true
}

// Take records the bytes read at p: the entry or context file they parse
// to (a context.md is a context file, any other file an entry), or p as
// broken with the parse error, which Take returns; and the bytes' stamp
// (SourceKey), which it returns too. What the catalog held at p before is
// replaced.
func (c *Catalog) Take(p string, data []byte) (string, error) {
	key := SourceKey(data)
	c.SetStamp(p, key)
	if path.Base(p) == "context.md" {
		ctx, err := tree.ParseContext(p, data)
		if err != nil {
			c.DeleteContext(p)
			c.MarkBroken(p, err)
			return key, err
		}
		c.ClearBroken(p)
		c.PutContext(ctx)
		return key, nil
	}
	en, err := tree.ParseEntry(p, data)
	if err != nil {
		c.Delete(p)
		c.MarkBroken(p, err)
		return key, err
	}
	c.Put(en)
	return key, nil
}

// docVersion is part of every source key: raise it when the documents made
// from files change in a way computeDocFingerprint's probes do not show, so that
// the next open builds every document again and re-indexes those that
// changed.
const docVersion = 1

// SourceKey is the key of a file's search document (search.Source): a hash
// of the file's bytes and of the code that makes documents from files
// (docFP). A path's document is a function of these
// alone, so an equal key means an unchanged document.
func SourceKey(data []byte) string {
	h := fnv.New64a()
	h.Write([]byte(docFP))
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

// probeDoc is the document Load makes of a file.
func probeDoc(p, text string) (search.Doc, error) {
	if path.Base(p) == "context.md" {
		ctx, err := tree.ParseContext(p, []byte(text))
		if err != nil {
			return search.Doc{}, err
		}
		return ContextDoc(ctx), nil
	}
	en, err := tree.ParseEntry(p, []byte(text))
	if err != nil {
		return search.Doc{}, err
	}
	return EntryDoc(en), nil
}

// computeDocFingerprint hashes docVersion and the documents Load makes of
// docProbes, so that a change to parsing or to entryDoc that shows in them
// changes every source key.
func computeDocFingerprint() string {
	h := fnv.New128a()
	fmt.Fprintf(h, "version %d\n", docVersion)
	for _, p := range docProbes {
		d, err := probeDoc(p.path, p.text)
		fmt.Fprintf(h, "%#v %v\n", d, err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// EntryDoc is the index document of an entry. In a chat transcript
// narrative, the assistant's turns are indexed as an aside: the memory is
// what the person said, and long assistant answers would otherwise outweigh
// it (bench/retrieval/REPORT.md).
func EntryDoc(en *tree.Entry) search.Doc {
	d := search.Doc{Path: en.Path, Kind: "entry", Title: en.Title, Summary: en.Summary, Tags: en.Tags, Keywords: en.Keywords, Date: en.Changed()}
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

// ContextDoc is the index document of a context file.
func ContextDoc(c *tree.Context) search.Doc {
	return search.Doc{Path: c.Path, Kind: "context", Title: c.Title, Content: c.Body}
}

// counted counts a file read (Reload reads files changed since its Prev,
// and rereads those the index needs a document of), and tells o.Read.
func (l *loader) counted() {
	if l.read++; l.onRead != nil {
		l.onRead(l.read)
	}
}
