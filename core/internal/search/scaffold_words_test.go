package search

import (
	"strings"
	"testing"
)

// Scaffolding is tried only on a query holding one of its words: every
// phrase it strips holds one, whatever its case.
func TestScaffoldingWordsCoverItsMatches(t *testing.T) {
	for _, p := range []string{
		"how many times", "how much", "How often", "how long ago", "can you tell me", "could you please remind me",
		"would you show me", "do you know", "did we remember", "did i recall", "please tell me", "remind me",
		"our previous conversation", "going back to our previous chat", "looking through our last discussions",
		"following up on an earlier exchange", "I was wondering if", "i'm wondering whether", "I wonder if",
	} {
		for _, q := range []string{p, strings.ToUpper(p), "Hey, " + p + " about Seoul (서울)?"} {
			ok, _ := scaffolding.Compiled().MatchString(q)
			if !ok {
				t.Errorf("scaffolding does not match %q", q)
				continue
			}
			if scaffolding.For(q) == nil {
				t.Errorf("scaffolding matches %q, whose words For does not find", q)
			}
		}
	}
	if scaffolding.For("When did Melanie paint a sunrise?") != nil {
		t.Error("a question without scaffolding's words was given the expression")
	}
}
