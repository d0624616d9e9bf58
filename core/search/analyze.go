package search

import (
	"unicode"
	"unicode/utf8"

	"github.com/blugelabs/bluge/analysis"
	"github.com/blugelabs/bluge/analysis/lang/cjk"
	"github.com/blugelabs/bluge/analysis/lang/en"
	"github.com/blugelabs/bluge/analysis/token"
	"github.com/blugelabs/bluge/analysis/tokenizer"
)

// The analysis chain, shared by every field and by the query so that both
// sides always produce the same terms:
//
//  1. normalize: '_' becomes a space, and so does '.' before an ASCII letter
//     (snake_case, file.ext and a.b.c split into words; 3.14 stays whole);
//  2. bluge's Unicode (UAX #29) tokenizer: splits on spaces, punctuation,
//     '-' and '/', and emits each Han ideograph or kana as its own token;
//  3. CJK width folding, English possessive removal, lower case;
//  4. per token, split into runs of CJK script (Han, Kana, Hangul) and other
//     script: other runs drop English stop words and are Snowball-stemmed;
//     adjacent CJK runs are joined and turned into overlapping bigrams (a run
//     of one character stays a unigram); a Hangul run of 3 or more syllables
//     is also kept whole; when indexing (not for queries) every CJK
//     character is also indexed as a unigram, so one-character queries find
//     it inside longer runs.

var (
	unicodeTokenizer = tokenizer.NewUnicodeTokenizer()
	widthFilter      = cjk.NewWidthFilter()
	possessiveFilter = en.NewPossessiveFilter()
	lowerFilter      = token.NewLowerCaseFilter()
	stemFilter       = en.StemmerFilter()
	stopWords        = en.StopWords()
)

const (
	// maxTermBytes drops longer tokens (blobs, hashes): they are never
	// useful search terms and bloat the dictionary.
	maxTermBytes = 96
	// maxWholeRunes bounds the Hangul runs kept whole.
	maxWholeRunes = 16
)

// termKind tells how an analyzed term was produced.
type termKind uint8

const (
	kindWord    termKind = iota // a stemmed non-CJK word
	kindUnigram                 // one CJK character
	kindBigram                  // two adjacent CJK characters
	kindWhole                   // a whole Hangul word
)

// term is one analyzed term with its byte span in the analyzed text.
type term struct {
	text       string
	start, end int
	unit       int // index of the source unit (word or CJK run), 0-based
	kind       termKind
}

// unit is the source of one or more terms: a word, or a run of CJK text.
type unit struct {
	start, end int
	cjk        bool
}

// analyze runs the analysis chain over text. With forIndex, CJK characters
// are also emitted as unigrams. It returns the terms and the source units
// they came from (term.unit indexes units).
func analyze(text string, forIndex bool) ([]term, []unit) {
	buf := normalize(text)
	ts := unicodeTokenizer.Tokenize(buf)
	ts = widthFilter.Filter(ts)
	ts = possessiveFilter.Filter(ts)
	ts = lowerFilter.Filter(ts)

	a := analyzer{forIndex: forIndex}
	for _, t := range ts {
		a.token(t)
	}
	a.flushRun()
	return a.terms, a.units
}

// analyzer holds the state of one analyze call.
type analyzer struct {
	forIndex bool
	terms    []term
	units    []unit

	run      []rune // the pending CJK run
	runOffs  []int  // byte offset of each rune of run
	runEnd   int    // byte offset just past the run
	runStart int
}

// token splits one tokenizer token into CJK and non-CJK runs.
func (a *analyzer) token(t *analysis.Token) {
	exact := len(t.Term) == t.End-t.Start // false when width folding changed the bytes
	s := t.Term
	for len(s) > 0 {
		r, _ := utf8.DecodeRune(s)
		isCJK := cjkRune(r)
		n := 0
		for n < len(s) {
			r2, w := utf8.DecodeRune(s[n:])
			if cjkRune(r2) != isCJK {
				break
			}
			n += w
		}
		seg := s[:n]
		off := len(t.Term) - len(s)
		start, end := t.Start, t.End
		if exact {
			start, end = t.Start+off, t.Start+off+n
		}
		if isCJK {
			a.cjk(seg, start, end, exact)
		} else {
			a.flushRun()
			a.word(seg, start, end)
		}
		s = s[n:]
	}
}

// word emits a stemmed non-CJK word unless it is a stop word.
func (a *analyzer) word(w []byte, start, end int) {
	if len(w) > maxTermBytes || stopWords[string(w)] {
		return
	}
	st := stemFilter.Filter(analysis.TokenStream{{Term: w}})
	a.units = append(a.units, unit{start: start, end: end})
	a.terms = append(a.terms, term{text: string(st[0].Term), start: start, end: end, unit: len(a.units) - 1, kind: kindWord})
}

// cjk adds a CJK segment to the pending run, or starts a new run when the
// segment is not adjacent to it.
func (a *analyzer) cjk(seg []byte, start, end int, exact bool) {
	if len(a.run) > 0 && start != a.runEnd {
		a.flushRun()
	}
	if len(a.run) == 0 {
		a.runStart = start
	}
	off := start
	for _, r := range string(seg) {
		a.run = append(a.run, r)
		a.runOffs = append(a.runOffs, off)
		if exact {
			off += utf8.RuneLen(r)
		}
	}
	a.runEnd = end
}

// flushRun emits the terms of the pending CJK run.
func (a *analyzer) flushRun() {
	n := len(a.run)
	if n == 0 {
		return
	}
	a.units = append(a.units, unit{start: a.runStart, end: a.runEnd, cjk: true})
	u := len(a.units) - 1
	endOf := func(i int) int { // byte offset just past rune i
		if i+1 < n {
			return max(a.runOffs[i+1], a.runOffs[i])
		}
		return a.runEnd
	}
	if n == 1 || a.forIndex {
		for i, r := range a.run {
			a.terms = append(a.terms, term{text: string(r), start: a.runOffs[i], end: endOf(i), unit: u, kind: kindUnigram})
		}
	}
	for i := 0; i+1 < n; i++ {
		a.terms = append(a.terms, term{text: string(a.run[i : i+2]), start: a.runOffs[i], end: endOf(i + 1), unit: u, kind: kindBigram})
	}
	if n >= 3 && n <= maxWholeRunes && hasHangul(a.run) {
		a.terms = append(a.terms, term{text: string(a.run), start: a.runStart, end: a.runEnd, unit: u, kind: kindWhole})
	}
	a.run, a.runOffs = a.run[:0], a.runOffs[:0]
}

// normalize copies text, turning '_' into a space, and '.' into a space when
// an ASCII letter follows it. Byte offsets are unchanged.
func normalize(text string) []byte {
	b := []byte(text)
	for i, c := range b {
		switch c {
		case '_':
			b[i] = ' '
		case '.':
			if i+1 < len(b) && isASCIILetter(b[i+1]) {
				b[i] = ' '
			}
		}
	}
	return b
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// cjkRune reports whether r is written without spaces between words in CJK
// text (Han, Hiragana, Katakana) or is Hangul.
func cjkRune(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		r == 0x30FC // katakana-hiragana prolonged sound mark
}

func hasHangul(rs []rune) bool {
	for _, r := range rs {
		if unicode.Is(unicode.Hangul, r) {
			return true
		}
	}
	return false
}

// fieldAnalyzer is the bluge analyzer of every text field.
type fieldAnalyzer struct{}

// Analyze implements bluge.Analyzer.
func (fieldAnalyzer) Analyze(input []byte) analysis.TokenStream {
	terms, _ := analyze(string(input), true)
	toks := make([]analysis.Token, len(terms))
	ts := make(analysis.TokenStream, len(terms))
	for i, t := range terms {
		toks[i] = analysis.Token{Term: []byte(t.text), Start: t.start, End: t.end, PositionIncr: 1, Type: analysis.AlphaNumeric}
		ts[i] = &toks[i]
	}
	return ts
}
