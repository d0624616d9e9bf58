package tidy

import (
	"strings"
	"testing"
)

// The checks of a model's merge that the engine's tests do not reach.
func TestReadMerge(t *testing.T) {
	copies := []string{
		"---\ntitle: Retries\n---\n\n## Narrative\nInvoices are retried three times.\n\n### Rules\nNever on a weekend.\n\n## Facts\n- **retries**: three\n",
		"---\ntitle: Retries\n---\n\n## Narrative\nInvoices are retried three times, two days apart.\n\n## Facts\n- **retries**: three\n- **interval**: two days\n",
	}
	good := "---\ntitle: Retries\n---\n\n## Narrative\nInvoices are retried three times, two days apart.\n\n### Rules\nNever on a weekend.\n\n## Facts\n- **Retries**: Three\n- **interval**: two days\n"
	if e, err := readMerge(copies, good); err != nil || e.Title != "Retries" || len(e.Facts) != 2 {
		t.Fatalf("a good merge (facts matched case aside): %v %+v", err, e)
	}
	if _, err := readMerge(copies, "```markdown\n"+good+"```"); err != nil {
		t.Fatalf("a fenced merge: %v", err)
	}
	for _, c := range []struct{ answer, want string }{
		{strings.Replace(good, "\n### Rules\nNever on a weekend.\n", "", 1), `drops the narrative's "### Rules" part`},
		{strings.Replace(good, "- **interval**: two days\n", "- **interval**: 48 hours\n", 1), `drops the fact "**interval**: two days"`},
		{"```\n```", "the answer is empty"},
	} {
		if _, err := readMerge(copies, c.answer); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.answer, err, c.want)
		}
	}
}
