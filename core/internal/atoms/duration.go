package atoms

import (
	"github.com/dlclark/regexp2"

	"github.com/arbormem/arbor/core/internal/lazyre"
)

// Phrase is a stretch of a question: its text and byte offsets.
type Phrase struct {
	Text       string
	Start, End int
}

// durationRe matches the words that ask for a length of time: "how many
// days ago", "how many weeks have passed", "how long ago". The unit and the
// "ago" or "passed" shape the answer (a count), not what the question is
// about. A bare "how long" or "how many days" is left alone: "How long has
// she been doing yoga?" is answered by "for a long time", "How many days
// did I spend in Hawaii?" by "five days". Compiled and tried only for a
// question saying "how".
var durationRe = lazyre.New(`\bhow\s+(?:many\s+(?:days|weeks|months|years|hours)\s+(?:ago|before|after|since|later|earlier|(?:(?:have|has|had)\s+)?(?:passed|elapsed|gone\s+by))|long\s+ago)\b`, regexp2.IgnoreCase, "how")

// Durations finds the phrases of a question that ask for a duration.
func Durations(question string) []Phrase {
	var out []Phrase
	offs := runeOffsets(question)
	re := durationRe.For(question)
	if re == nil {
		return nil
	}
	m, _ := re.FindStringMatch(question)
	for ; m != nil; m, _ = re.FindNextMatch(m) {
		start, end := offs[m.Index], offs[m.Index+m.Length]
		out = append(out, Phrase{Text: question[start:end], Start: start, End: end})
	}
	return out
}
