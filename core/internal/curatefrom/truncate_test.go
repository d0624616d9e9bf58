package curatefrom

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/agent"
)

func TestTruncateToFitTerminatesOnHugeInput(t *testing.T) {
	huge := strings.Repeat("ünïcode words and lines\n", 400000) // ~9.6 MB
	calls := 0
	fits := func(s string) bool { calls++; return agent.EstimateTokens(s) <= compactTokens }
	out := truncateToFit(huge, fits)
	if !utf8.ValidString(out) || agent.EstimateTokens(out) > compactTokens || !strings.HasPrefix(huge, out) {
		t.Fatalf("out: %d runes, valid %v", utf8.RuneCountInString(out), utf8.ValidString(out))
	}
	if n := utf8.RuneCountInString(out); n < api.CompactAbove*9/10 {
		t.Fatalf("kept %d runes, want close to %d", n, api.CompactAbove)
	}
	if calls > 30 {
		t.Fatalf("%d calls of fits: not a binary search", calls)
	}
	if got := truncateToFit("short", fits); got != "short" {
		t.Fatalf("a fitting text changed: %q", got)
	}
	if got := truncateToFit("abc", func(string) bool { return false }); got != "" {
		t.Fatalf("nothing fits: %q", got)
	}
}

func TestTruncateToFitRuneBoundaries(t *testing.T) {
	// Every prefix length, on text of 1- to 4-byte runes without spaces:
	// the result is the longest fitting prefix of whole runes.
	s := "aé€𝄞bé€𝄞c"
	for limit := 0; limit <= len(s); limit++ {
		got := truncateToFit(s, func(p string) bool { return len(p) <= limit })
		want := ""
		for i := range s {
			if i <= limit {
				want = s[:i]
			}
		}
		if len(s) <= limit {
			want = s
		}
		if got != want {
			t.Fatalf("limit %d: got %q, want %q", limit, got, want)
		}
	}
}
