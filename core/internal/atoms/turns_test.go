package atoms

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
)

func TestTurns(t *testing.T) {
	cases := []struct {
		name string
		text string
		want []Turn
	}{
		{"bold labels", "**User:** I moved to Lisbon.\n\n**Assistant:** Welcome!\nIt is sunny.",
			[]Turn{{"User", "I moved to Lisbon."}, {"Assistant", "Welcome!\nIt is sunny."}}},
		{"plain labels and a preamble", "Notes from the call\nCaroline: hi\nMelanie: hello there",
			[]Turn{{"", "Notes from the call"}, {"Caroline", "hi"}, {"Melanie", "hello there"}}},
		{"bold name then colon", "**Dr. Lee**: take two\n**Sam Park**: ok",
			[]Turn{{"Dr. Lee", "take two"}, {"Sam Park", "ok"}}},
		{"one label is no transcript", "Note: the retry policy is 3 attempts.", []Turn{{"", "Note: the retry policy is 3 attempts."}}},
		{"times and urls are no labels", "at 10:30 we met\nsee https://x.y\nthen: done", []Turn{{"", "at 10:30 we met\nsee https://x.y\nthen: done"}}},
		{"labels only at line starts", "then we told User: no\nand so the Assistant: yes", []Turn{{"", "then we told User: no\nand so the Assistant: yes"}}},
		{"non-ASCII", "**Jürgen:** café\n**사용자:** 가치관이", []Turn{{"Jürgen", "café"}, {"사용자", "가치관이"}}},
		{"four words are no label", "one two three four: x\nfive six seven eight: y", []Turn{{"", "one two three four: x\nfive six seven eight: y"}}},
	}
	for _, c := range cases {
		if got := Turns(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Turns(%q) = %q, want %q", c.name, c.text, got, c.want)
		}
	}
}

func TestSplit(t *testing.T) {
	said, asst := Split("**User:** I love hiking.\n\n**Assistant:** Try the Alps.\n\n**User:** Thanks")
	if len(said) != 2 || said[0].Text != "I love hiking." || said[1].Text != "Thanks" {
		t.Errorf("said = %q", said)
	}
	if len(asst) != 1 || asst[0].Text != "Try the Alps." {
		t.Errorf("assistant = %q", asst)
	}
	// Not a chat with both sides: everything is said.
	for _, text := range []string{
		"Caroline: hi\nMelanie: hello",
		"Assistant: one\nAI: two",
		"System: Ubuntu 22.04\nModel: ThinkPad X1", // field labels of a note, not a chat
		"plain text",
	} {
		said, asst := Split(text)
		if asst != nil || !reflect.DeepEqual(said, Turns(text)) {
			t.Errorf("Split(%q) = %q, %q; want all said", text, said, asst)
		}
	}
}

func TestIsAssistant(t *testing.T) {
	for _, s := range []string{"Assistant", "assistant", " AI ", "ChatGPT", "Claude"} {
		if !IsAssistant(s) {
			t.Errorf("IsAssistant(%q) = false", s)
		}
	}
	for _, s := range []string{"User", "Caroline", "System", "Model", "Agent", ""} {
		if IsAssistant(s) {
			t.Errorf("IsAssistant(%q) = true", s)
		}
	}
}

// TestTurnsLineByLine checks Turns, which matches labels line by line,
// against the one regexp over the whole text it replaced (a multi-line
// "^"), on random transcripts.
func TestTurnsLineByLine(t *testing.T) {
	whole := regexp2.MustCompile(`^(?:>\s*)?(?:\*\*|__)?(?<name>[\p{L}\p{N}][\p{L}\p{N}._-]*(?: [\p{L}\p{N}._-]+){0,2})(?:\*\*|__)?:(?:\*\*|__)?(?=\s|$)`, regexp2.Multiline)
	reference := func(text string) []Turn {
		type label struct {
			speaker    string
			start, end int
		}
		var ls []label
		offs := runeOffsets(text)
		m, _ := whole.FindStringMatch(text)
		for m != nil {
			ls = append(ls, label{m.GroupByName("name").String(), offs[m.Index], offs[m.Index+m.Length]})
			m, _ = whole.FindNextMatch(m)
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
	parts := []string{"User", "Assistant", "Dr. Lee", "Jürgen", "사용자", ":", ": ", "**", "__", "> ", " ", "\n", "\r\n", "\n\n", "10:30", "a b c d", "x", "é", "\xff", "-", ".",
		"\u00a0", "\u3000", "\t", "*", "_", "\xe3\x80", "and then a longer stretch of words"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := rng.IntN(30); n > 0; n-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		text := b.String()
		if got, want := Turns(text), reference(text); !reflect.DeepEqual(got, want) {
			t.Fatalf("Turns(%q) = %q, want %q", text, got, want)
		}
	}
}
