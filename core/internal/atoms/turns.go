package atoms

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2"

	"github.com/arbormem/arbor/core/internal/lazyre"
)

// Turn is one speaker's stretch of a transcript.
type Turn struct {
	Speaker string // the label as written ("User", "Assistant", "Caroline"); "" for text before the first label
	Text    string // what was said, without the label, trimmed
}

// labelRe matches a speaker label opening a line: "**User:**", "User:",
// "**Caroline**:", "> Assistant:". A label is one to three words of
// letters, digits, dots, dashes or underscores and ends in a colon
// followed by a space or the end of the line. It is anchored at the start
// of the text it is given, one line (Turns): regexp2 has no fast path for
// a multi-line "^", and would otherwise try a match at every letter of the
// text, which made indexing a long narrative slow (bench/ingest). Compiled
// at the first transcript, which a question never needs (lazyre).
var labelRe = lazyre.New(`^(?:>\s*)?(?:\*\*|__)?(?<name>[\p{L}\p{N}][\p{L}\p{N}._-]*(?: [\p{L}\p{N}._-]+){0,2})(?:\*\*|__)?:(?:\*\*|__)?(?=\s|$)`, regexp2.None)

// Turns cuts a transcript into its speakers' turns: a turn starts at a line
// opening with a speaker label and runs to the next one. Text before the
// first label is a turn without a speaker. Text with fewer than two
// labelled lines is no transcript and comes back whole, as one turn
// without a speaker.
func Turns(text string) []Turn {
	type label struct {
		speaker    string
		start, end int // bytes: the label's start, the text's start
	}
	var ls []label
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		// A label holds a colon: most lines are rejected without the regexp.
		if line := text[start:end]; strings.IndexByte(line, ':') >= 0 {
			if m, _ := labelRe.Compiled().FindStringMatch(labelSpan(line)); m != nil {
				ls = append(ls, label{speaker: m.GroupByName("name").String(), start: start, end: start + runeBytes(line, m.Length)})
			}
		}
		start = end + 1
	}
	if len(ls) < 2 {
		return []Turn{{Text: strings.TrimSpace(text)}}
	}
	var out []Turn
	if head := strings.TrimSpace(text[:ls[0].start]); head != "" {
		out = append(out, Turn{Text: head})
	}
	for i, l := range ls {
		end := len(text)
		if i+1 < len(ls) {
			end = ls[i+1].start
		}
		out = append(out, Turn{Speaker: l.speaker, Text: strings.TrimSpace(text[l.end:end])})
	}
	return out
}

// labelSpan is the start of line that can hold a label: a label ends at
// the line's first colon (a name holds none), its closing "**" or "__" and
// the space after them, so the regexp is given the line up to three runes
// past the colon (a line that goes on never looks ended to its "$"). It
// would otherwise convert the whole line to runes, a paragraph of a
// transcript as much as its label (bench/build).
func labelSpan(line string) string {
	end := strings.IndexByte(line, ':') + 1
	for n := 0; n < 3 && end < len(line); n++ {
		_, w := utf8.DecodeRuneInString(line[end:])
		end += w
	}
	return line[:end]
}

// runeBytes is the length in bytes of the first n runes of s, as regexp2
// counts them (an invalid byte is one rune).
func runeBytes(s string, n int) int {
	i := 0
	for ; n > 0 && i < len(s); n-- {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return i
}

// runeOffsets maps regexp2's rune indexes to byte offsets of s: element i
// is the byte offset of rune i, and the last element is len(s).
func runeOffsets(s string) []int {
	offs := make([]int, 0, len(s)+1)
	for i := range s {
		offs = append(offs, i)
	}
	return append(offs, len(s))
}

// assistantLabels are the speaker labels of the machine side of a chat.
// Words that also label fields of ordinary notes ("System:", "Model:",
// "Agent:") are left out.
var assistantLabels = map[string]bool{"assistant": true, "ai": true, "bot": true, "chatbot": true,
	"chatgpt": true, "claude": true, "gemini": true, "copilot": true}

// IsAssistant reports whether a speaker label names the assistant side of
// a chat rather than a person.
func IsAssistant(speaker string) bool {
	return assistantLabels[strings.ToLower(strings.TrimSpace(speaker))]
}

// roles are the speaker names of a chat with an assistant: a side of the
// chat, not a person's name.
var roles = []string{"user", "assistant", "system", "tool", "human", "ai", "bot", "model", "function", "developer"}

// IsRole reports whether a speaker or author name is a chat role ("user",
// "assistant", …) rather than a person's name.
func IsRole(name string) bool {
	return slices.Contains(roles, strings.ToLower(strings.TrimSpace(name)))
}

// Split separates a chat transcript into what its people said and what the
// assistant said, each a list of turns. Text that is not a chat with both
// sides (see Turns) is all said.
func Split(text string) (said, assistant []Turn) {
	turns := Turns(text)
	for _, t := range turns {
		if IsAssistant(t.Speaker) {
			assistant = append(assistant, t)
		} else {
			said = append(said, t)
		}
	}
	if len(assistant) == 0 || len(assistant) == len(turns) {
		return turns, nil
	}
	return said, assistant
}
