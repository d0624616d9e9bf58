package atoms

import (
	"strings"
	"testing"
	"unicode"

	"github.com/arbormem/arbor/core/internal/lazyre"
)

// phrases are time and duration expressions of every kind the patterns
// know, each also tried upper-cased, title-cased and inside a sentence.
var phrases = []string{
	"a week ago", "three days ago", "2 years ago", "a couple of months ago", "several weeks ago",
	"in the past three months", "over the last few weeks", "during the past year", "within the last 2 days",
	"last weekend", "past week", "last night", "last year", "yesterday",
	"in March and April", "in February 2023", "on May 3, 2023", "the party on June 4th", "since december",
	"as of january 2024", "around october", "by november", "in 2022", "since 1999", "before 2020",
	"how many days ago", "how long ago", "how many weeks have passed", "how many years since",
}

func variants(p string) []string {
	title := []rune(p)
	title[0] = unicode.ToUpper(title[0])
	return []string{p, strings.ToUpper(p), string(title), "Remind me: " + p + ", in Seoul (서울)?"}
}

// A pattern is tried only on a question holding one of its words: every
// question any of them matches holds one, whatever its case.
func TestPatternWordsCoverTheirMatches(t *testing.T) {
	pats := map[string]*lazyre.Regexp{"duration": durationRe}
	for _, w := range whenRes {
		pats[w.kind] = w.re
	}
	matched := map[string]int{}
	for _, p := range phrases {
		for _, q := range variants(p) {
			for kind, re := range pats {
				if ok, _ := re.Compiled().MatchString(q); ok {
					matched[kind]++
					if re.For(q) == nil {
						t.Errorf("%s matches %q, whose words For does not find", kind, q)
					}
				}
			}
		}
	}
	for kind := range pats {
		if matched[kind] == 0 {
			t.Errorf("no phrase matched %s: the test does not exercise it", kind)
		}
	}
}
