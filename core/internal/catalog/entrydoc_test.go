package catalog

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/internal/tree"
)

// A chat transcript's assistant turns are indexed as an aside; anything
// else is content as the entry's text has it.
func TestEntryDocTranscript(t *testing.T) {
	en := &tree.Entry{Path: "chats/s1.md", Title: "Chat"}
	en.RawConcept.Task = "Chat with the assistant"
	en.Narrative.Text = "**User:** I adopted a **greyhound**.\n\n**Assistant:** Greyhounds are **calm** indoors.\n\n**User:** Thanks!"
	d := EntryDoc(en)
	if !strings.Contains(d.Content, "User: I adopted a greyhound.") || !strings.Contains(d.Content, "User: Thanks!") ||
		!strings.Contains(d.Content, "Chat with the assistant") || strings.Contains(d.Content, "calm") {
		t.Errorf("content %q", d.Content)
	}
	if d.Aside != "Assistant: Greyhounds are calm indoors." {
		t.Errorf("aside %q", d.Aside)
	}
	en.Narrative.Text = "Caroline: I went to the support group.\nMelanie: That's great!"
	if d := EntryDoc(en); d.Aside != "" || d.Content != en.Text() {
		t.Errorf("a chat between people: content %q, aside %q", d.Content, d.Aside)
	}
}
