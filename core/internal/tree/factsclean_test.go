package tree

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// A Facts section a person wrote with more than facts in it (a nested
// list, a table, code, a heading) is kept as written: folding it into
// facts lost its line breaks and the code's indentation.
func TestFactsSectionOfMoreThanFacts(t *testing.T) {
	body := "- **db**: postgres 15 [infra]\n- retries: 3\n  - nested detail\n\n| key | value |\n| --- | --- |\n| a | 1 |\n\n" +
		"```python\ndef f():\n    return 1\n```\n\n### Sub heading\nA paragraph\nwrapped."
	e, err := ParseEntry("a/b/c.md", []byte("---\ntitle: T\n---\n\n## Facts\n"+body+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Facts) != 0 || len(e.Other) != 1 || e.Other[0].Body != body {
		t.Fatalf("facts %q, other %q", e.Facts, e.Other)
	}
	e.Facts = []api.Fact{{Subject: "new", Statement: "added by an agent"}}
	out := string(Render(e))
	if !strings.Contains(out, "## Facts\n- **new**: added by an agent\n\n## Facts\n"+body+"\n") {
		t.Fatalf("rendered:\n%s", out)
	}
	for _, clean := range []string{"- a\n- b", "- a fact\n  wrapped on two lines\n\n* another [c]", "- #tag is text"} {
		if !factsClean(clean) {
			t.Errorf("%q is facts", clean)
		}
	}
	for _, mixed := range []string{"- a\n  - b", "1. a\n2. b", "- a\n\n    code", "> quote", "- a\n~~~\nx\n~~~"} {
		if factsClean(mixed) {
			t.Errorf("%q is not only facts", mixed)
		}
	}
}
