// Package ingest splits files into Context Tree entries, deterministically
// and without a language model: a markdown note whole, keeping its shape
// (its folders, front matter, headings and links to other notes), plain
// text by paragraph, JSON/JSONL by record, CSV/TSV by row, e-mail messages,
// iCalendar events, source code by top-level symbol and chat transcripts by
// turn or by session. Each piece becomes one entry placed under a domain/topic derived
// from the source's kind, name and content (the rules are in docs/ABI.md
// §4.11), with its provenance — source file, lines or turn ids,
// timestamp — in the entry's Raw Concept.
//
// Planner.Plan compares the pieces with what an earlier ingest of the same
// source wrote (the Manifest, kept in .arbor/ingest.json, or, when it is
// lost, the provenance of the entries themselves) and returns the curate
// operations that bring the tree in step: nothing for an unchanged file,
// UPDATE for a piece whose text or provenance changed (where its entry now
// lives, if it was moved), ADD for a new one, DELETE for a piece that
// disappeared; Planner.Link resolves the links between the notes once every
// file of a call is placed. Planner.Prune plans the DELETEs of
// the entries of sources that are gone, for an ingest that mirrors a
// folder. Run is the whole "ingest" method: it plans every file, applies
// the operations through the engine's curate path and keeps the manifest.
//
// Splitting and planning are pure: no I/O, no clock, no randomness. Run
// reaches files only through host.FS (the manifest); like the rest of the
// core, the package builds for wasip1.
package ingest

import (
	"fmt"
	"hash/fnv"
	"path"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

// maxPieceBytes bounds the text of one entry: a longer piece is cut into
// parts at paragraph, then line boundaries, so that every entry stays well
// below the engine's default 1 MiB file limit. Splitters make pieces of a
// readable size themselves; this only catches an enormous section, record
// or chat session.
const maxPieceBytes = 256 << 10

// partBytes is the size long prose is cut to: a markdown section or a
// plain-text paragraph over it becomes entries of whole paragraphs (else
// lines) of at most partBytes each, so that an entry stays a unit a reader,
// or a model, takes in at once (about 4,000 tokens), not a 256 KiB blob.
const partBytes = 16 << 10

// contextTurns is how many preceding turns of the session a per-turn chat
// entry carries in its flow (IngestOptions.ContextTurns; nil means 2).
func contextTurns(o api.IngestOptions) int {
	if o.ContextTurns == nil {
		return 2
	}
	return max(*o.ContextTurns, 0)
}

// Piece is one entry-to-be: where it goes, what it says, where it came from.
type Piece struct {
	// Folder is domain/topic[/subtopic]; Name the entry's file name without
	// ".md". Path joins them.
	Folder, Name string
	Title        string
	// Text is the narrative: the piece's content.
	Text string
	// Task says what the piece is and where in the source it sits (heading
	// path, lines, record, turn ids); Flow holds surrounding context (the
	// turns a chat turn replies to); Author and Timestamp come from the
	// content (a sender, a speaker, a message or session date), never from
	// the file system.
	Task, Flow, Author, Timestamp string
	// Source is the file name, recorded in the Raw Concept's files.
	Source string
	// Summary, Tags, Keywords, Created, Updated and Extra come from a
	// note's own front matter (tree.NoteMatter).
	Summary          string
	Tags, Keywords   []string
	Created, Updated time.Time
	Extra            []api.KeyValue
	// Links are the other notes the piece links to, as written (noteLinks);
	// Relations the entry paths they resolve to (Planner.Resolve).
	Links     []link
	Relations []string
}

// Path is the entry path of the piece.
func (p Piece) Path() string { return p.Folder + "/" + p.Name + ".md" }

// Hash identifies the piece's content and provenance: an entry is rewritten
// only when it changes.
func (p Piece) Hash() string {
	h := fnv.New128a()
	for _, s := range []string{p.Title, p.Text, p.Task, p.Flow, p.Author, p.Timestamp, p.Source} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if p.Summary != "" || len(p.Tags)+len(p.Keywords)+len(p.Extra)+len(p.Relations) > 0 || !p.Created.IsZero() || !p.Updated.IsZero() {
		// What a note's front matter and links add; a piece without any
		// hashes as it always did, so that trees ingested before are
		// unchanged.
		fmt.Fprintf(h, "%s\x00%q\x00%q\x00%q\x00%q\x00%s\x00%s\x00", p.Summary, p.Tags, p.Keywords, p.Extra, p.Relations,
			p.Created.UTC().Format(time.RFC3339), p.Updated.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Operation is the curate operation that writes the piece at its path: typ
// is ADD, UPDATE or UPSERT.
func (p Piece) Operation(typ, reason string) api.Operation {
	rc := &api.RawConcept{Task: p.Task, Files: []string{p.Source}, Flow: p.Flow, Author: p.Author, Timestamp: p.Timestamp}
	op := api.Operation{
		Type:    typ,
		Path:    p.Path(),
		Title:   p.Title,
		Summary: p.Summary,
		Content: api.Content{RawConcept: rc, Narrative: &api.Narrative{Text: p.Text},
			Tags: p.Tags, Keywords: p.Keywords, Relations: p.Relations},
		Reason: reason,
		Stamp:  p.Hash(),
	}
	if !p.Created.IsZero() || !p.Updated.IsZero() || len(p.Extra) > 0 {
		op.Note = &api.NoteMeta{CreatedAt: p.Created, UpdatedAt: p.Updated, Extra: p.Extra}
	}
	return op
}

// Split cuts one file into pieces and reports the format it used. A file
// that is too large, not text (api.SourceText), or malformed for its format
// is refused with an error wrapping api.ErrBadInput that says where and
// why; then no piece is returned.
func Split(f api.SourceFile, opts api.IngestOptions) ([]Piece, api.Format, error) {
	text, err := api.SourceText(f, opts.MaxSourceBytes)
	if err != nil {
		return nil, api.FormatOf(f.Name), err
	}
	src, format, err := split(f.Name, text, opts)
	if err != nil {
		return nil, format, err
	}
	return src.pieces, format, nil
}

// split is Split of a source's text, already checked; the source holds
// the pieces, and the warnings and aliases of a note.
func split(name, text string, opts api.IngestOptions) (*source, api.Format, error) {
	format := api.FormatOf(name)
	src := newSource(name, text, opts)
	var err error
	switch format {
	case api.FormatMarkdown:
		err = splitMarkdown(src)
	case api.FormatJSON:
		format, err = splitJSON(src)
	case api.FormatJSONL:
		format, err = splitJSONL(src)
	case api.FormatCSV:
		err = splitCSV(src, ',')
	case api.FormatTSV:
		err = splitCSV(src, '\t')
	case api.FormatEmail:
		err = splitEmail(src)
	case api.FormatCalendar:
		err = splitCalendar(src)
	case api.FormatGo:
		err = splitGo(src)
	case api.FormatJS:
		err = splitJS(src)
	case api.FormatPython:
		err = splitPython(src)
	default:
		err = splitText(src)
	}
	if err != nil {
		return nil, format, err
	}
	return src, format, nil
}

func badf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", api.ErrBadInput, fmt.Sprintf(format, args...))
}

// lineAt is the 1-based line of byte offset i.
func lineAt(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

// source accumulates the pieces of one file and keeps their names unique.
type source struct {
	name   string // the file name as given
	stem   string // name without its extension
	text   string // content, CRLF normalized to LF
	opts   api.IngestOptions
	pieces []Piece
	used   map[string]int // entry paths taken, for suffixes
	// warnings say what was read otherwise than written (a note's front
	// matter that does not parse); aliases are a note's other names, which
	// wikilinks to it may use.
	warnings []string
	aliases  []string
}

func (s *source) warnf(format string, args ...any) {
	s.warnings = append(s.warnings, fmt.Sprintf(format, args...))
}

func newSource(name, text string, opts api.IngestOptions) *source {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.TrimPrefix(text, "\uFEFF")
	return &source{name: name, stem: strings.TrimSuffix(name, path.Ext(name)), text: text, opts: opts, used: map[string]int{}}
}

// folder is the domain/topic of a piece: the Domain option, else the
// given domain; the topic is given by the format (usually the file's
// name without its extension, as a slug, so that a file's entries sit
// together and two files never share a topic by accident).
func (s *source) folder(domain, topic string) string {
	if s.opts.Domain != "" {
		domain = folderSlug(s.opts.Domain)
	}
	return domain + "/" + topic
}

// topic is the default topic: the slug of the file name without its
// extension, folders included ("notes/2026/plan.md" → notes_2026_plan).
func (s *source) topic() string { return folderSlug(s.stem) }

// folderSlug is the slug of a folder the engine creates: a name Windows
// reserves ("con", "aux") takes "_2", as an entry named so does, since
// the planner can only suffix an entry's name, never its folder.
func folderSlug(name string) string {
	s := tree.Slug(name)
	if api.CheckPortableName(s) != nil {
		s += "_2"
	}
	return s
}

// add appends a piece, cutting a text over maxPieceBytes into parts
// (addParts).
func (s *source) add(p Piece) {
	s.addParts(p, cutText(p.Text, maxPieceBytes), func(int, part) string { return p.Task })
}

// addParts appends the parts of a piece, each with the task task gives
// the i-th, and gives every piece a unique entry name: the parts of a piece cut
// in several are titled "… (part 2 of 3)", or "…: Rollback (part 2 of 3)"
// after the sections they hold, and named "…_part_02", and a
// title that repeats one already used in the folder gets "_2", "_3" in
// document order.
func (s *source) addParts(p Piece, parts []part, task func(i int, pt part) string) {
	p.Source = s.name
	if p.Name == "" {
		p.Name = tree.EntryName(p.Title)
	}
	for i, pt := range parts {
		q := p
		q.Text, q.Task = pt.text, task(i, pt)
		if len(parts) > 1 {
			q.Title = fmt.Sprintf("%s (part %d of %d)", p.Title, i+1, len(parts))
			if pt.sections != "" {
				q.Title = fmt.Sprintf("%s: %s (part %d of %d)", p.Title, pt.sections, i+1, len(parts))
			}
			q.Name = fmt.Sprintf("%s_part_%02d", p.Name, i+1)
		}
		key := q.Folder + "/" + q.Name
		if n := s.used[key]; n > 0 {
			// The next free suffix: a title may itself end like one ("A 2").
			name := q.Name
			for s.used[key] > 0 {
				n++
				q.Name = fmt.Sprintf("%s_%d", name, n)
				key = q.Folder + "/" + q.Name
			}
			s.used[q.Folder+"/"+name] = n
		}
		s.used[key]++
		s.pieces = append(s.pieces, q)
	}
}

// lines describes a 1-based line range.
func lines(from, to int) string {
	if from == to {
		return fmt.Sprintf("line %d", from)
	}
	return fmt.Sprintf("lines %d-%d", from, to)
}

// shortTitle makes a title of at most 72 characters from the first line of
// text, cut at a word boundary.
func shortTitle(text, fallback string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.Join(strings.Fields(strings.Trim(line, "#>*-_ \t`")), " ")
	if line == "" {
		return fallback
	}
	const max = 72
	r := []rune(line)
	if len(r) <= max {
		return line
	}
	cut := string(r[:max])
	if i := strings.LastIndexByte(cut, ' '); i > max/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:") + "…"
}
