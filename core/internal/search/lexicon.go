package search

// A lexicon remembers what the analysis chain made of the tokens of
// earlier analyze calls: their lexemes, and the stems of joined compounds.
// A text repeats the words of the texts before it, and stemming them again
// was a third of building an index of chat sessions (bench/build). Each
// analyze call takes a lexicon (getLexicon) and gives it back when done,
// so that bluge's analysis workers, which run concurrently natively, never
// share one. What the chain makes of a token depends on the token alone,
// so a lexicon changes no term.
type lexicon struct {
	// Two generations of each cache: when the current one is full it
	// becomes the old one, and what is looked up there again moves back.
	// The words a text repeats stay; the memory is bounded.
	lexemes, oldLexemes map[string]lexeme
	stems, oldStems     map[string]string

	// Scratch space of textField.Analyze, kept between calls unless a large
	// text made it large.
	terms []term
	ids   map[string]int32
}

// lexiconSize bounds each generation of a lexicon's caches. 2,000
// LongMemEval-S sessions (20 MB of chat) hold 3.3 million tokens, 51,000
// distinct ones; the 16,000 most frequent make 97.5 % of the text, the
// 32,000 most frequent 99.4 % (twice the size built no faster). A full
// generation of lexemes takes about 2.5 MB.
const lexiconSize = 1 << 14

// lexicons are the lexicons not in use: as many as analyze calls ran at
// once, up to four (bluge's analysis workers), each up to twice
// lexiconSize lexemes. They are kept for the life of the process: not in
// a sync.Pool, which drops what it holds at garbage collections, and a
// build collects many times while bluge makes a segment, between two
// batches of analysis (a lexicon was made anew for each batch).
var lexicons = make(chan *lexicon, 4)

// getLexicon returns a lexicon not in use; putLexicon gives it back.
func getLexicon() *lexicon {
	select {
	case lx := <-lexicons:
		return lx
	default:
		return &lexicon{lexemes: map[string]lexeme{}, stems: map[string]string{}}
	}
}

func putLexicon(lx *lexicon) {
	select {
	case lexicons <- lx:
	default: // more ran at once than are kept
	}
}

// lexeme returns the lexeme cached for a token, if any.
func (lx *lexicon) lexeme(tok []byte) (lexeme, bool) {
	if l, ok := lx.lexemes[string(tok)]; ok {
		return l, true
	}
	l, ok := lx.oldLexemes[string(tok)]
	if ok {
		lx.putLexeme(string(tok), l)
	}
	return l, ok
}

func (lx *lexicon) putLexeme(tok string, l lexeme) {
	if len(lx.lexemes) >= lexiconSize {
		lx.oldLexemes, lx.lexemes = lx.lexemes, make(map[string]lexeme, lexiconSize/4)
	}
	lx.lexemes[tok] = l
}

// stem returns the stem cached for a word, if any.
func (lx *lexicon) stem(w string) (string, bool) {
	if s, ok := lx.stems[w]; ok {
		return s, true
	}
	s, ok := lx.oldStems[w]
	if ok {
		lx.putStem(w, s)
	}
	return s, ok
}

func (lx *lexicon) putStem(w, s string) {
	if len(lx.stems) >= lexiconSize {
		lx.oldStems, lx.stems = lx.stems, make(map[string]string, lexiconSize/4)
	}
	lx.stems[w] = s
}

// maxScratch bounds the scratch a lexicon keeps: the terms of about 64 KB
// of text.
const maxScratch = 1 << 13

// scratchTerms returns an empty slice of terms, with room for those of
// about n bytes of text.
func (lx *lexicon) scratchTerms(n int) []term {
	// A word takes about six bytes of English and makes about one term.
	words := n/6 + 1
	if cap(lx.terms) < words {
		return make([]term, 0, words)
	}
	return lx.terms[:0]
}

// keepTerms keeps ts for the next scratchTerms, unless it is large.
func (lx *lexicon) keepTerms(ts []term) {
	if cap(ts) <= maxScratch {
		clear(ts) // the terms' strings can go
		lx.terms = ts[:0]
	}
}

// scratchIDs returns an empty map.
func (lx *lexicon) scratchIDs() map[string]int32 {
	if lx.ids == nil {
		return make(map[string]int32)
	}
	return lx.ids
}

// keepIDs keeps m for the next scratchIDs, emptied, unless it is large.
func (lx *lexicon) keepIDs(m map[string]int32) {
	if len(m) <= maxScratch/4 {
		clear(m)
		lx.ids = m
	} else {
		lx.ids = nil
	}
}
