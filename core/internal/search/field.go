package search

import (
	"github.com/blugelabs/bluge/analysis"
	segment "github.com/blugelabs/bluge_segment_api"
)

// textField is a searchable field of a document, analyzed by the chain of
// analyze.go, with the position and span of every term: positions let
// quoted phrases match, spans let Search read where a query's terms occur
// from the index instead of analysing the text again. Storing them makes
// the index about a quarter larger (LoCoMo's 5,882 turns in one segment:
// 2.54 MB, 1.99 MB without).
//
// It gives bluge what a bluge.TermField with an analyzer and
// SearchTermPositions gives (the same terms, frequencies, locations and
// length: schemaFingerprint hashes them), built without what TermField
// builds on the way: a token a term, a map of term frequencies, a pointer a
// location, two more copies of the text. Those were most of what building
// an index of chat sessions allocated (bench/build).
type textField struct {
	name   string
	text   string
	value  []byte // text, as bluge reads it back
	store  bool
	length int // terms, positions shared or not: the norm's length
	terms  []fieldTerm
}

// fieldTerm is one distinct term of a field and where it occurs, in
// position order.
type fieldTerm struct {
	text []byte
	locs []fieldLoc
}

// fieldLoc is one occurrence of a term: its position (from 1, after the
// field's offset) and its byte span in the text.
type fieldLoc struct{ pos, start, end int }

// newTextField is the field name of text; store keeps the text in the
// index, for excerpts and results.
func newTextField(name, text string, store bool) *textField {
	return &textField{name: name, text: text, value: []byte(text), store: store}
}

// Analyze analyzes the text, its positions counted after startOffset, and
// returns the last position taken (bluge's Document.Analyze places a
// second field of the same name after it).
func (f *textField) Analyze(startOffset int) int {
	lx := lexicons.Get().(*lexicon)
	defer lexicons.Put(lx)
	a := analyzer{text: f.text, forIndex: true, terms: lx.scratchTerms(len(f.text)), noUnits: true, lex: lx}
	a.analyze()
	terms := a.terms
	f.length = len(terms)
	if len(terms) == 0 {
		lx.keepTerms(terms)
		return startOffset
	}
	// Group the occurrences by term, terms in order of first occurrence:
	// first count them, then lay every term's occurrences out in one array.
	ids := lx.scratchIDs()
	of := make([]int32, len(terms))
	var counts []int32
	size := 0
	for i, t := range terms {
		id, ok := ids[t.text]
		if !ok {
			id = int32(len(counts))
			ids[t.text] = id
			counts = append(counts, 0)
			size += len(t.text)
		}
		counts[id]++
		of[i] = id
	}
	f.terms = make([]fieldTerm, len(counts))
	locs := make([]fieldLoc, len(terms))
	// One buffer holds the bytes of every term; bluge keeps the slices,
	// each capped at its length so that nothing appended to one reaches
	// the next.
	buf := make([]byte, 0, size)
	next := 0
	for i, t := range terms {
		ft := &f.terms[of[i]]
		if ft.text == nil {
			buf = append(buf, t.text...)
			ft.text = buf[len(buf)-len(t.text) : len(buf) : len(buf)]
			n := int(counts[of[i]])
			ft.locs = locs[next : next : next+n]
			next += n
		}
		ft.locs = append(ft.locs, fieldLoc{pos: startOffset + t.pos, start: t.start, end: t.end})
	}
	last := startOffset + terms[len(terms)-1].pos
	lx.keepTerms(terms)
	lx.keepIDs(ids)
	return last
}

// Name implements segment.Field.
func (f *textField) Name() string { return f.name }

// Length implements segment.Field: the number of terms.
func (f *textField) Length() int { return f.length }

// EachTerm implements segment.Field.
func (f *textField) EachTerm(vt segment.VisitTerm) {
	for i := range f.terms {
		vt(&f.terms[i])
	}
}

// Value implements segment.Field.
func (f *textField) Value() []byte { return f.value }

// Index implements segment.Field: the field is searchable.
func (f *textField) Index() bool { return true }

// Store implements segment.Field.
func (f *textField) Store() bool { return f.store }

// IndexDocValues implements segment.Field: nothing sorts or aggregates on
// a text field.
func (f *textField) IndexDocValues() bool { return false }

// AnalyzedTokenFrequencies implements bluge.Field; only bluge's composite
// fields read it, and an Index has none.
func (f *textField) AnalyzedTokenFrequencies() analysis.TokenFrequencies { return nil }

// PositionIncrementGap implements bluge.Field: the gap bluge puts between
// two fields of one name (a document has one of each).
func (f *textField) PositionIncrementGap() int { return 100 }

// Size implements bluge.Field: about the bytes the field holds.
func (f *textField) Size() int {
	n := 64 + len(f.name) + len(f.value)
	for _, t := range f.terms {
		n += 48 + len(t.text) + 24*len(t.locs)
	}
	return n
}

// Term implements segment.FieldTerm.
func (t *fieldTerm) Term() []byte { return t.text }

// Frequency implements segment.FieldTerm.
func (t *fieldTerm) Frequency() int { return len(t.locs) }

// EachLocation implements segment.FieldTerm.
func (t *fieldTerm) EachLocation(vl segment.VisitLocation) {
	for i := range t.locs {
		vl(&t.locs[i])
	}
}

// Field implements segment.Location: empty, the location is in the field
// that holds it.
func (l *fieldLoc) Field() string { return "" }

// Pos implements segment.Location.
func (l *fieldLoc) Pos() int { return l.pos }

// Start implements segment.Location.
func (l *fieldLoc) Start() int { return l.start }

// End implements segment.Location.
func (l *fieldLoc) End() int { return l.end }

// Size implements segment.Location.
func (l *fieldLoc) Size() int { return 24 }
