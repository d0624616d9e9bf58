package tree

import (
	"math/rand/v2"
	"strings"
)

// randomTexts calls check with n strings of up to max pieces each, drawn
// from pieces (the marks a scanner looks at) with a fixed seed: the
// reference tests compare a hand-written scanner with the regexp version
// it replaced on these.
func randomTexts(seed uint64, pieces []string, n, max int, check func(string)) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for range n {
		var b strings.Builder
		for range rng.IntN(max) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		check(b.String())
	}
}
