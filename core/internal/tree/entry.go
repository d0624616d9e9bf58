// Package tree holds the Context Tree's on-disk contracts: path rules, the
// entry codec (YAML front matter plus fixed sections), context.md files and
// the relation index with backlinks. It does no I/O: callers pass bytes in
// and get bytes out, so the same code serves every host.
package tree

import (
	"slices"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
)

// Entry is one knowledge entry, the parsed form of a markdown file.
type Entry struct {
	// Path is relative to the memory root, e.g. "engineering/billing/invoice_retry_policy.md".
	Path string `json:"path"`

	// Front matter.
	Title     string    `json:"title"`
	Summary   string    `json:"summary,omitempty"`
	Tags      []string  `json:"tags,omitempty"`
	Related   []string  `json:"related,omitempty"`
	Keywords  []string  `json:"keywords,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Extra holds front-matter keys this codec does not know, in their
	// original order, so that a rewrite never loses them.
	Extra []KeyValue `json:"extra,omitempty"`
	// Comments holds the front matter's YAML comments in order: Key is the
	// top-level key each was written above, inside or beside ("" after the
	// last key), Value its text after the "#". Render writes each on its
	// own line above its key, so that a rewrite loses none.
	Comments []KeyValue `json:"comments,omitempty"`

	// Sections.
	Reason     string         `json:"reason,omitempty"`
	RawConcept api.RawConcept `json:"rawConcept"`
	Narrative  api.Narrative  `json:"narrative"`
	Facts      []api.Fact     `json:"facts,omitempty"`
	Snippets   []string       `json:"snippets,omitempty"`
	// LegacyRelations are the @path lines of a legacy "## Relations" section.
	LegacyRelations []string `json:"legacyRelations,omitempty"`
	// Preamble is the text before the first "## " heading (minus a leading
	// "# Title" line that repeats the title); Obsidian notes live here.
	Preamble string `json:"preamble,omitempty"`
	// Other holds sections the codec does not know, in order.
	Other []Section `json:"other,omitempty"`
}

// Clone returns a deep copy of e: a catalog shares its entries, so code
// that changes one works on a clone.
func (e *Entry) Clone() *Entry {
	n := *e
	n.Tags = slices.Clone(e.Tags)
	n.Related = slices.Clone(e.Related)
	n.Keywords = slices.Clone(e.Keywords)
	n.Extra = slices.Clone(e.Extra)
	n.Comments = slices.Clone(e.Comments)
	n.RawConcept.Files = slices.Clone(e.RawConcept.Files)
	n.Facts = slices.Clone(e.Facts)
	n.Snippets = slices.Clone(e.Snippets)
	n.LegacyRelations = slices.Clone(e.LegacyRelations)
	n.Other = slices.Clone(e.Other)
	return &n
}

// KeyValue is one preserved front-matter key (api.KeyValue, which curate
// operations carry for ingested notes).
type KeyValue = api.KeyValue

// IngestReason begins the reason of every entry ingestion writes,
// followed by the source's name ("ingest notes/a.md").
const IngestReason = "ingest "

// IngestedFrom returns the sources an entry written by ingestion was made
// from (its Raw Concept's files), nil for any other entry.
func (e *Entry) IngestedFrom() []string {
	if !strings.HasPrefix(e.Reason, IngestReason) || len(e.RawConcept.Files) == 0 {
		return nil
	}
	return e.RawConcept.Files
}

// ReplyPrefix begins each line of a chat turn's flow (rawConcept.flow),
// the turns it replies to, as ingestion writes it: an entry whose flow
// starts with it is a piece of an exchange, which the engine's evidence
// rules (siblings, openers, own words) recognize by it.
const ReplyPrefix = "In reply to "

// Section is an unknown "## " section, kept verbatim.
type Section struct {
	Heading string `json:"heading"`
	Body    string `json:"body"`
}

// ConflictHeading is the heading of the "## " section in which a merge of
// two versions of a file (core/internal/merge) keeps both sides of what they
// changed differently. The file still parses (the section is an unknown
// one, kept as it is); open reports it and an UPDATE of the entry resolves
// it, dropping the section.
const ConflictHeading = "Merge Conflict"

// conflictKey is ConflictHeading as sectionKey reads it.
var conflictKey = sectionKey(ConflictHeading)

// IsConflictSection reports whether a "## " heading is ConflictHeading.
func IsConflictSection(heading string) bool { return sectionKey(heading) == conflictKey }

// Conflicted reports whether e holds a merge conflict section.
func (e *Entry) Conflicted() bool {
	return slices.ContainsFunc(e.Other, func(s Section) bool { return IsConflictSection(s.Heading) })
}

// WithoutConflict returns e without its merge conflict sections, and
// whether it had any; e is not changed.
func (e *Entry) WithoutConflict() (*Entry, bool) {
	if !e.Conflicted() {
		return e, false
	}
	n := e.Clone()
	n.Other = slices.DeleteFunc(n.Other, func(s Section) bool { return IsConflictSection(s.Heading) })
	return n, true
}

// Conflicted reports whether the context file holds a merge conflict
// section (a "## Merge Conflict" heading outside code).
func (c *Context) Conflicted() bool {
	_, secs := splitSections(c.Body)
	return slices.ContainsFunc(secs, func(s rawSection) bool { return IsConflictSection(s.heading) })
}
