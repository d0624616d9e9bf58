package search

import (
	"unicode/utf8"

	"github.com/blevesearch/segment"
	"github.com/blugelabs/bluge/analysis"
)

// tokenize calls fn with each word of text, in order, exactly as bluge's
// Unicode tokenizer (blevesearch/segment's UAX #29 scanner) would emit it,
// but reads ASCII words itself. The scanner is a large generated state
// machine that allocates per word; under WebAssembly it cost 4.4 s of a
// 7 MB ingest, and most text is ASCII. A scanner's word never spans ASCII
// white space, so text is cut at white space and each piece holding a
// non-ASCII byte is handed to the scanner whole. TestTokenizeMatchesBluge
// holds the two to the same tokens.
//
// fn is given one token, reused from call to call, and may change its Term
// in place: the words are never gathered, which under wasm (a single-
// threaded garbage collector) halves the cost of analysing a big text.
//
// One difference is deliberate: on invalid UTF-8 the scanner stops and
// drops the rest of the text, while here only that piece is affected.
func tokenize(text []byte, fn func(*analysis.Token)) {
	var tok analysis.Token
	emit := func(start, end int, typ analysis.TokenType) {
		tok = analysis.Token{Term: text[start:end:end], Start: start, End: end, PositionIncr: 1, Type: typ}
		fn(&tok)
	}
	for i := 0; i < len(text); {
		if isASCIISpace(text[i]) {
			i++
			continue
		}
		start, ascii := i, true
		for i < len(text) && !isASCIISpace(text[i]) {
			ascii = ascii && text[i] < utf8.RuneSelf
			i++
		}
		if ascii {
			asciiWords(text[start:i], start, emit)
		} else {
			scanWords(text[start:i], start, emit)
		}
	}
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// ASCII word classes of UAX #29 as the scanner has them.
const (
	wbOther  = iota
	wbLetter // A-Z a-z
	wbDigit  // 0-9
	wbUnder  // '_' (ExtendNumLet)
	wbMidL   // ':' (MidLetter): joins letters
	wbMidN   // ',' ';' (MidNum): joins digits
	wbMidLN  // '.' '\'' (MidNumLet, Single_Quote): joins either
)

var wbClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = wbLetter, wbLetter
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = wbDigit
	}
	t['_'], t[':'], t[','], t[';'], t['.'], t['\''] = wbUnder, wbMidL, wbMidN, wbMidN, wbMidLN, wbMidLN
	return t
}()

// asciiWords emits the words of an ASCII piece that starts at byte off of
// the text. A word is the longest run of letters, digits and '_' in which
// a mid character may stand alone between two letters (a colon, full
// stop or apostrophe) or two digits (a comma, semicolon, full stop or
// apostrophe): "can't", "a:b", "3.14", "1,000".
// It is a number when it has digits and no letter.
func asciiWords(p []byte, off int, emit func(start, end int, typ analysis.TokenType)) {
	for i := 0; i < len(p); {
		if k := wbClass[p[i]]; k != wbLetter && k != wbDigit && k != wbUnder {
			i++
			continue
		}
		start, letters, digits := i, false, false
	word:
		for ; i < len(p); i++ {
			switch wbClass[p[i]] {
			case wbLetter:
				letters = true
			case wbDigit:
				digits = true
			case wbUnder:
			case wbMidL, wbMidN, wbMidLN:
				if i+1 == len(p) || !joins(wbClass[p[i]], wbClass[p[i-1]], wbClass[p[i+1]]) {
					break word
				}
			default:
				break word
			}
		}
		typ := analysis.AlphaNumeric
		if digits && !letters {
			typ = analysis.Numeric
		}
		emit(off+start, off+i, typ)
	}
}

// joins reports whether a mid character of class mid stands inside a word
// between characters of classes before and after.
func joins(mid, before, after uint8) bool {
	if before != after {
		return false
	}
	switch before {
	case wbLetter:
		return mid == wbMidL || mid == wbMidLN
	case wbDigit:
		return mid == wbMidN || mid == wbMidLN
	}
	return false
}

// scanWords emits the words blevesearch/segment finds in a piece that
// starts at byte off of the text.
func scanWords(p []byte, off int, emit func(start, end int, typ analysis.TokenType)) {
	s := segment.NewWordSegmenterDirect(p)
	at := off
	for s.Segment() {
		n := len(s.Bytes())
		if t := s.Type(); t != segment.None {
			typ := analysis.AlphaNumeric
			switch t {
			case segment.Ideo, segment.Kana:
				typ = analysis.Ideographic
			case segment.Number:
				typ = analysis.Numeric
			}
			emit(at, at+n, typ)
		}
		at += n
	}
}
