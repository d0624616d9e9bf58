package tree

import (
	"strings"
	"testing"
)

func TestNewContext(t *testing.T) {
	tests := []struct {
		folder, want string
	}{
		{"engineering", "# Engineering\n\n" +
			"## Purpose\nNot written yet: what the Engineering domain is for and why its knowledge is kept.\n\n" +
			"## Scope\nNot written yet: what belongs under Engineering, and what belongs elsewhere.\n\n" +
			"## Topics\nNot written yet: the topics under Engineering, one line each.\n"},
		{"engineering/invoice_retry/", "# Invoice Retry\n\n" +
			"## Overview\nNot written yet: what the Invoice Retry topic covers within Engineering.\n\n" +
			"## Key Concepts\nNot written yet: the main ideas, terms and components of Invoice Retry.\n\n" +
			"## Related Topics\nNot written yet: other topics that Invoice Retry depends on or affects.\n"},
		{"engineering/billing/dunning_emails", "# Dunning Emails\n\n" +
			"## Focus\nNot written yet: the narrow question Dunning Emails answers.\n\n" +
			"## Relation to Parent\nNot written yet: how Dunning Emails fits within Billing.\n"},
	}
	for _, tt := range tests {
		got := string(NewContext(tt.folder))
		if got != tt.want {
			t.Errorf("NewContext(%q) =\n%s\nwant\n%s", tt.folder, got, tt.want)
		}
		if string(NewContext(tt.folder)) != got {
			t.Errorf("NewContext(%q) is not deterministic", tt.folder)
		}
		c, err := ParseContext(strings.Trim(tt.folder, "/")+"/context.md", []byte(got))
		if err != nil || c.Title != strings.SplitN(got, "\n", 2)[0][2:] {
			t.Errorf("ParseContext(NewContext(%q)) = %#v, %v", tt.folder, c, err)
		}
	}
	if got := string(NewContext("a/b/c/d")); !strings.HasPrefix(got, "# D\n\n## Focus\n") || !strings.Contains(got, "within C.") {
		t.Errorf("deep folder:\n%s", got)
	}
	if got := string(NewContext("가치관")); !strings.HasPrefix(got, "# 가치관\n\n## Purpose\n") {
		t.Errorf("Korean folder:\n%s", got)
	}
}

func TestParseContext(t *testing.T) {
	tests := []struct {
		name, path, data, title, body string
	}{
		{"front matter", "eng/context.md", "---\ntitle: Engineering Notes\n---\n# Ignored\nbody\n", "Engineering Notes", "# Ignored\nbody\n"},
		{"heading", "eng/context.md", "intro\r\n# From Heading\r\n", "From Heading", "intro\n# From Heading\n"},
		{"folder name", "eng/invoice_retry/context.md", "## Overview\nx\n", "Invoice Retry", "## Overview\nx\n"},
		{"empty front matter title", "eng/context.md", "---\nsummary: s\n---\n", "Eng", ""},
		{"root", "context.md", "", "", ""},
	}
	for _, tt := range tests {
		c, err := ParseContext(tt.path, []byte(tt.data))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if c.Title != tt.title || c.Body != tt.body || c.Path != tt.path || string(c.Raw) != tt.data {
			t.Errorf("%s: %#v", tt.name, c)
		}
	}
	for _, bad := range []string{"---\ntitle: [x\n---\n", "---\ntitle: x\n", "\xff"} {
		if _, err := ParseContext("eng/context.md", []byte(bad)); err == nil || !strings.Contains(err.Error(), "eng/context.md") {
			t.Errorf("ParseContext(%q) error = %v", bad, err)
		}
	}
}
