// Package prompt holds everything Arbor says to a language model and the
// reading of what the model says back: the system prompts of tier 3 (one
// grounded call), tier 4 (the agentic loop), curation from raw material and
// its pre-compaction, the JSON Schemas of the tools, and the parser of the
// Summary / Details / Sources / Gaps answer format.
//
// Prompts live here, in one place, so that a change of wording is reviewed
// against the rules it must keep; each rule carries a comment saying why it
// is there. The package builds text only: it calls no model and reads no
// file (the engine does both through its host).
package prompt

import (
	"fmt"
	"strings"
)

// Generation parameters of docs/ABI.md §6.4 and the ByteRover paper (§4.2): tier
// 3 is one constrained call, tier 4 a longer loop with more room per turn.
const (
	Tier3MaxTokens   = 1024
	Tier3Temperature = 0.3
	Tier4MaxTokens   = 2048
	Tier4Temperature = 0.5
	// MaxIterations bounds the model calls of one agentic loop.
	MaxIterations = 50
	// CurateMaxTokens leaves a curation turn room for several operations
	// with their content; the paper runs curation at temperature 0, a
	// little above keeps a model from repeating a refused operation word
	// for word.
	CurateMaxTokens   = 4096
	CurateTemperature = 0.2
)

// Markers a model answers with instead of an answer (see Tier3System).
const (
	NotCovered = "NOT COVERED"
	NeedsMore  = "NEEDS MORE"
)

// answerFormat is the answer every query prompt asks for. Sources must be
// entry paths, one per line, so that the engine can check each against the
// entries it actually gave the model.
const answerFormat = `Answer in exactly this format:

## Summary
One or two sentences that answer the question.

## Details
The supporting facts, each with the path of the entry it comes from in parentheses.

## Sources
- one entry path per line, exactly as given (for example domain/topic/entry.md)

## Gaps
What the question asks that the entries do not say, or "none".`

// Tier3System is the system prompt of tier 3: one call over the entries
// the search prefetched.
const Tier3System = `You answer questions from a knowledge base of markdown entries. You are given a question and a few entries, each introduced by its path.

Rules:
- Use only the entries given. Do not add facts from your own knowledge, even when you are sure: the reader relies on every statement being traceable to an entry.
- Cite an entry only if you used it, by its exact path. Never invent a path.
- If the entries do not contain the answer at all, reply with the single line ` + NotCovered + `.
- If they answer only part of it and other entries in the knowledge base probably hold the rest (the question links several facts, people or events), reply with ` + NeedsMore + `: followed by what is missing, on one line.
- Keep it short: the whole answer must fit in 1,000 tokens.

` + answerFormat

// Rules of Tier3System, in order of the comments:
//   - "only the entries given": tier 3 exists to be grounded; an answer
//     from the model's own knowledge would look sourced while it is not.
//   - "exact path, never invent": the engine drops sources it did not give,
//     and an answer left with none is not shown as grounded.
//   - NOT COVERED / NEEDS MORE: the two ways tier 3 escalates to tier 4
//     (the loop can search further); a one-line marker is easy to detect
//     even from a small model.
//   - the size limit matches Tier3MaxTokens, so the answer is not cut off
//     mid-sentence.

// Tier3User is the user message of tier 3: the question, then each entry
// between markers that name its path.
func Tier3User(question string, entries []Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\n\nEntries:\n", question)
	for _, d := range entries {
		fmt.Fprintf(&b, "\n=== entry: %s ===\n%s\n", d.Path, strings.TrimSpace(d.Text))
	}
	b.WriteString("\n=== end of entries ===\n")
	return b.String()
}

// Document is one entry shown to a model: its path and its text.
type Document struct {
	Path string
	Text string
}

// Tier4System is the system prompt of the agentic loop. overview is the
// list of the tree's folders (see the engine's overview).
func Tier4System(overview string) string {
	return `You answer questions from a knowledge base, a tree of markdown entries organized as domain/topic[/subtopic]/entry.md. You cannot see the entries until you use the tools:
- search_knowledge: full-text search; returns entry paths, titles, scores and excerpts.
- read_entry: the whole entry at a path, with its relations.
- list_tree: the folders and entries below a folder.
- follow_relations: the entries an entry links to and the entries linking to it.

Rules:
- Search, then read the entries that look relevant before you answer; follow relations when the answer links several facts. Excerpts alone can mislead.
- Use only what the tools returned. Do not add facts from your own knowledge.
- Cite only entries you read or saw in search results, by their exact paths. Never invent a path.
- When you have the answer, reply without calling a tool. If the knowledge base does not hold the answer, reply with the single line ` + NotCovered + `.
- Each tool call costs time and tokens: stop as soon as you can answer.

` + answerFormat + `

The tree's folders:
` + overview
}

// Rules of Tier4System: "read before answering" because excerpts are
// passages, not the entry; "only what the tools returned" and "never invent
// a path" for the same grounding reason as tier 3 (the engine checks sources
// against what the tools returned); the closing rule because the loop is
// bounded by tokens and iterations, and a model that keeps searching ends
// with no answer at all.

// Tier4User opens the loop: the question, what tier 2 found, and when tier
// 3 escalated, the model's own note on what was missing.
func Tier4User(question, hits, escalation string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\n", question)
	if hits != "" {
		fmt.Fprintf(&b, "\nA first search found (path, score, title, excerpt):\n%s\n", hits)
	}
	if escalation != "" {
		fmt.Fprintf(&b, "\nA first answer from the top entries alone was not enough: %s\n", escalation)
	}
	return b.String()
}

// FormatReminder is sent when a loop's final answer cannot be used: the
// model gets one more chance, told exactly why.
func FormatReminder(problem string) string {
	return "Your answer cannot be used: " + problem + ". Use the tools if you need more, then answer again in the format asked (Summary, Details, Sources with exact entry paths you read, Gaps), or reply " + NotCovered + "."
}

// CompactSystem is the system prompt of a pre-compaction pass (paper
// §4.1.1): pass 1 summarizes normally, pass 2 aggressively (0.6× the
// budget). The model is told what curation needs from the summary, so that
// the facts survive and the prose goes.
func CompactSystem(aggressive bool, maxWords int) string {
	how := "Summarize"
	if aggressive {
		how = "Compress hard: keep only the durable facts, decisions and rules; drop examples, chatter and repetition. Summarize"
	}
	return fmt.Sprintf(`You prepare raw material (notes, documents, code) for a knowledge base. %s the material below in at most %d words.
- Keep every concrete fact: names, numbers, dates, versions, paths, decisions, rules, and who said or decided what.
- Keep the file names the facts come from.
- Do not add anything that is not in the material, and do not comment on it.
Reply with the summary only.`, how, maxWords)
}

// CurateSystem is the system prompt of curation from raw material.
// overview is the tree's folder list; the example shows the operation
// shape with invented facts that the engine refuses to see copied (see
// Example and CopiedExample).
func CurateSystem(overview string) string {
	return `You curate a knowledge base: a tree of markdown entries organized as domain/topic[/subtopic]/entry.md. You receive raw material and turn the knowledge in it into entries by calling the curate tool.

How:
- Extract durable knowledge: facts, decisions, rules, procedures, relations between things. Skip chatter.
- Put each piece where a reader would look for it: reuse existing domains and topics (see the folders below, search_knowledge, list_tree); create a new one only when nothing fits. Names are short lowercase words.
- Before adding, search for an entry on the same subject: UPDATE or MERGE it instead of adding a duplicate. UPSERT when unsure whether it exists.
- One entry per subject, with a clear title, a one-line summary, the narrative, the facts, and relations to entries it depends on.
- Every operation needs a reason: why this knowledge is stored.
- Write only what the material says. The example below shows the shape of an operation; its facts are invented and must never appear in the knowledge base.
- The curate tool answers with the status of each operation. When one failed, read the message, fix the operation and send it again, or leave it if it cannot work.
- When everything worth keeping is stored, reply with one short paragraph saying what you stored, without calling a tool.

Operation types: ADD (new entry; fails if it exists), UPDATE (replace an existing entry; what the new content lacks is kept), UPSERT (ADD or UPDATE), MERGE (fold the entry at path into mergeTarget), DELETE (remove an entry). path is a folder domain/topic[/subtopic] (the file is named after the title) or a full entry path ending in .md.

Example of one operation (shape only):
` + ExampleJSON + `

The tree's folders:
` + overview
}

// Rules of CurateSystem: "search before adding" because duplicates are the
// commonest decay of a curated tree; "reason" because the audit log and the
// entry's Reason section need it (the operation fails without one); "only
// what the material says" and "facts are invented" against the failure users
// report most, a model copying the example into the tree (the engine also
// refuses such operations, see CopiedExample); the feedback rule is the
// paper's stateful loop (§4.1.2); the closing rule ends the loop.

// CurateUser is the first user message of curation: the instruction, if
// any, then the material.
func CurateUser(instruction, material string) string {
	var b strings.Builder
	if instruction != "" {
		fmt.Fprintf(&b, "Instruction: %s\n\n", instruction)
	}
	b.WriteString("Material:\n")
	b.WriteString(material)
	return b.String()
}
