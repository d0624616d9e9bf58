package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestContextCommand(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	r := arbor(t, "", "--root", dir, "--color", "never", "context", "engineering/billing/invoice_retry_policy.md")
	if r.code != 0 {
		t.Fatalf("context: %+v", r)
	}
	want := "# Invoice retry policy\nPath: engineering/billing/invoice_retry_policy.md\nSummary: failed invoices are retried three times\n\n" +
		"## Reason\nagreed in the billing sync\n\n## Narrative\nFailed invoices are retried three times, then escalated to a person.\n\n" +
		"# Dunning emails\nPath: engineering/billing/dunning_emails.md (links to engineering/billing/invoice_retry_policy.md)\n\n" +
		"## Narrative\nA reminder email goes out after each failed retry.\n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	if !strings.HasPrefix(r.stderr, "2 entries · ") || !strings.Contains(r.stderr, " of 2000 tokens") {
		t.Errorf("stderr: %q", r.stderr)
	}
	// Words are a query; --depth 0 keeps the entry alone.
	out := must(t, "", "--root", dir, "context", "reminder", "email", "--depth", "0")
	if !strings.HasPrefix(out, "# Dunning emails\n") || strings.Contains(out, "Invoice retry policy") {
		t.Errorf("context by query:\n%s", out)
	}
	var res api.ContextResult
	if err := json.Unmarshal([]byte(must(t, "", "--root", dir, "context", "engineering/billing/dunning_emails.md", "--budget", "100", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Budget != 100 || res.Tokens > 100 || len(res.Entries) != 2 || res.Entries[1].Link != api.ContextLinkRelation {
		t.Errorf("context --json: %+v", res)
	}
	for args, msg := range map[string]string{
		"engineering/billing/nope.md": "no entry engineering/billing/nope.md",
		"quaternion":                  `no entry matches "quaternion"`,
		"x.md --depth 9":              "depth 9: want 0 to 3",
	} {
		if r := arbor(t, "", append([]string{"--root", filepath.Clean(dir), "context"}, strings.Fields(args)...)...); r.code != 1 || !strings.Contains(r.stderr, msg) {
			t.Errorf("context %s: %+v", args, r)
		}
	}
}
