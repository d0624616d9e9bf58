package search

import (
	"github.com/dlclark/regexp2"

	"github.com/arbormem/arbor/core/internal/lazyre"
)

// Question scaffolding: words that shape a question rather than name what
// it is about. Most are English stop words already ("how", "what", "is");
// these patterns catch the phrases whose words are not ("how many times",
// "can you tell me", "going back to our previous conversation", "I was
// wondering if"), which would otherwise be required terms of the AND pass
// and favour any document that happens to say "many" and "times".
// regexp2's \b is Unicode-aware (Go's regexp is ASCII-only), so a phrase
// next to Hangul or accented text is still recognized. Compiled and tried
// only for a query holding a word each phrase needs (lazyre).
var scaffolding = lazyre.New(`\b(?:`+
	`how\s+(?:many|much)(?:\s+times)?`+
	`|how\s+(?:often|long\s+ago)`+
	`|(?:can|could|would)\s+you\s+(?:please\s+)?(?:tell|remind|show)\s+me`+
	`|(?:do|did)\s+(?:you|we|i)\s+(?:know|remember|recall)`+
	`|(?:please\s+)?(?:tell|remind)\s+me`+
	`|(?:i\s+(?:was|am)\s+|i'm\s+)?wondering\s+(?:if|whether)|i\s+wonder\s+(?:if|whether)`+
	`|(?:(?:going|looking|thinking)\s+back\s+(?:to|at|on)\s+|(?:going|looking|reading)\s+through\s+|(?:thinking|asking)\s+about\s+|follow(?:ing)?\s+up\s+on\s+)?`+
	`(?:our|my|the|a|an)\s+(?:previous|earlier|last|past|prior)\s+(?:conversation|chat|discussion|exchange)s?`+
	`)\b`, regexp2.IgnoreCase, "how", "tell", "remind", "show", "know", "remember", "recall", "wonder", "conversation", "chat", "discussion", "exchange")

// stripScaffolding blanks question scaffolding out of the unquoted parts
// of a query. A query made only of scaffolding is returned unchanged, so it
// still searches for something.
func stripScaffolding(parts []qpart) []qpart {
	out := make([]qpart, len(parts))
	found := false
	for i, p := range parts {
		out[i] = p
		if !p.quoted {
			if re := scaffolding.For(p.text); re != nil {
				if s, err := re.Replace(p.text, " ", -1, -1); err == nil { // err: only a match timeout, which is not set
					out[i].text = s
				}
			}
		}
		if ts, _ := analyze(out[i].text, false); len(ts) > 0 {
			found = true
		}
	}
	if !found {
		return parts
	}
	return out
}
