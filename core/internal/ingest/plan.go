package ingest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/curate"
	"github.com/arbormem/arbor/core/internal/tree"
)

// ManifestPath is where the engine keeps the manifest, relative to the
// memory root.
const ManifestPath = ".arbor/ingest.json"

// Manifest remembers what each ingested source wrote: the hash of the file
// (with the options that shape its layout) and, per entry, the hash of the
// piece it holds. It is derived data: when it is lost or unreadable, Plan
// finds a source's entries by their provenance (the Raw Concept's files
// naming the source) and rewrites those still as ingest wrote them, which
// their own stamp tells (tree.Ingested), once.
type Manifest struct {
	Version int                      `json:"version"`
	Sources map[string]*SourceRecord `json:"sources"`
	// Origins maps a source-name prefix to where its files come from
	// (api.IngestParams.Origins), while sources under it are recorded.
	Origins map[string]string `json:"origins,omitempty"`
}

// SourceRecord is what one source wrote.
type SourceRecord struct {
	// Hash is the source's hash when every piece was written; empty after
	// an ingest with failed operations, so that the next one retries.
	Hash   string     `json:"hash"`
	Format api.Format `json:"format"`
	// Entries maps each entry path to its piece's hash ("" when unknown,
	// which makes the next ingest rewrite it).
	Entries map[string]string `json:"entries"`
	// Aliases are a note's other names (its front matter's aliases), which
	// wikilinks of notes ingested later may use.
	Aliases []string `json:"aliases,omitempty"`
	// Pending maps an entry of a note to its links that named no note
	// yet ("[[name]]", or the relative path as written): an ingest that
	// brings the note they name adds the relation (Planner.Follow).
	Pending map[string][]string `json:"pending,omitempty"`
	// Moved maps an entry that lives elsewhere than ingest puts it (moved
	// by a MOVE or by hand, and followed there) to where ingest puts it,
	// so that every later ingest updates it where it lives.
	Moved map[string]string `json:"moved,omitempty"`
}

// manifestVersion is the version this package reads and writes.
const manifestVersion = 1

// NewManifest returns an empty manifest.
func NewManifest() *Manifest {
	return &Manifest{Version: manifestVersion, Sources: map[string]*SourceRecord{}}
}

// ParseManifest reads a manifest; a file of another version is an error.
func ParseManifest(data []byte) (*Manifest, error) {
	m := NewManifest()
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("ingest manifest: %w", err)
	}
	if m.Version != manifestVersion {
		return nil, fmt.Errorf("ingest manifest: version %d, want %d", m.Version, manifestVersion)
	}
	if m.Sources == nil {
		m.Sources = map[string]*SourceRecord{}
	}
	for name, r := range m.Sources {
		if r == nil {
			delete(m.Sources, name)
		} else if r.Entries == nil {
			r.Entries = map[string]string{}
		}
	}
	return m, nil
}

// Encode renders the manifest deterministically (sorted keys, indented).
func (m *Manifest) Encode() []byte {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		panic(err) // maps of strings always encode
	}
	return append(b, '\n')
}

// SourceHash identifies a source's text (f.Content) together with the
// options that shape its entries: changing either re-plans the file.
func SourceHash(f api.SourceFile, opts api.IngestOptions) string {
	h := fnv.New128a()
	fmt.Fprintf(h, "%s\x00%d\x00", opts.Domain, contextTurns(opts))
	if api.FormatOf(f.Name) == api.FormatMarkdown {
		// Notes were entries per section before they kept their shape:
		// a tree ingested then is laid out again at its next ingest.
		h.Write([]byte("note\x00"))
	}
	h.Write([]byte(f.Content))
	return fmt.Sprintf("%x", h.Sum(nil))
}

// FilePlan is what ingesting one file takes.
type FilePlan struct {
	Name   string
	Format api.Format
	Status string
	// Ops are the operations to apply, in order: ADD and UPDATE in document
	// order, then DELETE. Hashes holds the piece hash of each ADD and
	// UPDATE (by op index), Old the hash the manifest had for its path.
	Ops    []api.Operation
	Hashes []string
	// Pieces counts the entries the file makes; Unchanged those already
	// written as they are. A removal (StatusRemoved) has neither: its Ops
	// are the DELETEs of the source's entries.
	Pieces, Unchanged int

	// Warnings say what of the file was read otherwise than written.
	Warnings []string
	// Kept are the notes on entries left as a person edited them, whose
	// piece changed or went (build).
	Kept []string

	hash    string
	old     map[string]string
	entries map[string]string // path → piece hash of the unchanged pieces
	// pieces and paths are the file's pieces and where Plan placed them,
	// taken the set of those paths, rec the manifest's record (Link plans
	// the operations from them); pending holds, by entry, the links that
	// found no note.
	pieces  []Piece
	paths   []string
	taken   map[string]bool
	moved   map[string]string // the pieces followed to where their entries were moved: path → where ingest puts it
	rec     *SourceRecord
	pending map[string][]string
	aliases []string
	// leftBehind: an entry a person edited holds less than its changed
	// piece, so the source's hash is not recorded and every ingest plans
	// the file again: once the person deletes or reverts the entry, the
	// source's text is written though the source has not changed since.
	leftBehind bool

	// Follow are the UPDATEs that give notes ingested before the relations
	// their pending links now resolve to, to notes of this file (Follow);
	// follows says whose they are.
	Follow  []api.Operation
	follows []followUp
}

// followUp is one pending link list of an earlier note resolved.
type followUp struct {
	source, path string
	resolved     []string // the link specs resolved
	// fresh: the entry was as its ingest wrote it, so the UPDATE stamps
	// what it writes, for the piece it held (an edited one keeps the stamp
	// that says so).
	fresh bool
	piece string
}

// stamp is the Stamp of the follow-up's UPDATE: none for an entry a
// person edited.
func (f *followUp) stamp() string {
	if !f.fresh {
		return ""
	}
	return f.piece
}

// Planner plans the ingestion of the files of one call against a tree.
type Planner struct {
	Manifest *Manifest
	Catalog  *catalog.Catalog
	Options  api.IngestOptions
	// Reason is the reason of every operation; "" means "ingest <name>"
	// ("prune <name>" for the DELETEs of a removed source).
	Reason string
	// Spell is where curate writes an entry named p (curate.Curator.Spell):
	// its existing spelling in the tree, or an error for a name the engine
	// does not create. nil takes every path as it is.
	Spell func(p string) (string, error)
	// Read reads a file of the tree, for the stamps of entries (edited,
	// stamped); nil checks none.
	Read func(p string) ([]byte, error)

	owners map[string]string // entry path → source, from the manifest and this call
	// notes are the sources a link may name: this call's files and those the
	// manifest records, by name (index, known); byBase and byAlias index
	// them by the last segment of their name without extension and by
	// alias, lowercase.
	notes           map[string]noteRef
	byBase, byAlias map[string][]string
	// bySource indexes the tree's ingested entries by the source their
	// provenance names, built on the first source without a record.
	bySource map[string][]string
	// twins maps, per source, each of its entries whose bytes another of
	// them holds too to one such other (copyOf).
	twins map[string]map[string]string
}

// Plan splits one file, places its pieces (where each goes, as the tree
// spells it and clear of other sources' entries and the user's) and plans
// their operations, with the links of a note resolved to the notes placed
// so far; Link plans them again once every file of the call is placed. A
// file that cannot be split is an error (wrapping ErrBadInput) and plans
// nothing.
func (p *Planner) Plan(f api.SourceFile) (FilePlan, error) {
	p.index()
	fp := FilePlan{Name: f.Name, Format: api.FormatOf(f.Name), Status: api.IngestUnchanged}
	text, err := api.SourceText(f, p.Options.MaxSourceBytes)
	if err != nil {
		return fp, err
	}
	// The text, not the bytes, identifies the source: a file re-encoded
	// as it was (UTF-16 saved as UTF-8) is unchanged.
	f = api.SourceFile{Name: f.Name, Content: text}
	src, format, err := split(f.Name, text, p.Options)
	fp.Format = format
	if err != nil {
		return fp, err
	}
	pieces := src.pieces
	fp.Warnings = src.warnings
	fp.Pieces = len(pieces)
	fp.hash = SourceHash(f, p.Options)
	rec := p.Manifest.Sources[f.Name]
	if rec != nil && rec.Hash == fp.hash && len(rec.Pending) == 0 {
		fp.Unchanged = len(rec.Entries)
		fp.Pieces = len(rec.Entries)
		p.known(f.Name, src.aliases, primary(slices.Collect(maps.Keys(rec.Entries))))
		return fp, nil
	}
	fp.Status = api.IngestUpdated
	fp.old = map[string]string{}
	if rec != nil {
		for k, v := range rec.Entries {
			fp.old[k] = v
		}
	} else {
		fp.Status = api.IngestAdded
		// No record (first ingest, or a lost manifest): entries that name
		// this source in their provenance are its own.
		for _, path := range p.provenanceIndex()[f.Name] {
			fp.old[path] = ""
			fp.Status = api.IngestUpdated
		}
	}
	fp.taken = map[string]bool{}
	for _, pc := range pieces {
		base := pc.Name
		path, ok := p.spell(pc.Path())
		for n := 2; !ok || p.taken(path, f.Name, fp.old, fp.taken); n++ {
			// A name Windows reserves ("con") takes a suffix as a taken one does.
			pc.Name = fmt.Sprintf("%s_%d", base, n)
			path, ok = p.spell(pc.Path())
		}
		fp.taken[path] = true
		p.owners[path] = f.Name
		fp.pieces = append(fp.pieces, pc)
		fp.paths = append(fp.paths, path)
	}
	fp.moved = p.followMoves(&fp, rec)
	p.known(f.Name, src.aliases, fp.paths)
	fp.rec, fp.aliases = rec, src.aliases
	p.build(&fp)
	return fp, nil
}

// followMoves places a piece whose entry is not where ingest puts it at
// the entry's present path, when the entry was moved (a MOVE, or by hand):
// there it is updated, not written again at its old path. The moved
// entries are the source's own by their provenance that no record lists
// and no piece of the call takes; a piece takes the one with its file name
// (a MOVE keeps it), else the one left takes the piece left (an entry
// renamed). An entry the source's record rec lists as moved from a piece's
// path (SourceRecord.Moved) is followed first: it was moved after an
// earlier ingest, which followed it. It returns the moves it followed,
// where the entry is → where ingest puts it.
func (p *Planner) followMoves(fp *FilePlan, rec *SourceRecord) map[string]string {
	var lost []int
	for i, path := range fp.paths {
		if _, broken := p.Catalog.Broken(path); !p.Catalog.Has(path) && !broken {
			lost = append(lost, i)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	moved := map[string]string{}
	var found []string
	for _, path := range p.provenanceIndex()[fp.Name] {
		if _, recorded := p.owners[path]; !recorded && !fp.taken[path] && p.Catalog.Has(path) {
			found = append(found, path)
		}
	}
	sort.Strings(found)
	take := func(i int, to string) {
		from := fp.paths[i]
		delete(fp.taken, from)
		delete(p.owners, from)
		fp.taken[to], p.owners[to] = true, fp.Name
		if h, ok := fp.old[from]; ok {
			fp.old[to] = h
		}
		fp.paths[i] = to
		moved[to] = from
		found = slices.DeleteFunc(found, func(c string) bool { return c == to })
	}
	if rec != nil && len(rec.Moved) > 0 {
		kept := lost[:0]
		for _, i := range lost {
			if to := movedFrom(rec, fp.paths[i]); to != "" && !fp.taken[to] && p.owners[to] == fp.Name && p.Catalog.Has(to) {
				take(i, to)
			} else {
				kept = append(kept, i)
			}
		}
		lost = kept
	}
	var left []int
	for _, i := range lost {
		var same []string
		for _, c := range found {
			if path.Base(c) == path.Base(fp.paths[i]) {
				same = append(same, c)
			}
		}
		if len(same) == 1 {
			take(i, same[0])
		} else {
			left = append(left, i)
		}
	}
	if len(left) == 1 && len(found) == 1 {
		take(left[0], found[0])
	}
	return moved
}

// movedFrom is the entry rec records as moved from where ingest puts the
// piece at path, or "".
func movedFrom(rec *SourceRecord, path string) string {
	for to, from := range rec.Moved {
		if from == path {
			return to
		}
	}
	return ""
}

// Link resolves the links of the pieces of every plan of the call into
// relations (to the entries of notes of this call, or of sources ingested
// before) and plans the operations: nothing for a piece written as it is,
// UPDATE for one whose text, provenance or relations changed, ADD for a
// new one, DELETE for an entry whose piece disappeared. A link that names
// no note yet is recorded as pending (Follow).
func (p *Planner) Link(plans []FilePlan) {
	for i := range plans {
		if plans[i].taken != nil && slices.ContainsFunc(plans[i].pieces, func(pc Piece) bool { return len(pc.Links) > 0 }) {
			p.build(&plans[i])
		}
	}
}

// build plans the operations of one placed file, anew each time.
func (p *Planner) build(fp *FilePlan) {
	fp.Ops, fp.Hashes, fp.Unchanged, fp.pending, fp.Kept, fp.leftBehind = nil, nil, 0, nil, nil, false
	if fp.rec != nil {
		fp.Status = api.IngestUpdated
	}
	reason := p.Reason
	if reason == "" {
		reason = tree.IngestReason + fp.Name
	}
	fp.entries = map[string]string{}
	for i, pc := range fp.pieces {
		pc.Relations = nil
		path := fp.paths[i]
		for _, l := range pc.Links {
			_, to, ok := p.resolve(fp.Name, l)
			switch {
			case !ok:
				if fp.pending == nil {
					fp.pending = map[string][]string{}
				}
				fp.pending[path] = append(fp.pending[path], l.spec())
			case to != path && !slices.Contains(pc.Relations, to):
				pc.Relations = append(pc.Relations, to)
			}
		}
		h := pc.Hash()
		oh, had := fp.old[path]
		exists := p.Catalog.Has(path)
		edited := false
		if had && exists {
			read, intact, piece := p.stamp(path)
			edited = read && !intact
			if oh == "" {
				// No record (a lost manifest, a teammate's clone): the
				// entry's own stamp says which piece it holds, so an
				// unchanged one is not written again.
				oh = piece
			}
		}
		_, broken := p.Catalog.Broken(path)
		typ := api.OpAdd
		switch {
		case had && oh == h && exists:
			fp.Unchanged++
			fp.entries[path] = h
			continue
		case had && exists && edited:
			// A person's edit since the ingest wrote it: the entry is theirs
			// now, and stays recorded so that no later ingest takes it back.
			fp.entries[path] = oh
			fp.leftBehind = true
			fp.Kept = append(fp.Kept, fmt.Sprintf("%s was edited since it was ingested: left as it is, without the source's changes to it", path))
			continue
		case had && (exists || broken), exists:
			// An entry there that the record lacks is this source's (taken
			// said so by its provenance): written after the manifest this
			// call has, whose last write was lost. It is rewritten, since
			// curate refuses to ADD over an entry.
			typ = api.OpUpdate
		}
		op := pc.Operation(typ, reason)
		op.Path = path // as the tree spells it
		fp.Ops = append(fp.Ops, op)
		fp.Hashes = append(fp.Hashes, h)
	}
	var gone []string
	for path := range fp.old {
		if !fp.taken[path] {
			gone = append(gone, path)
		}
	}
	sort.Strings(gone)
	for _, path := range gone {
		// Only while it is still the source's, as Prune: an entry the user
		// took over (an UPDATE with a reason of their own, or an edit), or
		// one that no longer parses, is theirs now and is left alone (and
		// forgotten).
		_, broken := p.Catalog.Broken(path)
		switch {
		case broken || !p.Catalog.Has(path) || !p.provenance(path, fp.Name):
		case p.edited(path):
			fp.Kept = append(fp.Kept, fmt.Sprintf("%s was edited since it was ingested: kept, though its piece is gone from the source", path))
		default:
			if fp.rec == nil {
				// Found by its provenance alone, as a copy of another
				// file: a person's, whichever of the two it is.
				if twin := p.copyOf(path, fp.Name); twin != "" {
					fp.Kept = append(fp.Kept, fmt.Sprintf("%s holds the same ingested bytes as %s, so one is a copy: kept", path, twin))
					continue
				}
			}
			fp.Ops = append(fp.Ops, api.Operation{Type: api.OpDelete, Path: path, Reason: reason})
		}
	}
	if len(fp.Ops) == 0 && (fp.rec != nil || fp.Status == api.IngestUpdated) {
		// The file changed in ways its entries do not show (trailing
		// blank lines, a skipped front matter), or the manifest lost its
		// record and the entries' stamps say they hold its pieces as they
		// are: Record notes the hash.
		fp.Status = api.IngestUnchanged
	}
}

// edited reports whether the entry at path is no longer as the engine's
// ingest wrote it: its file carries no ingest stamp, or one naming other
// bytes (tree.Ingested). Such an entry is a person's (or was written
// otherwise), and the source's changes neither overwrite nor delete it.
// The file tells, not the manifest: a lost .arbor/ (a teammate's clone of
// the tree, a deleted folder) must not make a person's edit the ingest's.
// A save after this read is caught by curate, which compares the disk with
// what the catalog read. A planner that reads no files (Read nil) takes
// every entry as written.
func (p *Planner) edited(path string) bool {
	read, intact, _ := p.stamp(path)
	return read && !intact
}

// stamp reads the entry's file at path (read: false when the planner reads
// no files, or the file cannot be read): whether it is as the engine's
// ingest wrote it, and the hash of the piece its stamp names
// (tree.Ingested).
func (p *Planner) stamp(path string) (read, intact bool, piece string) {
	if p.Read == nil {
		return false, false, ""
	}
	data, err := p.Read(path)
	if err != nil {
		return false, false, ""
	}
	_, intact, piece = tree.Ingested(data)
	return true, intact, piece
}

// copyOf is another entry naming source in its provenance whose file
// holds the bytes of the one at path, or "". Without a record, entries are
// the source's by their provenance, and a stamp names bytes, not a path:
// of two files with one stamp, one is a person's copy (a snapshot, a file
// manager's duplicate) and neither can be told to be the ingest's. Each
// file of the source is read once per plan.
func (p *Planner) copyOf(path, source string) string {
	if p.Read == nil {
		return ""
	}
	if p.twins == nil {
		p.twins = map[string]map[string]string{}
	}
	twins, ok := p.twins[source]
	if !ok {
		twins = map[string]string{}
		byVersion := map[string]string{}
		for _, q := range p.provenanceIndex()[source] {
			data, err := p.Read(q)
			if err != nil {
				continue
			}
			v := tree.Version(data)
			if first, seen := byVersion[v]; seen {
				twins[q] = first
				if _, paired := twins[first]; !paired {
					twins[first] = q
				}
			} else {
				byVersion[v] = q
			}
		}
		p.twins[source] = twins
	}
	return twins[path]
}

// spell is where curate writes the entry p, and false when it would refuse
// the name.
func (p *Planner) spell(path string) (string, bool) {
	if p.Spell == nil {
		return path, true
	}
	q, err := p.Spell(path)
	return q, err == nil
}

// index builds the owner of every entry path the manifest records, once.
func (p *Planner) index() {
	if p.owners != nil {
		return
	}
	p.owners = map[string]string{}
	for name, r := range p.Manifest.Sources {
		for path := range r.Entries {
			p.owners[path] = name
		}
		p.known(name, r.Aliases, primary(slices.Collect(maps.Keys(r.Entries))))
		if n, ok := p.notes[name]; ok {
			n.recorded = true
			p.notes[name] = n
		}
	}
}

// taken reports whether path cannot hold a piece of source: another source
// owns it, this file already placed a piece there, or something that is
// not this source's entry is there (a note of the user's).
func (p *Planner) taken(path, source string, old map[string]string, placed map[string]bool) bool {
	if placed[path] {
		return true
	}
	if o, ok := p.owners[path]; ok && o != source {
		return true
	}
	if _, ok := old[path]; ok {
		return false
	}
	exists := p.Catalog.Has(path)
	_, broken := p.Catalog.Broken(path)
	return (exists || broken) && !p.provenance(path, source)
}

// provenance reports whether the entry at path names source in its Raw
// Concept's files (and was written by ingestion).
func (p *Planner) provenance(path, source string) bool {
	return slices.Contains(p.Catalog.Sources(path), source)
}

func (p *Planner) provenanceIndex() map[string][]string {
	if p.bySource == nil {
		p.bySource = map[string][]string{}
		for _, path := range p.Catalog.Paths() {
			for _, src := range p.Catalog.Sources(path) {
				p.bySource[src] = append(p.bySource[src], path)
			}
		}
	}
	return p.bySource
}

// Prune plans the removal of every source whose name starts with one of
// prefixes and that keep does not hold: the DELETE of each of its entries,
// one FilePlan with StatusRemoved per source, sorted by name. It must come
// after the Plan of every file of the call, whose names keep must hold too:
// an entry one of them now places is theirs.
//
// The sources are those the manifest records and those the provenance of
// ingested entries names, so that a lost manifest (or one whose write
// failed) still finds them. An entry is deleted only while it is still the
// source's: it exists, was written by ingestion, its provenance names the
// source, and no other source owns it. Anything else — an entry the user
// wrote or took over, another source's, one that no longer parses — is
// left alone. A source with nothing left to delete and no record plans
// nothing.
func (p *Planner) Prune(prefixes []string, keep map[string]bool) []FilePlan {
	p.index()
	selected := func(name string) bool {
		if keep[name] {
			return false
		}
		for _, pre := range prefixes {
			if strings.HasPrefix(name, pre) {
				return true
			}
		}
		return false
	}
	candidates := map[string][]string{}
	for name, r := range p.Manifest.Sources {
		if selected(name) {
			candidates[name] = append(candidates[name], slices.Collect(maps.Keys(r.Entries))...)
		}
	}
	for name, paths := range p.provenanceIndex() {
		if !selected(name) {
			continue
		}
		rec := p.Manifest.Sources[name]
		if rec == nil {
			candidates[name] = append(candidates[name], paths...)
			continue
		}
		// A recorded source's entries are the ones its record lists, and
		// one moved since (a MOVE keeps its file name) that no ingest has
		// followed yet: gone from a recorded path, found by its name, as
		// followMoves finds it. Another entry that names the source is a
		// person's copy (a snapshot, a file manager's duplicate).
		gone := map[string]bool{}
		for q := range rec.Entries {
			if _, broken := p.Catalog.Broken(q); !p.Catalog.Has(q) && !broken {
				gone[path.Base(q)] = true
			}
		}
		for _, q := range paths {
			if _, recorded := p.owners[q]; !recorded && gone[path.Base(q)] {
				candidates[name] = append(candidates[name], q)
			}
		}
	}
	var plans []FilePlan
	deleted := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(candidates)) {
		rec := p.Manifest.Sources[name]
		fp := FilePlan{Name: name, Format: api.FormatOf(name), Status: api.IngestRemoved, old: map[string]string{}}
		if rec != nil {
			fp.Format = rec.Format
		}
		// The audit log says why the entry went; "ingest <name>" would read
		// as if the source had been sent.
		reason := p.Reason
		if reason == "" {
			reason = "prune " + name
		}
		paths := candidates[name]
		sort.Strings(paths)
		for _, path := range slices.Compact(paths) {
			if deleted[path] || !p.provenance(path, name) {
				continue
			}
			if o, ok := p.owners[path]; ok && o != name {
				continue
			}
			if p.edited(path) {
				fp.Kept = append(fp.Kept, fmt.Sprintf("%s was edited since it was ingested: kept, though its source is gone", path))
				continue
			}
			if rec == nil {
				// Found by its provenance alone, as a copy of another
				// file: a person's, whichever of the two it is.
				if twin := p.copyOf(path, name); twin != "" {
					fp.Kept = append(fp.Kept, fmt.Sprintf("%s and %s hold the same ingested bytes, so one is a copy: both kept, though their source is gone", path, twin))
					continue
				}
			}
			deleted[path] = true
			fp.old[path] = ""
			if rec != nil {
				fp.old[path] = rec.Entries[path]
			}
			fp.Ops = append(fp.Ops, api.Operation{Type: api.OpDelete, Path: path, Reason: reason})
		}
		if len(fp.Ops) > 0 || rec != nil {
			plans = append(plans, fp)
		}
	}
	return plans
}

// Record applies the outcome of a plan's operations (applied[i] for
// Ops[i]) to the manifest: written pieces are recorded with their hash,
// failed ones keep what the manifest had, so that the next ingest retries
// them; the source's hash is recorded only when nothing failed. It returns
// the number of failed operations.
func (p *Planner) Record(fp FilePlan, applied []curate.Applied) int {
	if fp.Status == api.IngestRemoved {
		return p.recordRemoval(fp, applied)
	}
	if fp.entries == nil {
		return 0 // the source's hash matched: nothing was planned
	}
	rec := &SourceRecord{Format: fp.Format, Entries: maps.Clone(fp.entries), Aliases: fp.aliases}
	failed := 0
	for i, op := range fp.Ops {
		ok := i < len(applied) && applied[i].Status == api.StatusSuccess
		if !ok {
			failed++
			if h, had := fp.old[op.Path]; had {
				rec.Entries[op.Path] = h
			}
			continue
		}
		if op.Type != api.OpDelete {
			// Where curate wrote it: a folder of the tree spelt otherwise
			// (docs/format.md, "Paths") that only the disk knew.
			rec.Entries[applied[i].Path] = fp.Hashes[i]
		}
	}
	for to, from := range fp.moved {
		if _, ok := rec.Entries[to]; ok {
			if rec.Moved == nil {
				rec.Moved = map[string]string{}
			}
			rec.Moved[to] = from
		}
	}
	if failed == 0 {
		rec.Pending = fp.pending
		if !fp.leftBehind {
			rec.Hash = fp.hash
		}
	}
	p.Manifest.Sources[fp.Name] = rec
	return failed
}

// recordRemoval drops a pruned source's record once all its entries are
// deleted; an entry whose DELETE failed stays recorded (with no source
// hash, so that a re-added file is planned again) for the next prune to
// retry.
func (p *Planner) recordRemoval(fp FilePlan, applied []curate.Applied) int {
	rec := &SourceRecord{Format: fp.Format, Entries: map[string]string{}}
	for i, op := range fp.Ops {
		if i >= len(applied) || applied[i].Status != api.StatusSuccess {
			rec.Entries[op.Path] = fp.old[op.Path]
		}
	}
	if len(rec.Entries) == 0 {
		delete(p.Manifest.Sources, fp.Name)
	} else {
		p.Manifest.Sources[fp.Name] = rec
	}
	return len(rec.Entries)
}
