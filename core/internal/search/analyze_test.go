package search

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/blugelabs/bluge/analysis"
	segment "github.com/blugelabs/bluge_segment_api"
)

// texts returns the text of each term.
func texts(ts []term) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.text)
	}
	return out
}

func TestAnalyze(t *testing.T) {
	long := strings.Repeat("x", maxTermBytes+1)
	tests := []struct {
		name  string
		text  string
		query []string // analyze(text, false)
		index []string // analyze(text, true); nil means same as query
	}{
		{"stemming", "retries retried retry retrying", []string{"retri", "retri", "retri", "retri"}, nil},
		{"plural", "Invoices invoice INVOICE", []string{"invoic", "invoic", "invoic"}, nil},
		{"stop words", "the invoice of a policy is in the retry", []string{"invoic", "polici", "retri"}, nil},
		{"only stop words", "The and of is it", []string{}, nil},
		{"snake_case", "invoice_retry_policy", []string{"invoic", "retri", "polici"}, nil},
		{"dotted file name", "config.yaml", []string{"config", "configyaml", "yaml"}, nil},
		{"dotted path", "billing.retry.Policy", []string{"bill", "billingretrypolici", "retri", "polici"}, nil},
		{"version kept", "v1.8", []string{"v1.8"}, nil},
		{"number kept", "pi is 3.14", []string{"pi", "3.14"}, nil},
		{"sentence dot", "Retry.Invoice", []string{"retri", "retryinvoic", "invoic"}, nil},
		{"hyphen and slash", "rate-limit/backoff", []string{"rate", "ratelimit", "limit", "backoff"}, nil},
		{"path", "engineering/billing/invoice_retry_policy", []string{"engin", "bill", "invoic", "retri", "polici"}, nil},
		{"possessive", "John's invoice", []string{"john", "invoic"}, nil},
		// irregular forms take their lemma; forms as often other words do not
		{"irregular forms", "went gone go bought buying children child", []string{"go", "go", "go", "buy", "buy", "child", "child"}, nil},
		{"ambiguous forms kept", "left leave rose stuck", []string{"left", "leav", "rose", "stuck"}, nil},
		{"full width", "ＡＢＣ", []string{"abc"}, nil},
		{"too long dropped", "short " + long + " word", []string{"short", "word"}, nil},
		{"chinese bigrams", "中文搜索", []string{"中文", "文搜", "搜索"}, []string{"中", "中文", "文", "文搜", "搜", "搜索", "索"}},
		{"one han", "税", []string{"税"}, []string{"税"}},
		{"two han", "中文", []string{"中文"}, []string{"中", "中文", "文"}},
		{"hangul word kept whole", "가치관", []string{"가치", "가치관", "치관"}, []string{"가", "가치", "가치관", "치", "치관", "관"}},
		{"short hangul not whole", "가치", []string{"가치"}, []string{"가", "가치", "치"}},
		// the query's bigrams come from the stem; the index keeps all
		{"hangul words separate", "가치관이 정직", []string{"가치", "가치관이", "가치관", "치관", "정직"}, []string{"가", "가치", "가치관이", "가치관", "치", "치관", "관", "관이", "이", "정", "정직", "직"}},
		{"kana not whole", "カタカナ", []string{"カタ", "タカ", "カナ"}, []string{"カ", "カタ", "タ", "タカ", "カ", "カナ", "ナ"}},
		{"mixed scripts", "Arbor的重试 policy", []string{"arbor", "的重", "重试", "polici"}, []string{"arbor", "的", "的重", "重", "重试", "试", "polici"}},
		{"accents folded", "Café résumé naïve Straße Ελληνικά", []string{"cafe", "resum", "naiv", "strass", "ελληνικα"}, nil},
		{"decomposed accent", "cafe\u0301", []string{"cafe"}, nil},
		// marks of other scripts are vowels, not accents; kana keep their voicing
		{"devanagari kept", "हिंदी", []string{"हिंदी"}, nil},
		{"kana voicing kept", "ガイド", []string{"ガイ", "イド"}, []string{"ガ", "ガイ", "イ", "イド", "ド"}},
		{"decomposed hangul composes", "\u1100\u1161\u110E\u1175", []string{"가치"}, []string{"가", "가치", "치"}},
		{"hyphen compound", "import-cycle", []string{"import", "importcycl", "cycl"}, nil},
		{"compound of stop words", "to-do", []string{"todo"}, nil},
		{"compound with digits", "gpt-4o k8s", []string{"gpt", "gpt4o", "4o", "k8s"}, nil},
		{"dotted name", "node.js", []string{"node", "nodej", "js"}, nil},
		{"trailing marks", "C++ c# F# A+", []string{"c++", "c#", "f#", "a+"}, nil},
		{"plus inside", "x+y issue#42", []string{"x", "y", "issu", "42"}, nil},
		{"leading marks", "#billing .NET (#tag)", []string{"bill", "#bill", "net", ".net", "tag", "#tag"}, nil},
		{"dot inside a word", "asp.net", []string{"asp", "aspnet", "net"}, nil},
		{"particle after a word", "API를 Redis에서는", []string{"api", "redi"}, nil},
		{"particle stripped", "환불이", []string{"환불", "환불이"}, []string{"환", "환불", "환불이", "불", "불이", "이"}},
		{"cjk runs split by space", "中文 搜索", []string{"中文", "搜索"}, []string{"中", "中文", "文", "搜", "搜索", "索"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := analyze(tc.text, false)
			if got := texts(q); !reflect.DeepEqual(got, tc.query) {
				t.Errorf("analyze(%q, query) = %q, want %q", tc.text, got, tc.query)
			}
			want := tc.index
			if want == nil {
				want = tc.query
			}
			ix, _ := analyze(tc.text, true)
			if got := texts(ix); !reflect.DeepEqual(got, want) {
				t.Errorf("analyze(%q, index) = %q, want %q", tc.text, got, want)
			}
		})
	}
}

// The spans of the terms point back into the original text, so excerpts
// can be cut around them.
func TestAnalyzeSpans(t *testing.T) {
	tests := []struct {
		text  string
		spans []string // text[start:end] of each term
	}{
		{"Invoice_Retry policy", []string{"Invoice", "Retry", "policy"}},
		{"see config.yaml, v1.8", []string{"see", "config", "config.yaml", "yaml", "v1.8"}},
		{"Arbor的重试", []string{"Arbor", "的", "的重", "重", "重试", "试"}},
		{"가치관", []string{"가", "가치", "가치관", "치", "치관", "관"}},
		{"#billing C++ .NET", []string{"billing", "#billing", "C++", "NET", ".NET"}},
		{"가치관이 중요", []string{"가", "가치", "가치관이", "가치관", "치", "치관", "관", "관이", "이", "중", "중요", "요"}},
	}
	for _, tc := range tests {
		ts, units := analyze(tc.text, true)
		var got []string
		for _, x := range ts {
			got = append(got, tc.text[x.start:x.end])
			if u := units[x.unit]; x.start < u.start || x.end > u.end {
				t.Errorf("%q: term %q [%d,%d) outside its unit [%d,%d)", tc.text, x.text, x.start, x.end, u.start, u.end)
			}
		}
		if !reflect.DeepEqual(got, tc.spans) {
			t.Errorf("spans of %q = %q, want %q", tc.text, got, tc.spans)
		}
	}
}

// Every word and every CJK character takes a position; stop words leave a
// gap; the terms of one place share its position.
func TestAnalyzePositions(t *testing.T) {
	ts, _ := analyze("the import-cycle of #billing 搜索引擎", true)
	var got []string
	for _, x := range ts {
		got = append(got, fmt.Sprintf("%s@%d", x.text, x.pos))
	}
	want := []string{"import@2", "importcycl@2", "cycl@3", "bill@5", "#bill@5",
		"搜@6", "搜索@6", "索@7", "索引@7", "引@8", "引擎@8", "擎@9"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("positions %q, want %q", got, want)
	}
	// A text field gives bluge the same positions.
	f := newTextField("content", "the import-cycle", true)
	f.Analyze(0)
	var pos []int
	f.EachTerm(func(t segment.FieldTerm) {
		t.EachLocation(func(l segment.Location) { pos = append(pos, l.Pos()) })
	})
	if !reflect.DeepEqual(pos, []int{2, 2, 3}) {
		t.Errorf("bluge positions %v, want [2 2 3]", pos)
	}
}

func TestFold(t *testing.T) {
	tests := map[string]string{
		"cafe":     "cafe",
		"café":     "cafe",
		"résumé":   "resume",
		"ﬁ":        "ﬁ", // not a letter with an accent
		"straße":   "strasse",
		"æsir":     "aesir",
		"łódź":     "lodz",
		"ἀθῆναι":   "αθηναι",
		"x\u0304":  "x",
		"хай":      "хай", // Cyrillic й is a letter of its own
		"हिंदी":    "हिंदी",
		"naïve42":  "naive42",
		"tiếng":    "tieng",
		"españa":   "espana",
		"smörgås":  "smorgas",
		"ελληνικά": "ελληνικα",
	}
	for in, want := range tests {
		if got := fold(in); got != want {
			t.Errorf("fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStripParticle(t *testing.T) {
	tests := map[string]string{
		"가치관이":  "가치관",
		"가치관":   "가치관",
		"환불을":   "환불",
		"학교에서는": "학교", // the longest particle, not 는
		"서울에서":  "서울",
		"나이":    "나이", // one syllable would remain
		"사과":    "사과",
		"친구랑":   "친구",
	}
	for in, want := range tests {
		if got := string(stripParticle([]rune(in))); got != want {
			t.Errorf("stripParticle(%q) = %q, want %q", in, got, want)
		}
	}
	if len(particles) != 31 {
		t.Errorf("%d particles, want the 31 of the study", len(particles))
	}
}

func TestSplitQuotes(t *testing.T) {
	tests := []struct {
		in   string
		want []qpart
	}{
		{`retry policy`, []qpart{{`retry policy`, false}}},
		{`retry "connection pool" policy`, []qpart{{`retry `, false}, {`connection pool`, true}, {` policy`, false}}},
		{`"a" "b"`, []qpart{{`a`, true}, {` `, false}, {`b`, true}}},
		{`“connection pool” now`, []qpart{{`connection pool`, true}, {` now`, false}}},
		{`„Verbindung“`, []qpart{{`Verbindung`, true}}},
		// an unclosed quote is no quote
		{`retry "connection pool`, []qpart{{`retry "connection pool`, false}}},
		{`"a" "b`, []qpart{{`a`, true}, {` "b`, false}}},
		{`""`, []qpart{{``, true}}},
	}
	for _, tc := range tests {
		if got := splitQuotes(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitQuotes(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseCompoundsMarksPhrases(t *testing.T) {
	x := newIndex(t, Options{})
	type qt struct {
		key       string
		terms     []string
		alts      []string
		phrase    [][]string
		minShould int
		prefix    bool
	}
	tests := []struct {
		query string
		want  []qt
	}{
		{"import-cycle", []qt{{"import-cycl", []string{"import", "cycl"}, []string{"importcycl"}, nil, 2, false}}},
		{"importcycle", []qt{{"importcycl", []string{"importcycl"}, nil, nil, 1, true}}},
		{"to-do", []qt{{"todo", nil, []string{"todo"}, nil, 0, false}}},
		{"gpt-4o", []qt{{"gpt-4o", []string{"gpt", "4o"}, []string{"gpt4o"}, nil, 2, false}}},
		// marked words are exact: no prefix even as the last word
		{"C++", []qt{{"c++", []string{"c++"}, nil, nil, 1, false}}},
		{"#billing", []qt{{"#bill", []string{"#bill"}, nil, nil, 1, false}}},
		{".NET", []qt{{".net", []string{".net"}, nil, nil, 1, false}}},
		{"v1.8", []qt{{"v1.8", []string{"v1.8"}, nil, nil, 1, true}}},
		{`retry "connection pool" policy`, []qt{
			{"retri", []string{"retri"}, nil, nil, 1, false},
			{`"connect pool"`, nil, nil, [][]string{{"connect"}, {"pool"}}, 0, false},
			{"polici", []string{"polici"}, nil, nil, 1, true},
		}},
		// a phrase keeps the gap of a stop word; CJK asks for its bigrams and last character
		{`"cost of living"`, []qt{{`"cost live"`, nil, nil, [][]string{{"cost"}, {""}, {"live"}}, 0, false}}},
		{`"搜索引擎"`, []qt{{`"搜索引擎"`, nil, nil, [][]string{{"搜索"}, {"索引"}, {"引擎"}, {"擎"}}, 0, false}}},
		{`"#billing C++"`, []qt{{`"#bill c++"`, nil, nil, [][]string{{"#bill"}, {"c++"}}, 0, false}}},
		// one quoted word: exact, without expansions
		{`"retries"`, []qt{{`"retri"`, []string{"retri"}, nil, nil, 1, false}}},
		{`"the" retry`, []qt{{"retri", []string{"retri"}, nil, nil, 1, true}}},
		// unclosed: plain words
		{`"connection pool`, []qt{
			{"connect", []string{"connect"}, nil, nil, 1, false},
			{"pool", []string{"pool"}, nil, nil, 1, true},
		}},
		// scaffolding is stripped outside quotes only
		{`how many times "how many times"`, []qt{{`"mani time"`, nil, nil, [][]string{{"mani"}, {"time"}}, 0, false}}},
	}
	for _, tc := range tests {
		var got []qt
		for _, q := range x.parse(tc.query) {
			got = append(got, qt{q.key, q.terms, q.alts, q.phrase, q.minShould, q.prefix})
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parse(%q) =\n%+v\nwant\n%+v", tc.query, got, tc.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := map[string]string{
		"invoice_retry": "invoice retry",
		"config.yaml":   "config yaml",
		"v1.8":          "v1.8",
		"3.14":          "3.14",
		"end.":          "end.",
		"a._b":          "a. b", // a dot before a non-letter stays
	}
	for in, want := range tests {
		if got := string(normalize(in)); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	x := newIndex(t, Options{})
	type flags struct {
		key                        string
		prefix, fuzzy, significant bool
	}
	tests := []struct {
		query string
		want  []flags
	}{
		{"invoices retried", []flags{{"invoic", false, true, true}, {"retri", true, true, true}}},
		{"invo", []flags{{"invo", true, false, true}}},
		{"cat", []flags{{"cat", true, false, false}}},
		{"ab", []flags{{"ab", false, false, false}}},
		{"cort", []flags{{"cort", true, false, true}}},
		// digits are never fuzzed
		{"http2server", []flags{{"http2server", true, false, true}}},
		// duplicates collapse, keeping the prefix of the last word
		{"retry retries", []flags{{"retri", true, true, true}}},
		{"the invoice of", []flags{{"invoic", true, true, true}}},
		{"the of and", nil},
		{"", nil},
	}
	for _, tc := range tests {
		var got []flags
		for _, q := range x.parse(tc.query) {
			got = append(got, flags{q.key, q.prefix, q.fuzzy, q.significant})
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parse(%q) = %+v, want %+v", tc.query, got, tc.want)
		}
	}
}

func TestParseCJK(t *testing.T) {
	x := newIndex(t, Options{})
	tests := []struct {
		query       string
		key         string
		terms       []string
		alts        []string
		minShould   int
		significant bool
	}{
		{"税", "税", []string{"税"}, nil, 1, false},
		{"中文", "中文", []string{"中文"}, nil, 1, true},
		{"搜索引擎", "搜索引擎", []string{"搜索", "索引", "引擎"}, nil, 2, true},
		{"搜索引擎优化", "搜索引擎优化", []string{"搜索", "索引", "引擎", "擎优", "优化"}, nil, 3, true},
		// the particle is stripped: the bigrams of the stem, both words whole
		{"가치관이", "가치관이", []string{"가치", "치관"}, []string{"가치관이", "가치관"}, 2, true},
		{"가치관", "가치관", []string{"가치", "치관"}, []string{"가치관"}, 2, true},
		{"환불이", "환불이", []string{"환불"}, []string{"환불이"}, 1, true},
		{"학교에서는", "학교에서는", []string{"학교"}, []string{"학교에서는"}, 1, true},
		// two syllables stay: 나이 (age) is no 나 + 이
		{"나이", "나이", []string{"나이"}, nil, 1, true},
		{"가치", "가치", []string{"가치"}, nil, 1, true},
	}
	for _, tc := range tests {
		qs := x.parse(tc.query)
		if len(qs) != 1 {
			t.Fatalf("parse(%q) = %+v, want one term", tc.query, qs)
		}
		q := qs[0]
		if q.key != tc.key || !reflect.DeepEqual(q.terms, tc.terms) || !reflect.DeepEqual(q.alts, tc.alts) ||
			q.minShould != tc.minShould || q.significant != tc.significant || q.prefix || q.fuzzy {
			t.Errorf("parse(%q) = %+v, want key %q terms %q alts %q minShould %d significant %v",
				tc.query, q, tc.key, tc.terms, tc.alts, tc.minShould, tc.significant)
		}
	}
}

func TestParseOptions(t *testing.T) {
	tests := []struct {
		opts          Options
		query         string
		prefix, fuzzy bool
	}{
		{Options{}, "abc", true, false},
		{Options{PrefixMinLen: 4}, "abc", false, false},
		{Options{PrefixBoost: -1}, "invoices", false, true},
		{Options{FuzzyBoost: -1}, "invoices", true, false},
		{Options{FuzzyMinLen: 4}, "cort", true, true},
		{Options{FuzzyMinLen: 9}, "invoices", true, false},
	}
	for _, tc := range tests {
		x := newIndex(t, tc.opts)
		qs := x.parse(tc.query)
		if len(qs) != 1 || qs[0].prefix != tc.prefix || qs[0].fuzzy != tc.fuzzy {
			t.Errorf("%+v: parse(%q) = %+v, want prefix %v fuzzy %v", tc.opts, tc.query, qs, tc.prefix, tc.fuzzy)
		}
	}
}

func TestStripScaffolding(t *testing.T) {
	x := newIndex(t, Options{})
	tests := []struct {
		query string
		terms []string
	}{
		{"how many times are invoices retried", []string{"invoic", "retri"}},
		{"How Many Times are invoices retried?", []string{"invoic", "retri"}},
		{"how much does the retry cost", []string{"retri", "cost"}},
		{"how often do invoices fail", []string{"invoic", "fail"}},
		{"how long ago was the outage", []string{"outag"}},
		{"can you please tell me the retry policy", []string{"retri", "polici"}},
		{"could you remind me about invoices", []string{"invoic"}},
		{"do you remember the deploy", []string{"deploy"}},
		{"did we recall the invoice", []string{"invoic"}},
		{"please tell me about backoff", []string{"backoff"}},
		// the framing of a question about an earlier conversation
		{"I'm going back to our previous chat about the retry policy", []string{"retri", "polici"}},
		{"I wanted to follow up on our previous conversation about invoices", []string{"want", "invoic"}},
		{"I was thinking about our previous conversation about backoff", []string{"backoff"}},
		// a request's framing
		{"I was wondering if you could remind me of the retry policy", []string{"retri", "polici"}},
		{"I'm wondering whether invoices are retried", []string{"invoic", "retri"}},
		{"I wonder if the deploy failed", []string{"deploy", "fail"}},
		// wondering about something is what the question is about
		{"a wondering mind", []string{"wonder", "mind"}},
		// a conversation named by what it was about is searched for
		{"the conversation about invoices", []string{"convers", "invoic"}},
		{"our previous invoices", []string{"previous", "invoic"}},
		// only scaffolding: searched as it is
		{"how many times", []string{"mani", "time"}},
		{"tell me", []string{"tell"}},
		// not scaffolding: words inside other words are kept
		{"showmany times", []string{"showmani", "time"}},
		{"many times invoices", []string{"mani", "time", "invoic"}},
	}
	for _, tc := range tests {
		var got []string
		for _, q := range x.parse(tc.query) {
			got = append(got, q.key)
		}
		if !reflect.DeepEqual(got, tc.terms) {
			t.Errorf("parse(%q) keys = %q, want %q", tc.query, got, tc.terms)
		}
	}
}

// levenshtein is the reference edit distance over bytes.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// accepts runs the automaton over s as bluge would.
func (a *lev1) accepts(s string) bool {
	st := a.Start()
	for i := 0; i < len(s); i++ {
		st = a.Accept(st, s[i])
		if !a.CanMatch(st) {
			return false
		}
	}
	return a.IsMatch(st)
}

func TestWithin1AndLev1(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcz"[rnd.Intn(4)]
		}
		return string(b)
	}
	for range 300 {
		tm := word(1 + rnd.Intn(6))
		a := newLev1(tm)
		for range 50 {
			s := word(rnd.Intn(8))
			want := levenshtein(tm, s) <= 1
			if got := within1(s, tm); got != want {
				t.Fatalf("within1(%q, %q) = %v, want %v", s, tm, got, want)
			}
			if got := a.accepts(s); got != want {
				t.Fatalf("lev1(%q) accepts %q = %v, want %v", tm, s, got, want)
			}
		}
	}
	// The longest supported term.
	long := strings.Repeat("ab", maxFuzzyBytes/2) + "c"
	a := newLev1(long)
	for _, s := range []string{long, long[1:], long + "x", "x" + long[1:], long[:10] + long[11:]} {
		if !a.accepts(s) {
			t.Errorf("lev1(%q) rejects %q", long, s)
		}
	}
	if a.accepts(long[2:]) {
		t.Errorf("lev1(%q) accepts %q (two edits)", long, long[2:])
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct {
		in   string
		want []byte
	}{
		{"ab", []byte("ac")},
		{"a\xff", []byte("b")},
		{"\xff\xff", nil},
	}
	for _, tc := range tests {
		if got := prefixEnd(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("prefixEnd(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNormalize01(t *testing.T) {
	tests := []struct {
		raw, want float64
	}{
		{0, 0.0001},
		{-3, 0.0001},
		{math.NaN(), 0.0001},
		{0.00001, 0.0001},
		{1, 0.5},
		{3, 0.75},
		{0.3, 0.2308}, // 0.230769…
		{2.5, 0.7143}, // 0.714285…
		{1e9, 0.9999},
	}
	for _, tc := range tests {
		if got := normalize01(tc.raw); got != tc.want {
			t.Errorf("normalize01(%v) = %v, want %v", tc.raw, got, tc.want)
		}
	}
}

// searchCase is a query and the paths it must find, in order (sorted when
// unordered).
type searchCase struct {
	query     string
	paths     []string
	unordered bool
}

func checkSearches(t *testing.T, x *Index, tests []searchCase) {
	t.Helper()
	for _, tc := range tests {
		r := mustSearch(t, x, tc.query, 0)
		// The documents matching every term; OR-pass hits may follow them.
		got := firstPass(r)
		if tc.unordered {
			got = sorted(got)
		}
		if !reflect.DeepEqual(got, tc.paths) {
			t.Errorf("%q: %q (mode %s, terms %q), want %q first", tc.query, pathsOf(r), r.Mode, r.Terms, tc.paths)
		}
		if len(tc.paths) > 0 && r.Mode != ModeAnd && r.Mode != ModeFill {
			t.Errorf("%q: mode %s", tc.query, r.Mode)
		}
	}
}

func TestSearchAccents(t *testing.T) {
	x := newIndex(t, Options{},
		Doc{Path: "cafe.md", Content: "Meet at the café on Friday."},
		Doc{Path: "resume.md", Content: "Send your résumé to HR."},
		Doc{Path: "plain.md", Content: "The cafe menu and a resume of the talk."},
		Doc{Path: "ko.md", Content: "카페에서 만나요"},
		Doc{Path: "ja.md", Content: "ガイドを読む"},
	)
	checkSearches(t, x, []searchCase{
		{"cafe", []string{"cafe.md", "plain.md"}, true},
		{"café", []string{"cafe.md", "plain.md"}, true},
		{"CAFÉ", []string{"cafe.md", "plain.md"}, true},
		{"resume", []string{"plain.md", "resume.md"}, true},
		{"résumé", []string{"plain.md", "resume.md"}, true},
		// CJK is left alone: a voiced kana is not its unvoiced one
		{"카페", []string{"ko.md"}, false},
		{"ガイド", []string{"ja.md"}, false},
		{"カイト", []string{}, false},
	})
}

func TestSearchKorean(t *testing.T) {
	x := newIndex(t, Options{},
		Doc{Path: "values.md", Content: "우리 팀의 가치관 정리"},
		Doc{Path: "values_particle.md", Content: "가치관이 중요합니다"},
		Doc{Path: "management.md", Content: "가치관리 방법"},
		Doc{Path: "refund.md", Content: "환불 요청하기"},
		Doc{Path: "api.md", Content: "API 문서"},
	)
	checkSearches(t, x, []searchCase{
		{"가치관이", []string{"management.md", "values.md", "values_particle.md"}, true},
		{"가치관", []string{"management.md", "values.md", "values_particle.md"}, true},
		// two syllables left by the particle: the stem's one bigram must match
		{"환불이", []string{"refund.md"}, false},
		{"환불을", []string{"refund.md"}, false},
		// a particle glued to a foreign word is not a term
		{"API를", []string{"api.md"}, false},
	})
	// The word (whole, with or without its particle) outranks a longer word
	// that only shares its bigrams.
	for _, q := range []string{"가치관이", "가치관"} {
		r := mustSearch(t, x, q, 0)
		if got := pathsOf(r)[2]; got != "management.md" {
			t.Errorf("%q: %q, want management.md last", q, pathsOf(r))
		}
	}
}

func TestSearchSymbols(t *testing.T) {
	x := newIndex(t, Options{},
		Doc{Path: "cpp.md", Content: "The engine is written in C++."},
		Doc{Path: "c.md", Content: "The driver is written in C."},
		Doc{Path: "csharp.md", Content: "The client is written in C#."},
		Doc{Path: "dotnet.md", Content: "It runs on .NET 8."},
		Doc{Path: "net.md", Content: "Net income grew."},
		Doc{Path: "node.md", Content: "A node.js server."},
		Doc{Path: "v18.md", Content: "Schema v1.8 is current."},
		Doc{Path: "v19.md", Content: "Schema v1.9 is next."},
		Doc{Path: "gpt4o.md", Content: "We call gpt-4o for summaries."},
		Doc{Path: "gpt4.md", Content: "We used gpt-4 before."},
		Doc{Path: "k8s.md", Content: "Deployed on k8s."},
		Doc{Path: "tagged.md", Content: "Filed under #billing."},
		Doc{Path: "billing.md", Content: "The billing team."},
		Doc{Path: "cycle.md", Content: "Fix the import-cycle in core."},
		Doc{Path: "cycle_apart.md", Content: "Each import closes a cycle."},
		Doc{Path: "todo.md", Content: "My todo list."},
	)
	checkSearches(t, x, []searchCase{
		{"C++", []string{"cpp.md"}, false},
		{"c++ engine", []string{"cpp.md"}, false},
		{"c", []string{"c.md"}, false},
		{"C#", []string{"csharp.md"}, false},
		{".NET", []string{"dotnet.md"}, false},
		// a leading mark also indexes the plain word
		{"net", []string{"dotnet.md", "net.md"}, true},
		{"node.js", []string{"node.md"}, false},
		{"nodejs", []string{"node.md"}, false},
		{"node js", []string{"node.md"}, false},
		{"v1.8", []string{"v18.md"}, false},
		{"v1.9", []string{"v19.md"}, false},
		{"gpt-4o", []string{"gpt4o.md"}, false},
		{"gpt4o", []string{"gpt4o.md"}, false},
		{"gpt-4", []string{"gpt4.md"}, false},
		{"k8s", []string{"k8s.md"}, false},
		{"#billing", []string{"tagged.md"}, false},
		{"billing", []string{"billing.md", "tagged.md"}, true},
		// a compound is found written the three ways; written apart
		// (both words, not adjacent) it still matches, below
		{"import-cycle", []string{"cycle.md", "cycle_apart.md"}, false},
		{"import cycle", []string{"cycle.md", "cycle_apart.md"}, true},
		{"importcycle", []string{"cycle.md"}, false},
		{"to-do", []string{"todo.md"}, false},
	})
}

func TestSearchPhrases(t *testing.T) {
	x := newIndex(t, Options{},
		Doc{Path: "pool.md", Title: "Database", Content: "The connection pool is exhausted under load; raise the retry policy limit."},
		Doc{Path: "reversed.md", Content: "Pool connection settings and the retry policy."},
		Doc{Path: "apart.md", Content: "A connection to the shared pool."},
		Doc{Path: "cost.md", Content: "The cost of living rose."},
		// a stop word leaves a gap: "cost of living" is "cost ? living"
		Doc{Path: "cost2.md", Content: "Living cost: costs living up."},
		Doc{Path: "zh.md", Content: "搜索引擎很重要"},
		Doc{Path: "zh2.md", Content: "引擎搜索"},
	)
	checkSearches(t, x, []searchCase{
		{`"connection pool"`, []string{"pool.md"}, false},
		{`“connection pool”`, []string{"pool.md"}, false},
		{`connection pool`, []string{"apart.md", "pool.md", "reversed.md"}, true},
		{`retry "connection pool" policy`, []string{"pool.md"}, false},
		{`"pool connection" retry`, []string{"reversed.md"}, false},
		// unclosed: plain words
		{`"connection pool`, []string{"apart.md", "pool.md", "reversed.md"}, true},
		{`"cost of living"`, []string{"cost.md", "cost2.md"}, true},
		{`"living cost"`, []string{"cost2.md"}, false},
		{`"搜索引擎"`, []string{"zh.md"}, false},
		{`"引擎"`, []string{"zh.md", "zh2.md"}, true},
		{`"索引"`, []string{"zh.md"}, false},
		{`"the connection pool is"`, []string{"pool.md"}, false},
	})
	r := mustSearch(t, x, `retry "connection pool"`, 0)
	h := hitOf(t, r, "pool.md")
	if !reflect.DeepEqual(r.Terms, []string{"retri", `"connect pool"`}) || !reflect.DeepEqual(h.Matched, r.Terms) {
		t.Errorf("terms %q, matched %q", r.Terms, h.Matched)
	}
	if !strings.Contains(h.Excerpt, "connection pool") {
		t.Errorf("excerpt %q lacks the phrase", h.Excerpt)
	}
	// A phrase scores as its words do in the fields holding it, with the
	// fields' boosts: here as the words without expansions, and ×3 in the
	// title.
	tx := newIndex(t, Options{PrefixBoost: -1, FuzzyBoost: -1},
		Doc{Path: "a.md", Title: "connection pool", Content: "x"},
		Doc{Path: "b.md", Title: "x", Content: "connection pool"})
	a := hitOf(t, mustSearch(t, tx, `"connection pool"`, 0), "a.md")
	b := hitOf(t, mustSearch(t, tx, `"connection pool"`, 0), "b.md")
	if plain := hitOf(t, mustSearch(t, tx, "connection pool", 0), "b.md"); !near(b.Raw, plain.Raw) {
		t.Errorf(`"connection pool" raw %v, connection pool raw %v`, b.Raw, plain.Raw)
	}
	if !near(a.Raw, 3*b.Raw) {
		t.Errorf("title phrase raw %v, content phrase raw %v: want ×3", a.Raw, b.Raw)
	}
	// A phrase that occurs nowhere is reported unmatched.
	if r := mustSearch(t, x, `"policy retry"`, 0); len(r.Hits) != 0 || !reflect.DeepEqual(r.Unmatched, []string{`"polici retri"`}) {
		t.Errorf(`"policy retry": %q unmatched %q`, pathsOf(r), r.Unmatched)
	}
}

// FuzzAnalyze checks the invariants the index, phrases and excerpts rely on:
// terms come in position order, with spans inside the text and their unit.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"import-cycle of #billing", "C++ .NET v1.8 node.js", "가치관이 API를 搜索引擎", "Café ＡＢＣ \u1100\u1161", "a-", "-a", ".#", "x+", "#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, forIndex := range []bool{false, true} {
			ts, units := analyze(text, forIndex)
			for i, x := range ts {
				if x.start < 0 || x.start > x.end || x.end > len(text) || x.pos < 1 || i > 0 && x.pos < ts[i-1].pos {
					t.Fatalf("%q: term %d %+v out of order or span", text, i, x)
				}
				if u := units[x.unit]; x.start < u.start || x.end > u.end {
					t.Fatalf("%q: term %+v outside its unit %+v", text, x, u)
				}
			}
		}
	})
}

// TestFoldWidth: folding only the tokens that can hold a fullwidth or
// halfwidth form gives what bluge's width filter gives over all tokens.
func TestFoldWidth(t *testing.T) {
	parts := []string{"abc", "Ｈｅｌｌｏ", "ﾃｽﾄ", "ｶﾞ", "ﾊﾟ", "가치관", "日本語", "café", " ", "\u00ef", "１２３", "ｰ", "x"}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for n := rng.Intn(12); n > 0; n-- {
			b.WriteString(parts[rng.Intn(len(parts))])
		}
		text := normalize(b.String())
		for j, tok := range tokenStream(text) {
			want := *tok
			widthFilter.Filter(analysis.TokenStream{&want})
			foldWidth(analysis.TokenStream{tok})
			if string(tok.Term) != string(want.Term) || tok.Start != want.Start || tok.End != want.End {
				t.Fatalf("%q: token %d = %q, want %q", text, j, tok.Term, want.Term)
			}
		}
	}
}

// wordsOf is every term of w, sorted.
func wordsOf(w Words) []string {
	all := slices.Concat(w.terms, w.more)
	slices.Sort(all)
	return slices.Compact(all)
}

// FuzzAnalyzeJoinsNothingAcrossLines checks what Words.And relies on: the
// Words of two texts joined by a line break are the Words of each, and
// Analyze's distinct terms are those of the analysis the index runs.
func FuzzAnalyzeJoinsNothingAcrossLines(f *testing.F) {
	pieces := []string{"import-cycle of #billing", "C++ .NET v1.8 node.js", "가치관이 API를 搜索引擎", "Café ＡＢＣ \u1100\u1161",
		"a-", "-a", ".#", "x+", "#", "c++", ".env", "to-", "do", "3.", "14", "搜索", "引擎", "가치", "관이", "it's", "'s", "_x", "x_", "", "\n", "**User:** hi"}
	for _, a := range pieces {
		for _, b := range pieces {
			f.Add(a, b)
		}
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		joined := a + "\n" + b
		ts, _ := analyze(joined, true)
		want := texts(ts)
		slices.Sort(want)
		want = slices.Compact(want)
		if got := wordsOf(Analyze(joined)); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("Analyze(%q) = %q, the index's analysis %q", joined, got, want)
		}
		both := Analyze(a).And(Analyze(b))
		if got := wordsOf(both); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("Analyze(%q).And(Analyze(%q)) = %q, Analyze of both joined by a line break %q", a, b, got, want)
		}
		for _, w := range want {
			if !both.has(w) {
				t.Fatalf("Analyze(%q).And(Analyze(%q)) does not have %q", a, b, w)
			}
		}
		if got := wordsOf(both.And(Analyze(a))); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("And of And: %q, want %q", got, want)
		}
	})
}
