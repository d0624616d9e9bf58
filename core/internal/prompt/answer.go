package prompt

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Answer is a model's answer read from the format of answerFormat.
type Answer struct {
	Summary, Details, Gaps string
	// Sources are the known entry paths the answer cites, in the order
	// first cited (in the Sources section, then anywhere else).
	Sources []string
	// Unknown are cited paths that are not known: invented, or never given
	// to the model. They are dropped from Sources.
	Unknown []string
	// NotCovered: the model said the entries do not hold the answer.
	NotCovered bool
	// NeedsMore holds the model's note when it said other entries are
	// needed; empty otherwise.
	NeedsMore string
	// Problem says why the answer cannot be used as a grounded answer;
	// empty when it can.
	Problem string
}

// heading matches a section heading in the forms models actually write:
// "## Summary", "**Summary**", "Summary:", "SUMMARY", with the section's
// first line possibly on the same line after a colon. It and mdPath are
// compiled at the first answer a model gives, which most commands never
// ask for, not at every start of the module.
var heading = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*(?:#{1,6}\s*)?\**\s*(summary|details|sources|gaps)\s*\**\s*:?\s*\**\s*(.*)$`)
})

// mdPath matches what looks like a cited markdown path.
var mdPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("[^\\s`'\"()\\[\\]<>,;]+\\.md\\b") })

// ParseAnswer reads a model's answer. known says whether a path was given
// to the model (or returned to it by a tool): only those count as sources.
// The answer is usable when it has a summary and cites at least one known
// entry, or when it says the entries do not cover the question.
func ParseAnswer(text string, known func(string) bool) Answer {
	var a Answer
	t := strings.TrimSpace(text)
	if t == "" {
		a.Problem = "the answer is empty"
		return a
	}
	if marker(&a, t) {
		return a
	}
	sections := map[string]*strings.Builder{}
	var cur *strings.Builder
	for _, line := range strings.Split(t, "\n") {
		if m := heading().FindStringSubmatch(line); m != nil && (m[2] == "" || strings.Contains(line, ":")) {
			name := strings.ToLower(m[1])
			if sections[name] == nil {
				sections[name] = &strings.Builder{}
			}
			cur = sections[name]
			if m[2] != "" {
				cur.WriteString(strings.Trim(m[2], "* ") + "\n")
			}
			continue
		}
		if cur != nil {
			cur.WriteString(line + "\n")
		}
	}
	get := func(name string) string {
		if b := sections[name]; b != nil {
			return strings.TrimSpace(b.String())
		}
		return ""
	}
	a.Summary, a.Details, a.Gaps = get("summary"), get("details"), get("gaps")
	// Models also put the marker inside the format ("## Summary\nNOT COVERED").
	if marker(&a, a.Summary) {
		a.Summary, a.Details, a.Gaps = "", "", ""
		return a
	}
	cite := func(s string) {
		for _, p := range mdPath().FindAllString(s, -1) {
			p = strings.TrimLeft(strings.TrimRight(p, ".:"), "@/")
			switch {
			case known(p):
				if !slices.Contains(a.Sources, p) {
					a.Sources = append(a.Sources, p)
				}
			case !slices.Contains(a.Unknown, p):
				a.Unknown = append(a.Unknown, p)
			}
		}
	}
	cite(get("sources"))
	cite(a.Summary + "\n" + a.Details)
	switch {
	case a.Summary == "" && len(sections) == 0:
		a.Problem = "it does not follow the format (no Summary, Details, Sources or Gaps section)"
	case a.Summary == "":
		a.Problem = "it has no Summary"
	case len(a.Sources) == 0 && len(a.Unknown) > 0:
		a.Problem = "it cites only entries that were not given: " + strings.Join(a.Unknown, ", ")
	case len(a.Sources) == 0:
		a.Problem = "it cites no entry"
	}
	return a
}

// marker reads NOT COVERED or NEEDS MORE at the start of text.
func marker(a *Answer, text string) bool {
	first, _, _ := strings.Cut(text, "\n")
	first = strings.Trim(strings.TrimSpace(first), "*#_ ")
	switch up := strings.ToUpper(first); {
	case strings.HasPrefix(up, NotCovered):
		a.NotCovered = true
		return true
	case strings.HasPrefix(up, NeedsMore):
		a.NeedsMore = strings.TrimSpace(strings.TrimLeft(first[len(NeedsMore):], "*_: -—"))
		if a.NeedsMore == "" {
			a.NeedsMore = "the model said more entries are needed"
		}
		return true
	}
	return false
}

// Render writes a usable answer back in the four-section format, with the
// sources that survived the check.
func (a Answer) Render() string {
	var b strings.Builder
	b.WriteString("Summary: " + a.Summary + "\n")
	if a.Details != "" {
		b.WriteString("\nDetails:\n" + a.Details + "\n")
	}
	b.WriteString("\nSources:\n")
	for _, s := range a.Sources {
		b.WriteString("- " + s + "\n")
	}
	gaps := a.Gaps
	if gaps == "" {
		gaps = "none stated"
	}
	b.WriteString("\nGaps: " + gaps)
	return b.String()
}
