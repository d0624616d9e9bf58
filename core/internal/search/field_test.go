package search

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/analysis"
	segment "github.com/blugelabs/bluge_segment_api"
)

// referenceAnalyzer is how text fields were analyzed before textField: a
// bluge.Analyzer over analyze, given to a bluge.TermField. It is kept as the
// reference textField must match.
type referenceAnalyzer struct{}

func (referenceAnalyzer) Analyze(input []byte) analysis.TokenStream {
	terms, _ := analyze(string(input), true)
	ts := make(analysis.TokenStream, len(terms))
	prev := 0
	for i, t := range terms {
		ts[i] = &analysis.Token{Term: []byte(t.text), Start: t.start, End: t.end, PositionIncr: t.pos - prev, Type: analysis.AlphaNumeric}
		prev = t.pos
	}
	return ts
}

// fieldDump is what bluge's index reads of a field: its options, length,
// value, and every term with its frequency and locations, terms sorted.
func fieldDump(f bluge.Field) string {
	var terms []string
	f.EachTerm(func(t segment.FieldTerm) {
		var b strings.Builder
		fmt.Fprintf(&b, "%q ×%d", t.Term(), t.Frequency())
		t.EachLocation(func(l segment.Location) {
			fmt.Fprintf(&b, " %q@%d:%d-%d", l.Field(), l.Pos(), l.Start(), l.End())
		})
		terms = append(terms, b.String())
	})
	sort.Strings(terms)
	return fmt.Sprintf("%s index=%t store=%t docvalues=%t length=%d value=%q\n%s",
		f.Name(), f.Index(), f.Store(), f.IndexDocValues(), f.Length(), f.Value(), strings.Join(terms, "\n"))
}

// A textField gives bluge what a TermField with the reference analyzer and
// positions gives: the same terms, frequencies, locations, length and value,
// after any offset, and the same last position; analysing many texts in a
// row (the lexicon's caches filling and turning over) changes nothing.
func TestTextFieldMatchesTermField(t *testing.T) {
	docs, _ := chatCorpus(3000)
	texts := []string{"", "   ", "the of and", "the import-cycle of #billing 搜索引擎", "C++ .NET v1.8 node.js to-do",
		"가치관이 API를 搜索引擎", "Café ＡＢＣ \u1100\u1161 STRASSE naïve", "running runs ran 3.14 1,000 snake_case a.b.c"}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range docs {
		// Long texts, repeated words and fresh ones, so that the caches fill.
		texts = append(texts, d.Title+" "+d.Content+fmt.Sprintf(" w%dx v%d.%d", rng.IntN(1<<20), rng.IntN(100), rng.IntN(100)))
	}
	for i, text := range texts {
		for _, offset := range []int{0, 107} {
			ref := bluge.NewTextField("content", text).WithAnalyzer(referenceAnalyzer{}).SearchTermPositions().StoreValue()
			refLast := ref.Analyze(offset)
			got := newTextField("content", text, true)
			gotLast := got.Analyze(offset)
			if gotLast != refLast {
				t.Fatalf("text %d %q, offset %d: last position %d, want %d", i, text, offset, gotLast, refLast)
			}
			if g, w := fieldDump(got), fieldDump(ref); g != w {
				t.Fatalf("text %d %q, offset %d:\n%s\nwant\n%s", i, text, offset, g, w)
			}
		}
	}
	// The path field is searchable, not stored.
	ref := bluge.NewTextField("path", "eng/billing/retry_policy").WithAnalyzer(referenceAnalyzer{}).SearchTermPositions()
	ref.Analyze(0)
	got := newTextField("path", "eng/billing/retry_policy", false)
	got.Analyze(0)
	if g, w := fieldDump(got), fieldDump(ref); g != w {
		t.Errorf("path field:\n%s\nwant\n%s", g, w)
	}
}

// A lexicon's caches give what the chain computes afresh, also once they
// have turned over (more distinct tokens than a generation holds).
func TestLexiconTurnsOver(t *testing.T) {
	lx := &lexicon{lexemes: map[string]lexeme{}, stems: map[string]string{}}
	fresh := func(text string) []term {
		a := analyzer{text: text, forIndex: true, lex: &lexicon{lexemes: map[string]lexeme{}, stems: map[string]string{}}}
		a.analyze()
		return a.terms
	}
	words := []string{"running", "Café", "import-cycle", "the", "C++", "#billing", "가치관이"}
	for i := range 3 * lexiconSize {
		words = append(words, fmt.Sprintf("word%dings", i))
	}
	turned := false
	for i := 0; i < len(words); i += 50 {
		// Each text repeats the first words and brings new ones.
		text := strings.Join(words[:7], " ") + " " + strings.Join(words[i:min(i+50, len(words))], " ")
		a := analyzer{text: text, forIndex: true, lex: lx}
		a.analyze()
		if want := fresh(text); !reflect.DeepEqual(a.terms, want) {
			t.Fatalf("text at word %d: %v, want %v", i, texts(a.terms), texts(want))
		}
		turned = turned || lx.oldLexemes != nil
	}
	if !turned {
		t.Fatal("the lexicon never turned over")
	}
	if len(lx.lexemes) > lexiconSize || len(lx.oldLexemes) > lexiconSize || len(lx.stems) > lexiconSize || len(lx.oldStems) > lexiconSize {
		t.Errorf("the lexicon holds %d+%d lexemes, %d+%d stems: more than %d a generation",
			len(lx.lexemes), len(lx.oldLexemes), len(lx.stems), len(lx.oldStems), lexiconSize)
	}
	// The words the texts repeat stayed current.
	if _, ok := lx.lexemes["running"]; !ok {
		t.Error("a word every text holds is not current")
	}
}
