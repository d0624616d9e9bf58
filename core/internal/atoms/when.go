package atoms

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dlclark/regexp2"

	"github.com/arbormem/arbor/core/internal/lazyre"
)

// Span is a stretch of time a question asks about, resolved against the
// time it is asked: [From, To).
type Span struct {
	From, To time.Time
	// Phrase is the expression as written in the question ("a week ago").
	Phrase string
	// Start and End are its byte offsets in the question.
	Start, End int
	// Range: the expression frames the question as a stretch up to now
	// ("in the past three months") rather than naming a time.
	Range bool
	// Confident: the expression names the time of what the question asks
	// about, precisely enough to rank by. Not confident: a range framing
	// the question; a vague count ("a few weeks ago", "several months
	// ago"); a state up to a time or from it ("as of December 2023",
	// "since March"); a bound ("before April 10, 2023"); and a relative
	// expression in a question that also names a date, which it is then
	// relative to ("the last week of August 2023", "last weekend before
	// April 10, 2023") rather than to now.
	Confident bool
	// relative: the expression names a time relative to now ("a week
	// ago", "last weekend"), not a date of the calendar ("in May 2023").
	relative bool
}

// Contains reports whether t falls within the span.
func (s Span) Contains(t time.Time) bool {
	return !t.Before(s.From) && t.Before(s.To)
}

// String is the span as a reason code shows it: `"a week ago" → 2023-06-12..2023-06-18`.
func (s Span) String() string {
	return fmt.Sprintf("%q → %s..%s", s.Phrase, s.From.Format(time.DateOnly), s.To.Add(-time.Nanosecond).Format(time.DateOnly))
}

const day = 24 * time.Hour

// numberWords are the counts a time expression spells out.
var numberWords = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "few": 3, "several": 3}

const countRe = `(?<n>\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|a few|few|several)`

var months = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}

// Time expressions, tried in order; each match is resolved by the function
// of its kind. "How many days ago …" asks for a duration, not about a
// time: a count is required before "ago", and "how many" never is one.
// Each is compiled and tried only for a question holding one of the
// words its matches need (lazyre).
var whenRes = []struct {
	kind string
	re   *lazyre.Regexp
}{
	{"ago", lazyre.New(`(?<!\bhow many\s)\b`+countRe+`\s+(?<u>day|week|month|year)s?\s+ago\b`, regexp2.IgnoreCase, "ago")},
	{"past", lazyre.New(`\b(?:in|over|during|within)\s+the\s+(?:past|last)\s+(?:`+countRe+`\s+)?(?<u>day|week|month|year)s?\b`, regexp2.IgnoreCase, "past", "last")},
	{"last", lazyre.New(`\b(?:last|past)\s+(?<u>night|weekend|week|month|year)\b`, regexp2.IgnoreCase, "last", "past")},
	{"yesterday", lazyre.New(`\byesterday\b`, regexp2.IgnoreCase, "yesterday")},
	{"month", lazyre.New(`\b(?:(?<as>as\s+)?(?:in|during|of|on|around)|(?<bound>since|before|after|until|by))\s+(?:early\s+|late\s+|mid-?\s*)?(?<m>`+strings.Join(months, "|")+`)(?:\s+(?<d>\d{1,2})(?:st|nd|rd|th)?\b)?(?:\s+(?:and|or|to)\s+(?<m2>`+strings.Join(months, "|")+`))?(?:,?\s+(?<y>(?:19|20)\d\d))?\b`, regexp2.IgnoreCase, months...)},
	{"year", lazyre.New(`\b(?:(?<as>as\s+)?(?:in|during|of)|(?<bound>since|before|after|until|by))\s+(?<y>(?:19|20)\d\d)\b`, regexp2.IgnoreCase, "19", "20")},
}

// When finds the time expressions of a question and resolves them against
// now (in now's location): "a week ago", "three months ago", "in the past
// two weeks", "last weekend", "yesterday", "in March", "in March and April
// 2023", "in 2022". Relative expressions get a margin, since what was said
// about an event is often stored a few days from it: "N units ago" spans
// half a unit either side (a day either side for days), "last week" the
// two weeks before now, "in the past N units" the N units before now. A
// month or year without a year named is the latest one not after now.
// Each span says whether it is Confident: only those may rank entries.
func When(question string, now time.Time) []Span {
	var out []Span
	offs := runeOffsets(question)
	// The bytes of the expressions found so far: a match overlapping one
	// is dropped, in time linear in the question.
	covered := make([]bool, len(question))
	taken := func(a, b int) bool {
		return slices.Contains(covered[a:b], true)
	}
	for _, w := range whenRes {
		re := w.re.For(question)
		if re == nil {
			continue
		}
		m, _ := re.FindStringMatch(question)
		for ; m != nil; m, _ = re.FindNextMatch(m) {
			start, end := offs[m.Index], offs[m.Index+m.Length]
			if taken(start, end) {
				continue
			}
			g := func(name string) string {
				if gr := m.GroupByName(name); gr != nil {
					return strings.ToLower(gr.String())
				}
				return ""
			}
			from, to, ok := resolve(w.kind, g, now)
			if !ok {
				continue
			}
			sp := Span{From: from, To: to, Phrase: question[start:end], Start: start, End: end, Range: w.kind == "past", relative: w.kind != "month" && w.kind != "year"}
			sp.Confident = !sp.Range && !vagueCount[strings.Join(strings.Fields(g("n")), " ")] && g("as") == "" && g("bound") == ""
			out = append(out, sp)
			for i := start; i < end; i++ {
				covered[i] = true
			}
		}
	}
	dated := slices.ContainsFunc(out, func(s Span) bool { return !s.relative })
	for i := range out {
		if dated && out[i].relative {
			out[i].Confident = false
		}
	}
	return out
}

// vagueCount are the counts of a time expression that name no number.
var vagueCount = map[string]bool{"a couple of": true, "a few": true, "few": true, "several": true}

// resolve turns one matched expression into its span.
func resolve(kind string, g func(string) string, now time.Time) (from, to time.Time, ok bool) {
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	n := 1
	if s := g("n"); s != "" {
		if v, err := strconv.Atoi(s); err == nil {
			n = v
		} else {
			n = numberWords[strings.Join(strings.Fields(s), " ")]
		}
	}
	back := func(k int, u string) time.Time {
		switch u {
		case "day", "night":
			return today.AddDate(0, 0, -k)
		case "week", "weekend":
			return today.AddDate(0, 0, -7*k)
		case "month":
			return today.AddDate(0, -k, 0)
		}
		return today.AddDate(-k, 0, 0)
	}
	switch kind {
	case "ago":
		u := g("u")
		at := back(n, u)
		margin := map[string]time.Duration{"day": day, "week": 4 * day, "month": 15 * day, "year": 183 * day}[u]
		return at.Add(-margin), at.Add(margin + day), n > 0
	case "past":
		return back(n, g("u")), today.Add(day), n > 0
	case "last":
		u := g("u")
		if u == "night" {
			return today.AddDate(0, 0, -1), today.Add(day), true
		}
		return back(2, u), today.Add(day), true
	case "yesterday":
		return today.AddDate(0, 0, -1), today, true
	case "month":
		m1 := monthIndex(g("m"))
		m2 := m1
		if s := g("m2"); s != "" {
			m2 = monthIndex(s)
		}
		if m2 < m1 {
			m1, m2 = m2, m1
		}
		y := now.Year()
		if s := g("y"); s != "" {
			y, _ = strconv.Atoi(s)
		} else if time.Month(m1) > now.Month() {
			y-- // "in March" asked in January: last March
		}
		if d, _ := strconv.Atoi(g("d")); d > 0 && m1 == m2 {
			// A day: what is stored about it is often stored a day or two later.
			at := time.Date(y, time.Month(m1), d, 0, 0, 0, 0, now.Location())
			return at.AddDate(0, 0, -1), at.AddDate(0, 0, 3), true
		}
		return time.Date(y, time.Month(m1), 1, 0, 0, 0, 0, now.Location()), time.Date(y, time.Month(m2)+1, 1, 0, 0, 0, 0, now.Location()), true
	case "year":
		y, _ := strconv.Atoi(g("y"))
		return time.Date(y, 1, 1, 0, 0, 0, 0, now.Location()), time.Date(y+1, 1, 1, 0, 0, 0, 0, now.Location()), true
	}
	return time.Time{}, time.Time{}, false
}

func monthIndex(name string) int {
	for i, m := range months {
		if m == name {
			return i + 1
		}
	}
	return 0
}
