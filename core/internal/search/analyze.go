package search

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blugelabs/bluge/analysis"
	"github.com/blugelabs/bluge/analysis/lang/cjk"
	"github.com/blugelabs/bluge/analysis/lang/en"
	"github.com/blugelabs/bluge/analysis/token"
	"golang.org/x/text/unicode/norm"
)

// The analysis chain, shared by every field and by the query so that both
// sides always produce the same terms:
//
//  1. normalize: '_' becomes a space, and so does '.' before an ASCII letter
//     (snake_case, file.ext and a.b.c split into words; 3.14 and v1.8 stay
//     whole);
//  2. bluge's Unicode (UAX #29) tokenizer, with a fast path for ASCII
//     (tokenize): splits on spaces, punctuation, '-' and '/', and emits
//     each Han ideograph or kana as its own token;
//  3. CJK width folding, English possessive removal, lower case, NFC (text
//     written decomposed, like Hangul jamo from macOS file names, composes);
//  4. per token, split into runs of CJK script (Han, Kana, Hangul) and other
//     script. Other runs are words: Latin and Greek letters lose their
//     accents (café → cafe, ß → ss), English stop words are dropped, the
//     rest is Snowball-stemmed, an irregular form as its lemma (went → go).
//     Words joined by '-' or '.' with nothing else between them form a
//     compound, which is also indexed joined
//     (import-cycle → importcycl, node.js → nodej, to-do → todo); snake_case
//     is not (every entry's path is, and joined paths would only add noise
//     to prefix expansions). A trailing
//     "+", "++" or "#" belongs to the word (c++, c#, a+), which is then
//     indexed only with it; a leading '#' or '.' after a space marks a word
//     (#billing, .NET, .env) that is indexed both marked and plain.
//  5. CJK runs: adjacent CJK runs are joined and turned into overlapping
//     bigrams (a run of one character stays a unigram); when indexing (not
//     for queries) every CJK character is also indexed as a unigram, so
//     one-character queries find it inside longer runs. A Hangul run of 3 or
//     more syllables is also kept whole, and a Korean particle at its end
//     (the longest of particles, when at least two syllables remain) is
//     stripped: the stem is kept whole too, and a query's bigrams come from
//     the stem ("가치관이" finds "가치관"). A Hangul particle glued to a word
//     of another script ("API를") is dropped.
//
// Every word and every CJK character takes one position (dropped stop words
// too), so that quoted phrases can ask for adjacent terms; the terms made at
// one place (a word and its marked form, a compound's first word and the
// joined compound, a character's unigram, bigram and whole word) share it.

var (
	widthFilter      = cjk.NewWidthFilter()
	possessiveFilter = en.NewPossessiveFilter()
	lowerFilter      = token.NewLowerCaseFilter()
	stemFilter       = en.StemmerFilter()
	stopWords        = en.StopWords()
)

// IsStopWord reports whether w, lower-cased, is one of the English stop
// words the analysis leaves out of the required terms: one list for the
// engine, read once at the module's start.
func IsStopWord(w string) bool { return stopWords[w] }

const (
	// maxTermBytes drops longer tokens (blobs, hashes): they are never
	// useful search terms and bloat the dictionary.
	maxTermBytes = 96
	// maxWholeRunes bounds the Hangul runs kept whole.
	maxWholeRunes = 16
)

// particles are the Korean particles (조사) stripped from the end of a Hangul
// run, longest first: the 31-particle list of the Korean tokenizer study in
// examples/notes (research/retrieval/korean_tokenizer_findings.md).
var particles = func() [][]rune {
	ps := strings.Fields("이 가 은 는 을 를 의 에 에서 에게 께 한테 로 으로 와 과 도 만 까지 부터 " +
		"이나 나 이랑 랑 처럼 보다 마다 에는 에서는 으로는 하고")
	out := make([][]rune, len(ps))
	for i, p := range ps {
		out[i] = []rune(p)
	}
	slices.SortStableFunc(out, func(a, b []rune) int { return len(b) - len(a) })
	return out
}()

// termKind tells how an analyzed term was produced.
type termKind uint8

const (
	kindWord    termKind = iota // a stemmed non-CJK word (a compound's parts too)
	kindJoined                  // a compound's words joined, stemmed
	kindMarked                  // a word with its symbol: c++, c#, #bill, .net
	kindUnigram                 // one CJK character
	kindBigram                  // two adjacent CJK characters
	kindWhole                   // a whole Hangul word, or its stem without a particle
)

// term is one analyzed term with its byte span in the analyzed text.
type term struct {
	text       string
	start, end int
	pos        int // position, from 1; terms made at one place share it
	unit       int // index of the source unit, 0-based
	kind       termKind
}

// unit is the source of one or more terms: a word, a compound, or a run of
// CJK text.
type unit struct {
	start, end int
	cjk        bool
	text       string // a CJK run (width-folded), the key of its query term
}

// analyze runs the analysis chain over text. With forIndex, CJK characters
// are also emitted as unigrams and Hangul bigrams keep their particle. It
// returns the terms, in position order, and the source units they came from
// (term.unit indexes units).
func analyze(text string, forIndex bool) ([]term, []unit) {
	// A word takes about six bytes of English and makes about one term and
	// one unit; growing the slices from empty would allocate several times
	// their final size.
	words := len(text)/6 + 1
	lx := getLexicon()
	defer putLexicon(lx)
	a := analyzer{text: text, forIndex: forIndex, terms: make([]term, 0, words), units: make([]unit, 0, words), lex: lx}
	a.analyze()
	return a.terms, a.units
}

// analyze analyzes a.text, appending to a.terms and, unless noUnits, a.units.
func (a *analyzer) analyze() {
	one := make(analysis.TokenStream, 1)
	tokenize(normalize(a.text), func(t *analysis.Token) {
		ascii := isASCII(t.Term)
		if ascii {
			t.Term = filterASCII(t.Term)
		} else {
			one[0] = t
			foldWidth(one)
			possessiveFilter.Filter(one)
			lowerFilter.Filter(one)
		}
		a.token(t, ascii)
	})
	a.flushRun()
	a.flushWords()
}

// analyzer holds the state of one analyze call.
type analyzer struct {
	text     string // the original text, where marks and joiners are read
	forIndex bool
	terms    []term
	units    []unit
	noUnits  bool // the index needs the terms only: units stay empty
	pos      int  // the last position taken

	run      []rune // the pending CJK run
	runOffs  []int  // byte span of each rune of run (the whole segment's
	runEnds  []int  // when width folding or NFC changed the bytes)
	runEnd   int    // byte offset just past the run
	runStart int

	words []word // the pending compound

	lex *lexicon // what the chain made of the tokens of earlier calls
}

// lexeme is what the chain makes of one distinct non-CJK token.
type lexeme struct {
	raw  string // lower case, accents folded, not stemmed
	stem string // raw's Snowball stem; empty when raw is over maxTermBytes
	stop bool   // raw is a stop word
}

// lexeme returns the lexeme of a lower-case token.
func (a *analyzer) lexeme(seg []byte) lexeme {
	if l, ok := a.lex.lexeme(seg); ok {
		return l
	}
	key := string(seg)
	l := lexeme{raw: fold(key)}
	l.stop = stopWords[l.raw]
	if len(l.raw) <= maxTermBytes {
		// A number is its own stem (TestNumbersAreTheirOwnStems): logs and
		// tables hold many distinct ones, each a call of the stemmer.
		l.stem = l.raw
		if !isNumber(l.raw) {
			l.stem = stem(l.raw) // cached with the lexeme
		}
	}
	a.lex.putLexeme(key, l)
	return l
}

// stem returns the Snowball stem of a compound's words joined.
func (a *analyzer) stem(w string) string {
	if s, ok := a.lex.stem(w); ok {
		return s
	}
	s := stem(w)
	a.lex.putStem(w, s)
	return s
}

// word is one non-CJK word of a pending compound.
type word struct {
	lexeme
	start, end int // the word without its marks
	pos        int
	lead       string // "#" or "." before the word
	trail      string // "+", "++" or "#" after it
}

// token splits one tokenizer token into CJK and non-CJK runs; ascii says
// that it was ASCII before the filters (and so is after them).
func (a *analyzer) token(t *analysis.Token, ascii bool) {
	s := t.Term
	exact := len(s) == t.End-t.Start // false when width folding changed the bytes
	// The common case: one word, in NFC, without CJK.
	if ascii || isASCII(s) {
		a.flushRun()
		a.word(s, t.Start, t.End, exact, exact)
		return
	}
	if !norm.NFC.IsNormal(s) {
		s, exact = norm.NFC.Bytes(s), false
	}
	whole := s
	afterWord := false
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
		off := len(whole) - len(s)
		start, end := t.Start, t.End
		if exact {
			start, end = t.Start+off, t.Start+off+n
		}
		switch {
		case isCJK && afterWord && isParticle(seg):
			// "API를": the particle of a foreign word, not a word itself.
		case isCJK:
			a.flushWords()
			a.cjk(seg, start, end, exact)
		default:
			a.flushRun()
			a.word(seg, start, end, exact && off == 0, exact && n == len(s))
		}
		afterWord = !isCJK
		s = s[n:]
	}
}

// word takes the next position for a non-CJK word and adds it to the
// pending compound. first and last tell whether the word starts or ends its
// token (with exact spans), where it can carry marks or join a compound.
func (a *analyzer) word(seg []byte, start, end int, first, last bool) {
	a.pos++
	w := word{lexeme: a.lexeme(seg), start: start, end: end, pos: a.pos}
	if first && start >= 1 && (a.text[start-1] == '#' || a.text[start-1] == '.') &&
		(start == 1 || opensWord(a.lastRuneBefore(start-1))) {
		w.lead = a.text[start-1 : start]
	}
	if last {
		rest := a.text[end:]
		for _, m := range []string{"++", "+", "#"} {
			if strings.HasPrefix(rest, m) {
				if r, _ := utf8.DecodeRuneInString(rest[len(m):]); len(rest) == len(m) || !isWordRune(r) {
					w.trail = m
				}
				break
			}
		}
	}
	joins := false
	if n := len(a.words); n > 0 && first && w.lead == "" {
		p := a.words[n-1]
		joins = p.trail == "" && p.end+1 == start && (a.text[p.end] == '-' || a.text[p.end] == '.')
	}
	if !joins {
		a.flushWords()
	}
	a.words = append(a.words, w)
	if !last || w.trail != "" { // a compound continues only across a joiner
		a.flushWords()
	}
}

// flushWords emits the terms of the pending compound (or single word) as
// one unit.
func (a *analyzer) flushWords() {
	ws := a.words
	if len(ws) == 0 {
		return
	}
	a.words = ws[:0]
	u := len(a.units)
	n0 := len(a.terms)
	add := func(text string, start, end, pos int, kind termKind) {
		a.terms = append(a.terms, term{text: text, start: start, end: end, pos: pos, unit: u, kind: kind})
	}
	for i, w := range ws {
		if len(w.raw) <= maxTermBytes {
			if w.trail == "" && !w.stop {
				add(w.stem, w.start, w.end, w.pos, kindWord)
			}
			if w.lead != "" || w.trail != "" {
				add(w.lead+w.stem+w.trail, w.start-len(w.lead), w.end+len(w.trail), w.pos, kindMarked)
			}
		}
		if i == 0 && len(ws) > 1 {
			var b strings.Builder
			for _, w := range ws {
				b.WriteString(w.raw)
			}
			if j := b.String(); len(j) <= maxTermBytes && !stopWords[j] {
				add(a.stem(j), ws[0].start, ws[len(ws)-1].end, w.pos, kindJoined)
			}
		}
	}
	if len(a.terms) > n0 && !a.noUnits {
		last := ws[len(ws)-1]
		a.units = append(a.units, unit{start: ws[0].start - len(ws[0].lead), end: last.end + len(last.trail)})
	}
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
		if exact {
			a.runOffs, a.runEnds = append(a.runOffs, off), append(a.runEnds, off+utf8.RuneLen(r))
			off += utf8.RuneLen(r)
		} else {
			a.runOffs, a.runEnds = append(a.runOffs, start), append(a.runEnds, end)
		}
	}
	a.runEnd = end
}

// flushRun emits the terms of the pending CJK run, which takes one position
// per character.
func (a *analyzer) flushRun() {
	n := len(a.run)
	if n == 0 {
		return
	}
	u := len(a.units)
	if !a.noUnits {
		a.units = append(a.units, unit{start: a.runStart, end: a.runEnd, cjk: true, text: string(a.run)})
	}
	type whole struct {
		text string
		end  int
	}
	var wholes []whole
	base := a.run // the query's bigrams come from the stem
	if hasHangul(a.run) {
		if n >= 3 && n <= maxWholeRunes {
			wholes = append(wholes, whole{string(a.run), a.runEnd})
		}
		if st := stripParticle(a.run); len(st) < n {
			if len(st) >= 3 && len(st) <= maxWholeRunes {
				wholes = append(wholes, whole{string(st), a.runEnds[len(st)-1]})
			}
			if !a.forIndex {
				base = st
			}
		}
	}
	p := a.pos + 1
	a.pos += n
	add := func(text string, start, end, pos int, kind termKind) {
		a.terms = append(a.terms, term{text: text, start: start, end: end, pos: pos, unit: u, kind: kind})
	}
	for i, r := range a.run {
		if n == 1 || a.forIndex {
			add(string(r), a.runOffs[i], a.runEnds[i], p+i, kindUnigram)
		}
		if i+1 < len(base) {
			add(string(base[i:i+2]), a.runOffs[i], a.runEnds[i+1], p+i, kindBigram)
		}
		if i == 0 {
			for _, w := range wholes {
				add(w.text, a.runStart, w.end, p, kindWhole)
			}
		}
	}
	a.run, a.runOffs, a.runEnds = a.run[:0], a.runOffs[:0], a.runEnds[:0]
}

// stripParticle returns run without its Korean particle (the longest one
// that leaves at least two syllables), or run itself.
func stripParticle(run []rune) []rune {
	for _, p := range particles {
		if len(run)-len(p) >= 2 && slices.Equal(run[len(run)-len(p):], p) {
			return run[:len(run)-len(p)]
		}
	}
	return run
}

// isParticle reports whether seg is a Korean particle.
func isParticle(seg []byte) bool {
	rs := []rune(string(seg))
	return slices.ContainsFunc(particles, func(p []rune) bool { return slices.Equal(p, rs) })
}

// foldWidth folds the fullwidth and halfwidth forms of a one-token stream
// (bluge's CJK width filter). The forms are U+FF01–U+FFEF, UTF-8 bytes
// EF BC–BF: the filter, which rebuilds every token it is given, is given
// only a token holding an 0xEF byte, the others being unchanged by it.
func foldWidth(one analysis.TokenStream) {
	if bytes.IndexByte(one[0].Term, 0xEF) >= 0 {
		widthFilter.Filter(one)
	}
}

// stem returns the Snowball stem of a lower-case word, an irregular
// form's lemma stemmed.
func stem(w string) string {
	if l, ok := irregular[w]; ok {
		w = l
	}
	return string(stemFilter.Filter(analysis.TokenStream{{Term: []byte(w)}})[0].Term)
}

// irregular maps the irregular past forms of English verbs (and a few
// irregular plurals) to their lemma. Snowball strips suffixes, and "went",
// "bought" or "children" have none to strip: a question asks "When did
// Caroline go to the support group?" of a memory saying "I went to a
// support group yesterday". Lucene's KStem and Hunspell stemmers resolve
// such forms with a dictionary the same way. Forms that are as often other
// words are left out (left, bound, ground, wound, rose, lay, lit, bit,
// stuck, shot, broke, bore: adding them gained nothing on the benchmark's
// tuning half), and so are those that notes write for something else in
// capitals (Fed, LED, SAT); "saw" is in, the tool being rare in what
// people tell.
var irregular = map[string]string{
	"arose": "arise", "arisen": "arise", "awoke": "awake", "awoken": "awake",
	"beaten": "beat", "became": "become", "began": "begin", "begun": "begin",
	"bent": "bend", "bitten": "bite", "bled": "bleed", "blew": "blow", "blown": "blow",
	"broken": "break", "bred": "breed", "brought": "bring", "built": "build",
	"burnt": "burn", "bought": "buy", "caught": "catch", "chose": "choose",
	"chosen": "choose", "clung": "cling", "came": "come", "crept": "creep",
	"dealt": "deal", "dug": "dig", "drew": "draw", "drawn": "draw", "dreamt": "dream",
	"drank": "drink", "drunk": "drink", "drove": "drive", "driven": "drive",
	"ate": "eat", "eaten": "eat", "fell": "fall", "fallen": "fall",
	"felt": "feel", "fought": "fight", "found": "find", "fled": "flee", "flew": "fly",
	"flown": "fly", "forbade": "forbid", "forbidden": "forbid", "forgot": "forget",
	"forgotten": "forget", "forgave": "forgive", "forgiven": "forgive",
	"froze": "freeze", "frozen": "freeze", "got": "get", "gotten": "get",
	"gave": "give", "given": "give", "went": "go", "gone": "go", "grew": "grow",
	"grown": "grow", "hung": "hang", "heard": "hear", "hid": "hide", "hidden": "hide",
	"held": "hold", "kept": "keep", "knelt": "kneel", "knew": "know", "known": "know",
	"laid": "lay", "leapt": "leap", "learnt": "learn", "lent": "lend",
	"lain": "lie", "lost": "lose", "made": "make", "meant": "mean", "met": "meet",
	"paid": "pay", "proven": "prove", "rode": "ride", "ridden": "ride", "rang": "ring",
	"rung": "ring", "risen": "rise", "ran": "run", "said": "say", "saw": "see",
	"seen": "see", "sought": "seek", "sold": "sell", "sent": "send", "sewn": "sew",
	"shook": "shake", "shaken": "shake", "shone": "shine", "shown": "show",
	"shrank": "shrink", "shrunk": "shrink", "sang": "sing", "sung": "sing",
	"sank": "sink", "sunk": "sink", "slept": "sleep", "slid": "slide",
	"spoke": "speak", "spoken": "speak", "sped": "speed", "spent": "spend",
	"spun": "spin", "sprang": "spring", "sprung": "spring", "stood": "stand",
	"stolen": "steal", "stung": "sting", "struck": "strike", "swore": "swear",
	"sworn": "swear", "swept": "sweep", "swam": "swim", "swum": "swim",
	"swung": "swing", "took": "take", "taken": "take", "taught": "teach",
	"tore": "tear", "torn": "tear", "told": "tell", "thought": "think",
	"threw": "throw", "thrown": "throw", "understood": "understand", "woke": "wake",
	"woken": "wake", "wore": "wear", "worn": "wear", "wove": "weave", "woven": "weave",
	"wept": "weep", "won": "win", "wrote": "write", "written": "write",
	"children": "child", "men": "man", "women": "woman", "feet": "foot",
	"teeth": "tooth", "mice": "mouse", "geese": "goose",
}

// foldLetters are the Latin and Greek letters that accent folding maps
// without a canonical decomposition.
var foldLetters = map[rune]string{
	'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "o", 'đ': "d", 'ð': "d", 'ł': "l",
	'þ': "th", 'ı': "i", 'ħ': "h", 'ς': "σ",
}

// fold removes the accents of Latin and Greek letters in a lower-case word.
// Other scripts keep their combining marks: in Devanagari or Thai they are
// vowels, not accents, and CJK never gets here (kana voicing marks would
// otherwise be lost).
func fold(w string) string {
	i := 0
	for i < len(w) && w[i] < utf8.RuneSelf {
		i++
	}
	if i == len(w) {
		return w
	}
	var b strings.Builder
	b.WriteString(w[:i])
	latin := i > 0 && isASCIILetter(w[i-1]) // marks after it are accents
	for _, r := range w[i:] {
		switch {
		case latin && unicode.Is(unicode.Mn, r):
		case foldLetters[r] != "":
			b.WriteString(foldLetters[r])
			latin = true
		case r >= utf8.RuneSelf && unicode.In(r, unicode.Latin, unicode.Greek):
			base, _ := utf8.DecodeRuneInString(norm.NFD.String(string(r)))
			b.WriteRune(base)
			latin = true
		default:
			b.WriteRune(r)
			latin = r < utf8.RuneSelf && isASCIILetter(byte(r))
		}
	}
	return b.String()
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

// filterASCII is what the width, possessive and lower-case filters make
// of an ASCII token, computed without them: no width to fold, a trailing
// "'s" or "'S" dropped, A-Z lowered in place (as the lower-case filter
// lowers). Most tokens are ASCII, and the filters decode them rune by rune,
// a call per byte: 2.5 % of the module's samples in a cold build.
// TestFilterASCIIMatchesBluge holds the two to the same terms.
func filterASCII(b []byte) []byte {
	if n := len(b); n >= 2 && (b[n-1] == 's' || b[n-1] == 'S') && b[n-2] == '\'' {
		b = b[:n-2]
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return b
}

func isASCII(s []byte) bool {
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isNumber reports whether w is ASCII without a letter.
func isNumber(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf || isASCIILetter(w[i]) {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// opensWord reports whether a mark after r starts a word: after a space or
// an opening bracket or quote, not inside a word ("asp.net") or after other
// marks ("##", "...").
func opensWord(r rune) bool {
	return unicode.IsSpace(r) || strings.ContainsRune("([{\"'`“‘", r)
}

func (a *analyzer) lastRuneBefore(i int) rune {
	r, _ := utf8.DecodeLastRuneInString(a.text[:i])
	return r
}

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
