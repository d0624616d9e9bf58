package tidy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/internal/sets"
)

func TestShingles(t *testing.T) {
	a := shingles("one two three four five six")
	b := shingles("one two three four five seven")
	// 4 shingles each, 3 shared: 3/5.
	if got := sets.Jaccard(a, b); got != 0.6 {
		t.Errorf("similarity %v, want 0.6", got)
	}
	if sets.Jaccard(a, a) != 1 {
		t.Error("a set is not like itself")
	}
}

// TestSimilarPairsFindsPlanted: among random texts, the planted copies
// (one word in twenty changed: similarity about 0.85) are all found, the
// unrelated texts never, and the answer is the same on every run.
func TestSimilarPairsFindsPlanted(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	text := func() []string {
		ws := make([]string, 200)
		for i := range ws {
			ws[i] = vocab[r.IntN(len(vocab))]
		}
		return ws
	}
	var sets [][]uint32
	want := map[[2]int]bool{}
	for i := range 300 {
		ws := text()
		sets = append(sets, shingles(strings.Join(ws, " ")))
		if i%3 == 0 {
			edited := append([]string(nil), ws...)
			for k := 0; k < len(edited); k += 40 {
				edited[k] = vocab[r.IntN(len(vocab))]
			}
			want[[2]int{len(sets) - 1, len(sets)}] = true
			sets = append(sets, shingles(strings.Join(edited, " ")))
		}
	}
	got := SimilarPairs(sets, 0.8)
	for _, p := range got {
		if !want[[2]int{p.A, p.B}] {
			t.Errorf("unplanted pair %v", p)
		}
		delete(want, [2]int{p.A, p.B})
	}
	if len(want) > 0 {
		t.Errorf("planted pairs missed: %v", want)
	}
	again := SimilarPairs(sets, 0.8)
	if fmt.Sprint(again) != fmt.Sprint(got) {
		t.Error("two runs differ")
	}
}

// TestSentencesRoundTrip: cutting a text into sentence lines and back
// gives the text, lists and paragraphs included.
func TestSentencesRoundTrip(t *testing.T) {
	for _, text := range []string{
		"One. Two! Three? Four",
		"A paragraph. Its second sentence.\n\nAnother one.\n- a list item. with a dot\n- another",
		"```\ncode. more code\n```\nAfter it.",
	} {
		lines, join := sentenceLines(text)
		if got := strings.TrimSpace(unSentence(lines, join)); got != text {
			t.Errorf("round trip of %q = %q", text, got)
		}
	}
}

// TestMergeTextMarksRewording: the fuller text is kept, a sentence only
// the other has is added where it stands, and a sentence the other says
// differently is marked with the other's path.
func TestMergeTextMarksRewording(t *testing.T) {
	a := "Alpha is first. Beta is second. Gamma is third and longest of all."
	b := "Alpha is first. Beta comes after alpha. Gamma is third and longest of all. Delta is new."
	got := mergeText(a, b, "x/a.md", "x/b.md")
	want := "Alpha is first. Beta comes after alpha. Gamma is third and longest of all. Delta is new.\n\n> **Differs in x/a.md** (tidy merge; the text above is kept): Beta is second."
	if got != want {
		t.Errorf("mergeText =\n%s\nwant\n%s", got, want)
	}
}
