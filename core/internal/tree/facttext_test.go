package tree

import (
	"regexp"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// refParseFactText is parseFactText as it was written with regular
// expressions, kept as the reference the hand-written cuts must agree with.
var (
	refFactSubject    = regexp.MustCompile(`^\*\*(.+?)\*\*:\s*(.*)$`)
	refFactSubjectAlt = regexp.MustCompile(`^\*\*(.+?):\*\*\s*(.*)$`)
	refFactCategory   = regexp.MustCompile(`^(.*\S)\s+\[([^\[\]]+)\]$`)
)

func refParseFactText(text string) api.Fact {
	subj, st := "", strings.TrimSpace(text)
	for subj == "" {
		m := refFactSubject.FindStringSubmatch(st)
		if m == nil {
			m = refFactSubjectAlt.FindStringSubmatch(st)
		}
		if m == nil {
			break
		}
		subj, st = stripStars(m[1]), strings.TrimSpace(m[2])
	}
	cat := ""
	if m := refFactCategory.FindStringSubmatch(st); m != nil {
		if c, rest := strings.TrimSpace(m[2]), strings.TrimSpace(m[1]); c != "" && rest != "" {
			st, cat = rest, c
		}
	}
	return api.Fact{Subject: subj, Statement: st, Category: cat}
}

var factTextCases = []string{
	"",
	"plain statement",
	"**subject**: statement [category]",
	"**subject:** statement [category]",
	"**a**:b",
	"**a**: **b**: c",
	"****: x",
	"**** **: x",
	"**a**:",
	"**:**: x",
	"**a:**:** b",
	"**a**: b [c] [d]",
	"**a**: b [c]d",
	"**a**: b[c]",
	"b  \t[c]",
	"[c]",
	" [c]",
	"b [ ]",
	"b [\u00a0]",
	"b\u00a0[c]",
	"b\v[c]",
	"b [[c]]",
	"b [c[d]",
	"b [c]]",
	"**a\nb**: c",
	"**a**:\n c",
	"**a**: c\n[d]",
	"b\n [c]",
	"b [c\nd]",
	"**価値観**: 가치관을 존중한다 [文化]",
	"**\xff**: \xfe [\xff]",
	"**a**: b\r [c]",
}

func TestParseFactTextMatchesReference(t *testing.T) {
	for _, s := range factTextCases {
		if got, want := parseFactText(s), refParseFactText(s); got != want {
			t.Errorf("parseFactText(%q)\n got %#v\nwant %#v", s, got, want)
		}
	}
	pieces := []string{"**", "*", ":", ":**", "**:", "[", "]", " ", "\t", "\n", "\r", "\f", "\v", "\u00a0",
		"a", "b", "é", "価", "\xff"}
	randomTexts(5, pieces, 30000, 14, func(s string) {
		if got, want := parseFactText(s), refParseFactText(s); got != want {
			t.Fatalf("parseFactText(%q)\n got %#v\nwant %#v", s, got, want)
		}
	})
}

func FuzzParseFactText(f *testing.F) {
	for _, s := range factTextCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := parseFactText(s), refParseFactText(s); got != want {
			t.Errorf("parseFactText(%q)\n got %#v\nwant %#v", s, got, want)
		}
	})
}
