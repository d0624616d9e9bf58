package atoms

import (
	"strings"
	"testing"
	"time"
)

func TestWhen(t *testing.T) {
	now := time.Date(2023, 6, 22, 18, 33, 0, 0, time.UTC) // a Thursday
	d := func(y int, m time.Month, dd int) time.Time { return time.Date(y, m, dd, 0, 0, 0, 0, time.UTC) }
	cases := []struct {
		q        string
		phrase   string
		from, to time.Time
	}{
		{"What did I do a week ago?", "a week ago", d(2023, 6, 11), d(2023, 6, 20)},
		{"the event three days ago", "three days ago", d(2023, 6, 18), d(2023, 6, 21)},
		{"a month ago, what charity event?", "a month ago", d(2023, 5, 7), d(2023, 6, 7)},
		{"2 years ago", "2 years ago", d(2021, 6, 22).Add(-183 * day), d(2021, 6, 22).Add(184 * day)},
		{"the three trips I took in the past three months", "in the past three months", d(2023, 3, 22), d(2023, 6, 23)},
		{"videos watched in the past few weeks", "in the past few weeks", d(2023, 6, 1), d(2023, 6, 23)},
		{"the cocktail I tried last weekend", "last weekend", d(2023, 6, 8), d(2023, 6, 23)},
		{"What did I eat yesterday", "yesterday", d(2023, 6, 21), d(2023, 6, 22)},
		{"Which airline did I fly in March and April?", "in March and April", d(2023, 3, 1), d(2023, 5, 1)},
		{"the shelter event in February 2023", "in February 2023", d(2023, 2, 1), d(2023, 3, 1)},
		{"What happened in September?", "in September", d(2022, 9, 1), d(2022, 10, 1)},
		{"my trip in 2022", "in 2022", d(2022, 1, 1), d(2023, 1, 1)},
		{"Who did Maria have dinner with on May 3, 2023?", "on May 3, 2023", d(2023, 5, 2), d(2023, 5, 6)},
		{"the party on June 4th", "on June 4th", d(2023, 6, 3), d(2023, 6, 7)},
	}
	for _, c := range cases {
		got := When(c.q, now)
		if len(got) != 1 {
			t.Errorf("When(%q) = %v, want one span", c.q, got)
			continue
		}
		s := got[0]
		if s.Range != strings.HasPrefix(c.phrase, "in the past") {
			t.Errorf("When(%q): range %t", c.q, s.Range)
		}
		if s.Phrase != c.phrase || !s.From.Equal(c.from) || !s.To.Equal(c.to) || c.q[s.Start:s.End] != c.phrase {
			t.Errorf("When(%q) = %q %v..%v, want %q %v..%v", c.q, s.Phrase, s.From, s.To, c.phrase, c.from, c.to)
		}
	}
	for _, q := range []string{
		"How many days ago did I meet Emma?", // asks for the duration
		"When did Caroline go to the support group?",
		"May I ask about the march on Washington?",
		"What did I say about the past?",
	} {
		if got := When(q, now); len(got) != 0 {
			t.Errorf("When(%q) = %v, want none", q, got)
		}
	}
	s := When("a week ago", now)[0]
	if !s.Contains(d(2023, 6, 15)) || s.Contains(d(2023, 6, 20)) || s.Contains(d(2023, 6, 10)) {
		t.Errorf("Contains of %v", s)
	}
	if got, want := s.String(), `"a week ago" → 2023-06-11..2023-06-19`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}

// TestWhenLongQuestion finds every expression of a question as long as a
// query may be, in order, none overlapping another: "in the past two
// weeks" is one range, not also "past week" or "two weeks ago".
func TestWhenLongQuestion(t *testing.T) {
	now := time.Date(2023, 6, 22, 18, 33, 0, 0, time.UTC)
	unit := "in the past two weeks, a week ago, yesterday; "
	q := strings.Repeat(unit, 4096/len(unit))
	spans := When(q, now)
	if len(spans) != 3*(4096/len(unit)) {
		t.Fatalf("%d spans, want %d", len(spans), 3*(4096/len(unit)))
	}
	covered := make([]bool, len(q))
	for _, s := range spans {
		if q[s.Start:s.End] != s.Phrase {
			t.Fatalf("span %+v: %q at its offsets", s, q[s.Start:s.End])
		}
		for i := s.Start; i < s.End; i++ {
			if covered[i] {
				t.Fatalf("span %+v overlaps another", s)
			}
			covered[i] = true
		}
	}
	for i, want := range []string{"in the past two weeks", "a week ago", "yesterday"} {
		n := 0
		for _, s := range spans {
			if s.Phrase == want {
				n++
			}
		}
		if n != 4096/len(unit) {
			t.Errorf("%d of %q (%d)", n, want, i)
		}
	}
}

// A time is named with confidence when the question names the time of what
// it asks about, precisely: not a range framing it, a vague count, a state
// up to or from a time, nor a relative time in a question that names a date
// (it is then relative to that date, not to now).
func TestWhenConfident(t *testing.T) {
	now := time.Date(2023, 11, 18, 18, 33, 0, 0, time.UTC)
	cases := []struct {
		q    string
		want map[string]bool // phrase → confident
	}{
		{"What did I do a week ago?", map[string]bool{"a week ago": true}},
		{"What did I eat yesterday?", map[string]bool{"yesterday": true}},
		{"the cocktail I tried last weekend", map[string]bool{"last weekend": true}},
		{"Who did Maria have dinner with on May 3, 2023?", map[string]bool{"on May 3, 2023": true}},
		{"What setback did Melanie face in October 2023?", map[string]bool{"in October 2023": true}},
		{"the trips I took in the past three months", map[string]bool{"in the past three months": false}},
		{"a hobby he started a few years ago", map[string]bool{"a few years ago": false}},
		{"the town I left several months ago", map[string]bool{"several months ago": false}},
		{"How many pets will Andrew have, as of December 2023?", map[string]bool{"as of December 2023": false}},
		{"What has changed since March?", map[string]bool{"since March": false}},
		{"Where was Dave in the last two weeks of August 2023?", map[string]bool{"in the last two weeks": false, "of August 2023": true}},
		{"What did Maria do last weekend before April 10, 2023?", map[string]bool{"last weekend": false}},
	}
	for _, c := range cases {
		got := map[string]bool{}
		for _, s := range When(c.q, now) {
			got[s.Phrase] = s.Confident
		}
		for phrase, conf := range c.want {
			if g, ok := got[phrase]; !ok || g != conf {
				t.Errorf("When(%q): %q confident %v (found %t), want %v; spans %v", c.q, phrase, g, ok, conf, got)
			}
		}
	}
}
