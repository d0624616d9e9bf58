package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMoveAndRemove(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	const src, dst = "engineering/billing/invoice_retry_policy.md", "finance/billing/invoice_retry_policy.md"
	before, err := os.ReadFile(filepath.Join(dir, src))
	if err != nil {
		t.Fatal(err)
	}
	out := must(t, "", "--root", dir, "mv", src, "finance/billing", "--reason", "finance owns billing")
	if !strings.HasPrefix(out, "✓ MOVE   "+src) || !strings.Contains(out, "now at: "+dst) || !strings.Contains(out, "1 moved, 0 failed") {
		t.Fatalf("mv output:\n%s", out)
	}
	if after, err := os.ReadFile(filepath.Join(dir, dst)); err != nil || string(after) != string(before) {
		t.Fatalf("moved entry: %q, %v", after, err)
	}
	if _, err := os.Stat(filepath.Join(dir, src)); !os.IsNotExist(err) {
		t.Errorf("source still there: %v", err)
	}
	dunning, _ := os.ReadFile(filepath.Join(dir, "engineering/billing/dunning_emails.md"))
	if !strings.Contains(string(dunning), "related: ["+dst+"]") {
		t.Errorf("the link was not rewritten:\n%s", dunning)
	}
	if out := must(t, "", "--root", dir, "search", "invoices retried"); !strings.Contains(out, dst) {
		t.Errorf("search after mv:\n%s", out)
	}
	// A move onto an existing entry fails and changes nothing.
	r := arbor(t, "", "--root", dir, "mv", dst, "engineering/billing/dunning_emails.md", "--reason", "r")
	if r.code != 1 || !strings.Contains(r.stdout, "✗ MOVE") || !strings.Contains(r.stdout, "already exists: engineering/billing/dunning_emails.md") {
		t.Fatalf("mv onto an entry: %+v", r)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, dst)); string(after) != string(before) {
		t.Error("a failed mv changed the entry")
	}
	if r := arbor(t, "", "--root", dir, "mv", dst, "x/y"); r.code != 2 || !strings.Contains(r.stderr, "--reason is required") {
		t.Errorf("mv without a reason: %+v", r)
	}
	// rm of a folder: the entry linking in is named.
	out = must(t, "", "--root", dir, "rm", "finance", "--reason", "gone")
	if !strings.HasPrefix(out, "✓ DELETE finance") || !strings.Contains(out, "still linked from: engineering/billing/dunning_emails.md") {
		t.Fatalf("rm output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "finance")); !os.IsNotExist(err) {
		t.Errorf("finance still there: %v", err)
	}
	audit, _ := os.ReadFile(filepath.Join(dir, ".arbor/audit.jsonl"))
	if !strings.Contains(string(audit), `"op":"MOVE","path":"`+src+`","to":"`+dst+`","reason":"finance owns billing","status":"success"`) {
		t.Errorf("audit:\n%s", audit)
	}
}
