package retrieve

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

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

// subjects returns the persons among named (the authors the question
// names, not chat roles) that it asks about: those it names other than
// only as an owner. "What does Melanie think about Caroline's decision?"
// asks about Melanie, not Caroline.
func subjects(q string, named map[string]bool) map[string]bool {
	var words []string
	subj := map[string]bool{}
	for a, ok := range named {
		if !ok || atoms.IsRole(a) {
			continue
		}
		parts := strings.Fields(strings.ToLower(a))
		if len(parts) == 0 {
			continue
		}
		if words == nil {
			words = strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
				return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
			})
		}
		last := parts[len(parts)-1]
		subj[a] = slices.ContainsFunc(words, func(w string) bool {
			return strings.Trim(w, "'’") == last && !strings.HasSuffix(w, "'") && !strings.HasSuffix(w, "’")
		})
	}
	return subj
}

// otherAuthor returns, for hit i, its author when the question asks about
// other persons (subjects) and not them: their words do not answer what
// another person did or thought. "" when the question asks about no one
// the best matches name, or hit i is theirs or nobody's.
func (rv *Retriever) otherAuthor(hits []search.Hit, subj map[string]bool) func(i int) string {
	asked := slices.Contains(slices.Collect(maps.Values(subj)), true)
	return func(i int) string {
		if !asked || hits[i].Kind == "context" {
			return ""
		}
		en, ok := rv.catalog.Get(hits[i].Path)
		if !ok {
			return ""
		}
		a := en.RawConcept.Author
		if a == "" || atoms.IsRole(a) || subj[a] {
			return ""
		}
		return a
	}
}
