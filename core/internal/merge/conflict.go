package merge

import (
	"fmt"
	"strings"
)

// block is the text of a conflict section: the paragraph that says what
// it is and how to resolve it, and the parts, each with both versions.
type block struct {
	intro, parts string
}

// block renders conflicts for an entry (what "entry") or a file. Each
// version is fenced, with a fence longer than any run of backticks in it,
// so that whatever it holds (headings, fences, "---") stays its text and
// the file parses as it did.
func (m *merger) block(cs []partConflict, what string) block {
	intro := fmt.Sprintf("Both sides changed this entry, and the parts below could not be merged: the entry keeps the version of %s in each, and this section keeps both. "+
		"Resolve it with an UPDATE of the entry (arbor curate, or the MCP curate tool), which removes this section, or edit the file and delete the section.", m.ours)
	if what != "entry" {
		intro = fmt.Sprintf("Both sides changed this file, and the parts below could not be merged: the text above keeps the version of %s in each, and this section keeps both. "+
			"Resolve it by editing the file and deleting this section.", m.ours)
	}
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "### %s\n\n%s\n\n%s", c.Part, version(m.ours, c.Ours), version(m.theirs, c.Theirs))
	}
	return block{intro: intro, parts: b.String()}
}

// version is one side's text in a conflict block.
func version(label, text string) string {
	if strings.TrimSpace(text) == "" {
		return fmt.Sprintf("**%s**: (nothing)", label)
	}
	n := max(3, longestRun(text, '`')+1)
	f := strings.Repeat("`", n)
	return fmt.Sprintf("**%s**:\n\n%s\n%s\n%s", label, f, text, f)
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}
