package prompt

import (
	"strings"
	"testing"
)

func TestTier3User(t *testing.T) {
	tests := []struct {
		name     string
		question string
		docs     []Document
		want     string
	}{
		{"entries trimmed, in order", "When do retries run?",
			[]Document{{Path: "eng/billing/retry.md", Text: "\n  Retries run at 02:00.\n\n"}, {Path: "ops/oncall.md", Text: "Ana is on call.\nBo backs her up."}},
			"Question: When do retries run?\n\nEntries:\n" +
				"\n=== entry: eng/billing/retry.md ===\nRetries run at 02:00.\n" +
				"\n=== entry: ops/oncall.md ===\nAna is on call.\nBo backs her up.\n" +
				"\n=== end of entries ===\n"},
		{"no entries", "Anything?", nil, "Question: Anything?\n\nEntries:\n\n=== end of entries ===\n"},
		{"empty text", "q", []Document{{Path: "a/b.md"}}, "Question: q\n\nEntries:\n\n=== entry: a/b.md ===\n\n\n=== end of entries ===\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Tier3User(tc.question, tc.docs); got != tc.want {
				t.Errorf("Tier3User =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestTier4User(t *testing.T) {
	tests := []struct {
		name, hits, escalation, want string
	}{
		{"question only", "", "", "Question: Who is on call?\n"},
		{"hits", "ops/oncall.md 0.91 On call", "",
			"Question: Who is on call?\n\nA first search found (path, score, title, excerpt):\nops/oncall.md 0.91 On call\n"},
		{"escalation", "", "the rota of March",
			"Question: Who is on call?\n\nA first answer from the top entries alone was not enough: the rota of March\n"},
		{"both", "h", "e",
			"Question: Who is on call?\n\nA first search found (path, score, title, excerpt):\nh\n\nA first answer from the top entries alone was not enough: e\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Tier4User("Who is on call?", tc.hits, tc.escalation); got != tc.want {
				t.Errorf("Tier4User =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestCurateUser(t *testing.T) {
	tests := []struct {
		instruction, material, want string
	}{
		{"focus on billing", "=== notes.md ===\nx", "Instruction: focus on billing\n\nMaterial:\n=== notes.md ===\nx"},
		{"", "m", "Material:\nm"},
		{"", "", "Material:\n"},
	}
	for _, tc := range tests {
		if got := CurateUser(tc.instruction, tc.material); got != tc.want {
			t.Errorf("CurateUser(%q, %q) = %q, want %q", tc.instruction, tc.material, got, tc.want)
		}
	}
}

func TestFormatReminder(t *testing.T) {
	got := FormatReminder("it cites no entry")
	want := "Your answer cannot be used: it cites no entry. Use the tools if you need more, then answer again in the format asked (Summary, Details, Sources with exact entry paths you read, Gaps), or reply NOT COVERED."
	if got != want {
		t.Errorf("FormatReminder =\n%q\nwant\n%q", got, want)
	}
}

func TestCompactSystem(t *testing.T) {
	tests := []struct {
		aggressive bool
		words      int
		has        []string
		hasNot     []string
	}{
		{false, 300, []string{"Summarize the material below in at most 300 words.", "Keep the file names"}, []string{"Compress hard"}},
		{true, 180, []string{"Compress hard: keep only the durable facts, decisions and rules; drop examples, chatter and repetition. Summarize the material below in at most 180 words."}, nil},
	}
	for _, tc := range tests {
		got := CompactSystem(tc.aggressive, tc.words)
		if !strings.HasPrefix(got, "You prepare raw material (notes, documents, code) for a knowledge base.") || !strings.HasSuffix(got, "Reply with the summary only.") {
			t.Errorf("CompactSystem(%v, %d) begins or ends unexpectedly:\n%s", tc.aggressive, tc.words, got)
		}
		for _, h := range tc.has {
			if !strings.Contains(got, h) {
				t.Errorf("CompactSystem(%v, %d) lacks %q", tc.aggressive, tc.words, h)
			}
		}
		for _, h := range append(tc.hasNot, "%!", "%d", "%s") {
			if strings.Contains(got, h) {
				t.Errorf("CompactSystem(%v, %d) holds %q", tc.aggressive, tc.words, h)
			}
		}
	}
}

// The system prompts hold the rules the engine relies on: the markers it
// detects, the answer format it parses, the tools it offers, and the
// overview given to them, last.
func TestSystemPrompts(t *testing.T) {
	const overview = "eng/\n  billing/ (3 entries)"
	format := []string{"## Summary\n", "## Details\n", "## Sources\n", "## Gaps\n", "exactly as given"}
	tests := []struct {
		name, prompt string
		has          []string
		suffix       string
	}{
		{"Tier3System", Tier3System,
			append([]string{"single line " + NotCovered + ".", "reply with " + NeedsMore + ":", "Use only the entries given", "Never invent a path", "1,000 tokens"}, format...), ""},
		{"Tier4System", Tier4System(overview),
			append([]string{"single line " + NotCovered + ".", "Never invent a path", "reply without calling a tool"}, format...),
			"\n\nThe tree's folders:\n" + overview},
		{"CurateSystem", CurateSystem(overview),
			[]string{"calling the " + ToolCurate + " tool", ToolSearch, ToolList, "Every operation needs a reason",
				"ADD (new entry; fails if it exists)", "UPDATE (", "UPSERT (", "MERGE (", "DELETE (",
				"its facts are invented and must never appear", "Example of one operation (shape only):\n" + ExampleJSON + "\n"},
			"\n\nThe tree's folders:\n" + overview},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, h := range tc.has {
				if !strings.Contains(tc.prompt, h) {
					t.Errorf("lacks %q", h)
				}
			}
			if tc.suffix != "" && !strings.HasSuffix(tc.prompt, tc.suffix) {
				t.Errorf("does not end with the overview %q:\n…%s", tc.suffix, tc.prompt[max(0, len(tc.prompt)-80):])
			}
			if strings.Contains(tc.prompt, "%!") {
				t.Errorf("holds a formatting error")
			}
		})
	}
	// The loop's prompt describes every tool the loop offers.
	p := Tier4System("")
	for _, tl := range QueryTools() {
		if !strings.Contains(p, "- "+tl.Name+": ") {
			t.Errorf("Tier4System does not describe %s", tl.Name)
		}
	}
	// The prompts are the same on every call.
	if Tier4System(overview) != Tier4System(overview) || CurateSystem(overview) != CurateSystem(overview) {
		t.Error("a system prompt differs between calls")
	}
}
