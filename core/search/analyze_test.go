package search

import (
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"
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
