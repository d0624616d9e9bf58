package search

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/blugelabs/bluge/analysis"
	"github.com/blugelabs/bluge/analysis/tokenizer"
)

// tokenizeAlphabet has a character of every class the scanner tells apart
// in ASCII, white space of every kind, and non-ASCII letters, digits,
// marks, spaces and ideographs next to them.
var tokenizeAlphabet = []string{
	"a", "Z", "1", "_", ".", ":", ",", ";", "'", "\"", "-", "#",
	" ", "\n", "\r", "\t", "\v", "\f",
	"é", "\u0301", "日", "カ", "한", "٣", "\u00a0", "\u200d", "ß",
}

func TestTokenizeMatchesBluge(t *testing.T) {
	want := tokenizer.NewUnicodeTokenizer()
	check := func(s string) {
		t.Helper()
		if got, exp := dumpTokens(tokenStream([]byte(s))), dumpTokens(want.Tokenize([]byte(s))); got != exp {
			t.Fatalf("tokenize(%q):\n got %s\nwant %s", s, got, exp)
		}
	}
	// Every string of up to four characters of the alphabet.
	var all func(prefix string, n int)
	all = func(prefix string, n int) {
		check(prefix)
		if n == 0 {
			return
		}
		for _, c := range tokenizeAlphabet {
			all(prefix+c, n-1)
		}
	}
	all("", 4)
	// Longer random strings, ASCII-heavy like real text.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(40) {
			if rng.IntN(3) == 0 {
				b.WriteString(tokenizeAlphabet[rng.IntN(len(tokenizeAlphabet))])
			} else {
				b.WriteString(tokenizeAlphabet[rng.IntN(12)])
			}
		}
		check(b.String())
	}
	for _, s := range []string{
		"Don't panic: v1.8.2 costs $3,000.50; see a.b.c, snake_case_1 and __init__.",
		"Café – naïve résumé 東京タワー 한국어를 1,234.5 ١٢٣",
		"line\r\nbreak\vtab\tend",
	} {
		check(s)
	}
}

func dumpTokens(ts analysis.TokenStream) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "[%q %d-%d +%d t%d k%v]", t.Term, t.Start, t.End, t.PositionIncr, t.Type, t.KeyWord)
	}
	return b.String()
}

// tokenStream gathers the tokens of text.
func tokenStream(text []byte) analysis.TokenStream {
	var ts analysis.TokenStream
	tokenize(text, func(t *analysis.Token) {
		c := *t
		ts = append(ts, &c)
	})
	return ts
}

// TestNumbersAreTheirOwnStems: the Snowball stemmer leaves every token the
// tokenizer makes of digits and punctuation as it is, which lets analysis
// skip it for numbers.
func TestNumbersAreTheirOwnStems(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const alphabet = "0123456789.,;'_:- "
	n := 0
	for range 20000 {
		b := make([]byte, 1+rng.IntN(20))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		tokenize(b, func(tok *analysis.Token) {
			n++
			if !isNumber(string(tok.Term)) {
				t.Fatalf("%q: not a number", tok.Term)
			}
			if s := stem(string(tok.Term)); s != string(tok.Term) {
				t.Fatalf("stem(%q) = %q", tok.Term, s)
			}
		})
	}
	if n < 20000 {
		t.Fatalf("only %d tokens", n)
	}
}

func TestFilterASCIIMatchesBluge(t *testing.T) {
	const alphabet = "sSaAzZ09_'.:-\"#+ \x00\x7f"
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(term string) {
		t.Helper()
		tok := &analysis.Token{Term: []byte(term)}
		one := analysis.TokenStream{tok}
		foldWidth(one)
		possessiveFilter.Filter(one)
		lowerFilter.Filter(one)
		if got := filterASCII([]byte(term)); string(got) != string(tok.Term) {
			t.Fatalf("filterASCII(%q) = %q, the filters make %q", term, got, tok.Term)
		}
	}
	for _, term := range []string{"", "s", "'s", "'S", "Caroline's", "CAROLINE'S", "it's", "'", "s's", "ABC", "x'sy"} {
		check(term)
	}
	for range 20000 {
		b := make([]byte, rng.IntN(10))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = byte(rng.IntN(0x80))
			} else {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		check(string(b))
	}
}
