// Package gather builds the context of an entry for a prompt (docs/ABI.md
// §4.16): the entry, then the entries it relates to and those linking to
// it, breadth-first, each whole or by its summary as long as a token budget
// holds them.
package gather

import (
	"strings"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/agent"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/tree"
)

// separator joins the parts of the markdown.
const separator = "\n\n"

// cutNote ends the entry asked for when it is cut to the budget.
const cutNote = "\n\n(cut here: the rest is over the token budget)"

// leftOut ends an entry given by its summary.
const leftOut = "(its text is left out: over the token budget)"

// step is an entry the walk reached and how.
type step struct {
	path, via, link string
	depth           int
}

// Build returns the context of the entry at root, whose path the catalog
// holds: the walk goes depth links away at most, and the markdown takes at
// most budget tokens (agent.EstimateTokens, the estimate the engine uses
// for a model's usage). The order is the walk's: each level's entries in
// the order they were reached, an entry's relations (sorted) before its
// backlinks (sorted). An entry gets in whole if it fits in what is left of
// the budget, else by its title, path and summary if those fit, else not at
// all; the entry asked for is cut to the budget instead. Only the entries
// that got in lead further. Entries under api.ArchiveFolder are not
// reached unless archived is set or root is one of them.
func Build(cat *catalog.Catalog, root string, depth, budget int, archived bool) api.ContextResult {
	archived = archived || api.IsArchived(root)
	res := api.ContextResult{Path: root, Budget: budget, Depth: depth, Entries: []api.ContextEntry{}}
	var parts []string
	left := budget
	seen := map[string]bool{root: true}
	level := []step{{path: root}}
	for d := 0; len(level) > 0; d++ {
		var next []step
		for _, s := range level {
			ce := api.ContextEntry{Path: s.path, Depth: s.depth, Via: s.via, Link: s.link}
			en, ok := cat.Get(s.path)
			if !ok {
				ce.Title, _ = cat.Title(s.path)
				ce.Included, ce.Reason = api.ContextOmitted, api.ContextReasonUnreadable
				res.Entries = append(res.Entries, ce)
				continue
			}
			ce.Title = en.Title
			full := render(en, s, true)
			ce.FullTokens = agent.EstimateTokens(full)
			part := ""
			switch {
			case cost(full, parts) <= left:
				part, ce.Included = full, api.ContextFull
			case d == 0:
				part, ce.Included, ce.Reason = cut(full, left), api.ContextTruncated, api.ContextReasonBudget
			default:
				ce.Included, ce.Reason = api.ContextOmitted, api.ContextReasonBudget
				if short := render(en, s, false); cost(short, parts) <= left {
					part, ce.Included = short, api.ContextSummary
				}
			}
			if part != "" {
				left -= cost(part, parts)
				parts = append(parts, part)
				ce.Tokens = agent.EstimateTokens(part)
				if d < depth {
					next = append(next, neighbours(cat, s, seen, archived)...)
				}
			}
			res.Entries = append(res.Entries, ce)
		}
		level = next
	}
	res.Markdown = strings.Join(parts, separator)
	res.Tokens = agent.EstimateTokens(res.Markdown)
	return res
}

// neighbours returns the entries s leads to that the walk has not reached:
// its relations that name an entry, then its backlinks; archived ones
// only when archived is set.
func neighbours(cat *catalog.Catalog, s step, seen map[string]bool, archived bool) []step {
	var out []step
	add := func(p, link string) {
		if !seen[p] && cat.Has(p) && (archived || !api.IsArchived(p)) {
			seen[p] = true
			out = append(out, step{path: p, via: s.path, link: link, depth: s.depth + 1})
		}
	}
	for _, p := range cat.Forward(s.path) {
		add(p, api.ContextLinkRelation)
	}
	for _, p := range cat.Backlinks(s.path) {
		add(p, api.ContextLinkBacklink)
	}
	return out
}

// cost is what part adds to the markdown after parts. Each part and its
// separator are estimated apart, which never counts less than the estimate
// of the whole (a sum of roundings up), so the markdown stays in budget.
func cost(part string, parts []string) int {
	n := agent.EstimateTokens(part)
	if len(parts) > 0 {
		n += agent.EstimateTokens(separator)
	}
	return n
}

// render is an entry's part of the markdown: a "# Title" heading, where it
// is and how the walk reached it, its summary, then its text (whole) or a
// line saying the text is left out.
func render(en *tree.Entry, s step, whole bool) string {
	var b strings.Builder
	b.WriteString("# " + oneLine(en.Title) + "\n")
	b.WriteString("Path: " + s.path)
	switch s.link {
	case api.ContextLinkRelation:
		b.WriteString(" (related from " + s.via + ")")
	case api.ContextLinkBacklink:
		b.WriteString(" (links to " + s.via + ")")
	}
	b.WriteString("\n")
	if sum := oneLine(en.Summary); sum != "" {
		b.WriteString("Summary: " + sum + "\n")
	}
	if !whole {
		b.WriteString(leftOut)
		return b.String()
	}
	if body := tree.Body(en); body != "" {
		b.WriteString("\n" + body)
	}
	return strings.TrimRight(b.String(), "\n")
}

// oneLine folds s onto one line: a title or summary must not start a
// heading or a section of its own in the markdown.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cut shortens part to fit in budget tokens with cutNote at its end: at
// the last line break that keeps at least half of what fits, else
// mid-line (at a character boundary).
func cut(part string, budget int) string {
	// EstimateTokens rounds runes/4 up: 4*budget runes is the most that fit.
	keep := 4*budget - utf8.RuneCountInString(cutNote)
	if keep <= 0 {
		return ""
	}
	i := 0
	for n := 0; n < keep && i < len(part); n++ {
		_, size := utf8.DecodeRuneInString(part[i:])
		i += size
	}
	head := part[:i]
	if nl := strings.LastIndexByte(head, '\n'); nl >= len(head)/2 {
		head = head[:nl]
	}
	return strings.TrimRight(head, "\n") + cutNote
}
