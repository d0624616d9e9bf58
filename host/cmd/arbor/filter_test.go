package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestSearchAndQueryFilters(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	writeFile(t, filepath.Join(dir, "ops/billing/invoice_runbook.md"), `---
title: Invoice runbook
tags: [payments, Billing]
createdAt: 2025-07-01T10:00:00Z
---

## Narrative
When invoices fail, page the billing on-call.
`)
	paths := func(raw string) []string {
		t.Helper()
		var res struct{ Results []api.Hit }
		if err := json.Unmarshal([]byte(raw), &res); err != nil {
			t.Fatalf("%v:\n%s", err, raw)
		}
		var out []string
		for _, h := range res.Results {
			out = append(out, h.Path)
		}
		return out
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"search", "invoices", "--domain", "ops"}, []string{"ops/billing/invoice_runbook.md"}},
		{[]string{"search", "invoices", "--topic", "engineering/billing", "--tag", "BILLING"}, []string{"engineering/billing/invoice_retry_policy.md"}},
		{[]string{"search", "invoices", "--tag", "billing", "--tag", "payments"}, []string{"ops/billing/invoice_runbook.md"}},
		{[]string{"search", "invoices", "--until", "2025-06-01"}, []string{"engineering/billing/invoice_retry_policy.md"}},
		{[]string{"search", "invoices", "--since", "2025-06-15", "--sort", "recent"}, []string{"ops/billing/invoice_runbook.md"}},
		{[]string{"search", "failed", "--sort", "recent"}, []string{"ops/billing/invoice_runbook.md", "engineering/billing/dunning_emails.md", "engineering/billing/invoice_retry_policy.md"}},
		{[]string{"search", "invoices", "--maturity", "validated,core"}, nil},
		{[]string{"search", "invoices", "--maturity", "draft", "--min-importance", "50"}, []string{"engineering/billing/invoice_retry_policy.md", "ops/billing/invoice_runbook.md"}},
		{[]string{"query", "invoices", "--domain", "engineering", "--limit", "10"}, []string{"engineering/billing/invoice_retry_policy.md"}},
	} {
		got := paths(must(t, "", append([]string{"--root", dir, "--json"}, c.args...)...))
		if c.args[len(c.args)-1] != "recent" && !strings.Contains(strings.Join(c.args, " "), "recent") {
			slices.Sort(got)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: %v, want %v", c.args, got, c.want)
		}
	}
	out := must(t, "", "--root", dir, "query", "invoices", "--sort", "recent", "--limit", "10")
	if !strings.Contains(out, "lifecycle score, by recent") {
		t.Errorf("query sorted by recent:\n%s", out)
	}
	for _, bad := range [][]string{
		{"search", "x", "--sort", "title"}, {"search", "x", "--maturity", "gold"}, {"query", "x", "--since", "soon"},
		{"search", "x", "--domain", "a/b"}, {"search", "x", "--min-importance", "200"},
	} {
		r := arbor(t, "", append([]string{"--root", dir}, bad...)...)
		if r.code == 0 || !strings.Contains(r.stderr, "invalid_params: ") || !strings.Contains(r.stderr, bad[len(bad)-1]) {
			t.Errorf("%v: exit %d, stderr %q", bad, r.code, r.stderr)
		}
	}
	if out := must(t, "", "search", "--help"); !strings.Contains(out, "--min-importance") || !strings.Contains(out, "Filters narrow the search inside the index") {
		t.Errorf("search --help:\n%s", out)
	}
}
