package search

import (
	"math"

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
// length: computeSchemaFingerprint hashes them), built without what TermField
// builds on the way: a token a term, a map of term frequencies, a pointer a
// location, two more copies of the text. Those were most of what building
// an index of chat sessions allocated (bench/build).
type textField struct {
	name   string
	text   string
	value  []byte // text, as bluge reads it back
	store  bool
	length int         // terms, positions shared or not: the norm's length
	terms  []fieldTerm // in order of first occurrence
	bytes  []byte      // the terms' text, one after another
	locs   []fieldLoc  // the terms' occurrences, term after term
}

// fieldTerm is one distinct term of a field: its text is
// f.bytes[start:end], its occurrences f.locs[first:last], in position
// order. Offsets are 32 bits (a field's text is at most maxFieldBytes): a
// batch holds every term and occurrence of its documents until bluge has
// made its segment.
type fieldTerm struct {
	f                       *textField
	start, end, first, last int32
}

// fieldLoc is one occurrence of a term: its position (from 1, after the
// field's offset) and its byte span in the text.
type fieldLoc struct{ pos, start, end int32 }

// maxFieldBytes is the longest text a field holds, so that its offsets and
// positions fit fieldLoc with room to spare (a file is at most
// api.DefaultMaxFileBytes unless the host raises that bound).
const maxFieldBytes = math.MaxInt32 / 2

// newTextField is the field name of text (at most maxFieldBytes); store
// keeps the text in the index, for excerpts and results.
func newTextField(name, text string, store bool) *textField {
	return &textField{name: name, text: text, value: []byte(text), store: store}
}

// Analyze analyzes the text, its positions counted after startOffset, and
// returns the last position taken (bluge's Document.Analyze places a
// second field of the same name after it).
func (f *textField) Analyze(startOffset int) int {
	lx := getLexicon()
	defer putLexicon(lx)
	a := analyzer{text: f.text, forIndex: true, terms: lx.scratchTerms(len(f.text)), noUnits: true, lex: lx}
	a.analyze()
	terms := a.terms
	f.length = len(terms)
	if len(terms) == 0 {
		lx.keepTerms(terms)
		return startOffset
	}
	// Group the occurrences by term, terms in order of first occurrence:
	// number the terms, count their occurrences, then lay the occurrences
	// out term after term.
	ids := lx.scratchIDs()
	of := make([]int32, len(terms))
	size := 0
	for i, t := range terms {
		id, ok := ids[t.text]
		if !ok {
			id = int32(len(f.terms))
			ids[t.text] = id
			f.terms = append(f.terms, fieldTerm{f: f, start: int32(size), end: int32(size + len(t.text))})
			size += len(t.text)
		}
		f.terms[id].last++
		of[i] = id
	}
	f.bytes = make([]byte, 0, size)
	next := int32(0)
	for i := range f.terms {
		n := f.terms[i].last
		f.terms[i].first, f.terms[i].last = next, next
		next += n
	}
	f.locs = make([]fieldLoc, len(terms))
	for i, t := range terms {
		ft := &f.terms[of[i]]
		if ft.first == ft.last {
			f.bytes = append(f.bytes, t.text...)
		}
		f.locs[ft.last] = fieldLoc{pos: int32(startOffset + t.pos), start: int32(t.start), end: int32(t.end)}
		ft.last++
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
	return 128 + len(f.name) + len(f.value) + 24*len(f.terms) + len(f.bytes) + 12*len(f.locs)
}

// Term implements segment.FieldTerm. bluge keeps the slice: it is capped
// at its length, so that nothing appended to it reaches the next term.
func (t *fieldTerm) Term() []byte { return t.f.bytes[t.start:t.end:t.end] }

// Frequency implements segment.FieldTerm.
func (t *fieldTerm) Frequency() int { return int(t.last - t.first) }

// EachLocation implements segment.FieldTerm.
func (t *fieldTerm) EachLocation(vl segment.VisitLocation) {
	for i := t.first; i < t.last; i++ {
		vl(&t.f.locs[i])
	}
}

// Field implements segment.Location: empty, the location is in the field
// that holds it.
func (l *fieldLoc) Field() string { return "" }

// Pos implements segment.Location.
func (l *fieldLoc) Pos() int { return int(l.pos) }

// Start implements segment.Location.
func (l *fieldLoc) Start() int { return int(l.start) }

// End implements segment.Location.
func (l *fieldLoc) End() int { return int(l.end) }

// Size implements segment.Location.
func (l *fieldLoc) Size() int { return 12 }
