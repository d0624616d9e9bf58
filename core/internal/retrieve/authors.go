package retrieve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/internal/atoms"
	"github.com/arbormem/arbor/core/internal/search"
)

// Named authors (a structural reranker in the sense of ContextFit §7): a
// question that names a person ("What did Caroline research?") is about
// what that person said or did, so when it names some but not all of the
// authors (rawConcept.author) of the rerankPool best matches, the entries
// those people wrote have their raw score multiplied by authorBoost. A name
// in the title or body already matches, but in a conversation every entry
// carries both names (title, path, the turns replied to), so BM25 gives the
// name next to no weight.
const authorBoost = 1.5

// authors raises the scores of the entries written by a person the question
// names and returns the reason code of what it did, or ""; named is
// rv.named(r).
func (rv *Retriever) authors(r *search.Result, named map[string]bool) string {
	if rv.off.NamedAuthors {
		return ""
	}
	var who []string
	for a, ok := range named {
		if ok {
			who = append(who, a)
		}
	}
	if len(who) == 0 || len(who) == len(named) {
		return ""
	}
	slices.Sort(who)
	n := 0
	for i := range r.Hits {
		if r.Hits[i].Kind == "context" {
			continue
		}
		if en, ok := rv.catalog.Get(r.Hits[i].Path); ok && named[en.RawConcept.Author] {
			r.Hits[i].Raw *= authorBoost
			n++
		}
	}
	return fmt.Sprintf("authors: the question names %s; %d of the %d best matches are theirs, their scores ×%g",
		strings.Join(who, ", "), n, len(r.Hits), authorBoost)
}

// named tells, for each author (rawConcept.author) of the hits, whether
// the question names them: every term of the name is a term of the
// question.
func (rv *Retriever) named(r *search.Result) map[string]bool {
	named := map[string]bool{}
	for _, h := range r.Hits {
		if h.Kind == "context" {
			continue
		}
		en, ok := rv.catalog.Get(h.Path)
		if !ok || en.RawConcept.Author == "" {
			continue
		}
		a := en.RawConcept.Author
		if _, seen := named[a]; seen {
			continue
		}
		terms := rv.index.Terms(a)
		named[a] = len(terms) > 0 && !slices.ContainsFunc(terms, func(t string) bool { return !slices.Contains(r.Terms, t) })
	}
	return named
}

// person returns a person the question names among the authors named (a
// name, not a chat role such as "user"), or "".
func person(named map[string]bool) string {
	var who []string
	for a, ok := range named {
		if ok && !atoms.IsRole(a) {
			who = append(who, a)
		}
	}
	if len(who) == 0 {
		return ""
	}
	return slices.Min(who)
}
