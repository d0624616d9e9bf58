// Package lazyre holds regular expressions (regexp2) compiled at their
// first use, and tried only on text holding a word that any of their
// matches must contain.
//
// Every command of the CLI is a fresh WebAssembly module, which runs its
// packages' initialization before any work: compiling the question
// patterns there was about a third of it (regexp2 builds its programs
// slowly; the month names' pattern alone takes 2.3 ms in the module), for
// questions that name no month, no "ago" and no "how", which are most.
package lazyre

import (
	"strings"
	"sync"

	"github.com/dlclark/regexp2"
)

// Regexp is a regexp2 expression compiled when first needed.
type Regexp struct {
	needs []string
	re    func() *regexp2.Regexp
}

// New returns expr with opts, compiled at the first For that needs it
// (an invalid expr panics there, as regexp2.MustCompile would at init).
// needs are lower-case words of which every match of expr holds one, as
// regexp2 matches with opts (with IgnoreCase, whatever their case);
// none: every text may match.
func New(expr string, opts regexp2.RegexOptions, needs ...string) *Regexp {
	return &Regexp{needs: needs, re: sync.OnceValue(func() *regexp2.Regexp {
		return regexp2.MustCompile(expr, opts)
	})}
}

// For returns the compiled expression when text may hold a match, else
// nil: text holds none of its words, and it is left uncompiled.
func (r *Regexp) For(text string) *regexp2.Regexp {
	if len(r.needs) > 0 {
		// regexp2 folds each rune as unicode.ToLower does, and so does
		// strings.ToLower: a word a match holds in any case is found.
		lower := strings.ToLower(text)
		found := false
		for _, w := range r.needs {
			if strings.Contains(lower, w) {
				found = true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return r.re()
}

// Compiled returns the expression, compiled now if it was not: for an
// expression without words (compiled at its first use only), and for the
// tests that check the words.
func (r *Regexp) Compiled() *regexp2.Regexp { return r.re() }
