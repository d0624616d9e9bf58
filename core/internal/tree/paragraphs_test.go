package tree

import (
	"slices"
	"strings"
	"testing"
)

// Paragraphs cuts at blank lines outside fences only, and its pieces
// joined are the text.
func TestParagraphs(t *testing.T) {
	text := "One.\n\n```go\nfunc a() {}\n\nfunc b() {}\n```\n\nTwo ``` inline.\n\n~~~~\nx\n\n```\n\ny\n~~~~\n\nThree."
	want := []string{"One.", "```go\nfunc a() {}\n\nfunc b() {}\n```", "Two ``` inline.", "~~~~\nx\n\n```\n\ny\n~~~~", "Three."}
	got := Paragraphs(text)
	if !slices.Equal(got, want) {
		t.Errorf("Paragraphs = %q\nwant %q", got, want)
	}
	if strings.Join(got, "\n\n") != text {
		t.Error("the pieces joined are not the text")
	}
}
