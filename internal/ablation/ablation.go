// Package ablation switches the engine's retrieval mechanisms off, for the
// ablation of the retrieval benchmark (bench/retrieval -ablation): a
// mechanism's contribution is what the rankings lose when it alone is off.
//
// It sits outside core/ because the benchmark, which is not under core/,
// sets it, and under internal/ so that nothing outside this module can:
// the switches are no part of the engine's API or ABI. engine.Open reads
// them once, when it opens a memory; with nothing switched off, the only
// state outside the benchmark, every mechanism is on and the engine is
// what it is without this package.
package ablation

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// Mechanism is one retrieval mechanism that can be switched off.
type Mechanism uint

// The mechanisms, as bench/retrieval/mechanisms.md describes them.
const (
	Scaffolding     Mechanism = iota // search: question scaffolding ("how many times") left out of the terms
	TitleBoost                       // search: the title weighs ×3 (off: ×1)
	AssistantAside                   // search: an assistant's turns in their own field at ×0.5 (off: in the content)
	PrefixExpansion                  // search: the last word also matches the words it begins
	FuzzyExpansion                   // search: long words also match the words one edit away
	TimeWindow                       // retrieve: entries dated within a time the question names with confidence ×2
	DurationWords                    // retrieve: words asking for a duration ("how many days ago") left out of the search
	NamedAuthors                     // retrieve: entries by a person the question names ×1.5
	Siblings                         // retrieve: pieces of an exchange by their episode's evidence
	Openers                          // retrieve: the piece opening an episode ×1.3
	OwnWords                         // retrieve: pieces by the share of the question's terms they say themselves
	PieceLength                      // retrieve: pieces by how many words they say, relative to the pool's median
	RepliedTo                        // retrieve: the turns the best matches reply to borrow a share of their score
	FuzzyCache                       // retrieve: tier 1, a cached direct answer serving a near-copy question
	numMechanisms
)

var names = [numMechanisms]string{
	Scaffolding:     "scaffolding",
	TitleBoost:      "title-boost",
	AssistantAside:  "assistant-aside",
	PrefixExpansion: "prefix",
	FuzzyExpansion:  "fuzzy",
	TimeWindow:      "time-window",
	DurationWords:   "duration-words",
	NamedAuthors:    "named-authors",
	Siblings:        "siblings",
	Openers:         "openers",
	OwnWords:        "own-words",
	PieceLength:     "piece-length",
	RepliedTo:       "replied-to",
	FuzzyCache:      "fuzzy-cache",
}

// String is the mechanism's name, as Parse reads it.
func (m Mechanism) String() string {
	if m < numMechanisms {
		return names[m]
	}
	return fmt.Sprintf("mechanism(%d)", uint(m))
}

// All lists every mechanism, in the order of the constants.
func All() []Mechanism {
	out := make([]Mechanism, numMechanisms)
	for i := range out {
		out[i] = Mechanism(i)
	}
	return out
}

// Parse returns the mechanism of a name String gives.
func Parse(name string) (Mechanism, error) {
	for m, n := range names {
		if n == name {
			return Mechanism(m), nil
		}
	}
	return 0, fmt.Errorf("ablation: no mechanism %q (there are %s)", name, strings.Join(names[:], ", "))
}

// Set is a set of mechanisms switched off; the zero Set switches none.
type Set uint64

// Of is the set of ms.
func Of(ms ...Mechanism) Set {
	var s Set
	for _, m := range ms {
		s |= 1 << m
	}
	return s
}

// Has reports whether m is in s.
func (s Set) Has(m Mechanism) bool { return s&(1<<m) != 0 }

var off atomic.Uint64

// SwitchOff makes the engines opened from now on leave the mechanisms of s
// off, and returns the set it replaces; SwitchOff(0) turns every one on
// again. Engines already open keep what they were opened with.
func SwitchOff(s Set) (prev Set) { return Set(off.Swap(uint64(s))) }

// Off is the set of mechanisms switched off.
func Off() Set { return Set(off.Load()) }
