package tree

import (
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// rawLabel scans by hand what this pattern matched; every line made of
// the pieces below gets the same answer from both.
func TestRawLabelMatchesItsPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^\*\*([A-Za-z][A-Za-z ]*?)(?::\*\*|\*\*:)(.*)$`)
	oracle := func(line string) (string, string, bool) {
		m := pattern.FindStringSubmatch(line)
		if m == nil {
			return "", "", false
		}
		k := sectionKey(m[1])
		for _, l := range rawLabels {
			if l.key == k {
				return k, m[2], true
			}
		}
		return "", "", false
	}
	starts := []string{"**", "*", "", " **", "***", "**:"}
	labels := []string{"Task", "task", "FLOW", "Files", "Time stamp", "Timestamp ", "Author", "A", "1Task", "Ta-sk", "Ta*sk", "Ta:sk", "", " Task", "Tåsk", "Changes"}
	delims := []string{":**", "**:", ":*", "**", ": **", ":**:**", "**:**", "*:", ""}
	rests := []string{"", " value", " **Flow:** then", ":**", "é ∂", "\xff"}
	n := 0
	for _, s := range starts {
		for _, l := range labels {
			for _, d := range delims {
				for _, r := range rests {
					line := s + l + d + r
					k, rest, ok := rawLabel(line)
					wk, wrest, wok := oracle(line)
					if k != wk || rest != wrest || ok != wok {
						t.Errorf("rawLabel(%q) = %q, %q, %v; the pattern gives %q, %q, %v", line, k, rest, ok, wk, wrest, wok)
					}
					if wok {
						n++
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no line was a label: the pieces test nothing")
	}
}

// An entry as a conversation's import writes one, the shape of most of the
// entries a question reads at scale (bench/scale). Run under WebAssembly
// with internal/wasiexec, where the question's parsing is slowest.
func BenchmarkParseEntry(b *testing.B) {
	data := []byte(`---
title: Melanie on 8 May 2023
createdAt: 2026-01-01T00:00:00Z
updatedAt: 2026-01-01T00:00:00Z
---

## Reason
conversation memory import

## Raw Concept
**Task:** Turn D1:14 of session 1
**Timestamp:** 2023-05-08T13:56:00Z
**Author:** Melanie

## Narrative
Yeah, I painted that lake sunrise last year! It's special to me.
`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseEntry("caroline_and_melanie/session_01/melanie/turn_014.md", data); err != nil {
			b.Fatal(err)
		}
	}
}

// splitSections gives, as spans of the body, what cutting its lines and
// joining each part's again gave; every body made of the lines below does.
func TestSplitSectionsSpansAreTheJoinedLines(t *testing.T) {
	joined := func(body string) (string, []rawSection) {
		var pre []string
		type sec struct {
			heading string
			lines   []string
		}
		var secs []sec
		var sc fenceScanner
		for _, l := range splitLines(body) {
			if sc.outside(l) {
				if lv, h, ok := parseHeading(l); ok && lv == 2 {
					secs = append(secs, sec{heading: h})
					continue
				}
			}
			if len(secs) == 0 {
				pre = append(pre, l)
			} else {
				secs[len(secs)-1].lines = append(secs[len(secs)-1].lines, l)
			}
		}
		var out []rawSection
		for _, s := range secs {
			out = append(out, rawSection{heading: s.heading, body: strings.Join(s.lines, "\n")})
		}
		return strings.Join(pre, "\n"), out
	}
	pieces := []string{"## Raw Concept", "text", "", "```", "## In code", "~~~", "### Part", "  ## Indented", "##No space", "**Task:** x"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var lines []string
		for range rng.IntN(9) {
			lines = append(lines, pieces[rng.IntN(len(pieces))])
		}
		body := strings.Join(lines, "\n")
		if rng.IntN(2) == 0 {
			body += "\n"
		}
		pre, secs := splitSections(body)
		wpre, wsecs := joined(body)
		if pre != wpre || !reflect.DeepEqual(secs, wsecs) {
			t.Fatalf("splitSections(%q) = %q, %q; joining the lines gives %q, %q", body, pre, secs, wpre, wsecs)
		}
	}
}
