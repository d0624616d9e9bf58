package prompt

import (
	"fmt"
	"strings"
)

// Generation parameters of a tidy merge (docs/ABI.md §6.7): one answer of
// one entry, written from copies of it, so at most about the copies'
// length; a low temperature keeps the model close to their words, which
// the facts check needs verbatim.
const (
	TidyMergeMaxTokens   = 8192
	TidyMergeTemperature = 0.2
)

// DiffersMarker starts the line a merge marks a disagreement of the
// copies with; the deterministic merge marks its own the same way
// ("> **Differs in PATH**"), so a reader finds both alike.
const DiffersMarker = "> **Differs**"

// TidyMergeSystem is the system prompt of a tidy merge: the copies of one
// note in, the one entry that replaces them out.
const TidyMergeSystem = `You merge near-duplicate entries of a knowledge base into one entry. You are given two or more copies of one note, each introduced by its path, in the entry format: YAML front matter, then markdown sections.

Write the one entry that replaces them all, in the same format:

---
title: The title
summary: One sentence saying what the entry holds.
---

## Narrative
One text that says everything any copy says, each statement once.
(Keep the "### " subsections, such as ### Rules or ### Examples, that a copy has.)

## Facts
- **subject**: statement

Rules:
- Keep every fact line of every copy exactly as written, word for word, each once. Never reword, shorten or drop a fact; never add one.
- Keep every statement of every copy's narrative. Where copies say the same thing in different words, write it once. Do not summarize.
- Where the copies disagree (different numbers, dates, names or rules for the same thing), keep both statements and mark the disagreement on a line of its own: ` + DiffersMarker + `: PATH says …; PATH says ….
- Use only what the copies say: add nothing from your own knowledge.
- Reply with the entry only, starting with the "---" line: no explanation, no code fence.`

// Rules of TidyMergeSystem, in order of the comments:
//   - "fact lines word for word": the engine checks that every fact of
//     every copy is in the answer by its subject and statement, and falls
//     back to its own merge when one is missing; a reworded fact would
//     also be written twice (curate unites facts by statement).
//   - "do not summarize": a merge must lose nothing; the engine checks the
//     narrative is not much shorter than the fullest copy's.
//   - the disagreement line: a merge keeps both sides of a conflict, as
//     the deterministic merge does, for a person to settle.
//   - "only what the copies say", "the entry only": the answer is parsed
//     as an entry, and anything around it would make it unparseable.

// TidyMergeUser is the user message of a tidy merge: each copy, kept
// first, between markers that name its path.
func TidyMergeUser(copies []Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Merge these %d copies of one entry into one entry.\n", len(copies))
	for _, d := range copies {
		fmt.Fprintf(&b, "\n=== entry: %s ===\n%s\n", d.Path, strings.TrimSpace(d.Text))
	}
	b.WriteString("\n=== end of entries ===\n")
	return b.String()
}
