package main

import (
	"encoding/json"
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

func TestRecentAndStatus(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	out := must(t, "", "--root", dir, "--fixed-time", fixedTime, "recent")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "2025-06-02 10:00") || !strings.Contains(lines[0], "engineering/billing/dunning_emails.md") ||
		!strings.Contains(lines[1], "engineering/billing/invoice_retry_policy.md") || !strings.HasPrefix(lines[2], "2 entries ·") {
		t.Fatalf("recent:\n%s", out)
	}
	must(t, "", "--root", dir, "--fixed-time", fixedTime, "add", "--path", "ops/pager", "--title", "Rota", "--reason", "r")
	out = must(t, "", "--root", dir, "--fixed-time", fixedTime, "recent", "--since", "7d", "--limit", "5")
	if !strings.Contains(out, "ops/pager/rota.md") || strings.Contains(out, "dunning") || !strings.Contains(out, "1 entry ·") {
		t.Errorf("recent --since 7d:\n%s", out)
	}
	if out := must(t, "", "--root", dir, "--fixed-time", fixedTime, "recent", "--domain", "engineering", "--limit", "1"); !strings.Contains(out, "1 of 2 entries") {
		t.Errorf("recent --domain --limit:\n%s", out)
	}
	if r := arbor(t, "", "--root", dir, "recent", "--since", "soon"); r.code != 1 || !strings.Contains(r.stderr, `since "soon"`) {
		t.Errorf("recent --since soon: %+v", r)
	}
	writeFile(t, filepath.Join(dir, "ops/pager/broken.md"), "---\ntitle: [unclosed\n---\n")
	writeFile(t, filepath.Join(dir, "ops/pager/handover.md"), "# Handover\n\nWritten by hand.\n")
	out = must(t, "", "--root", dir, "--fixed-time", fixedTime, "status")
	for _, want := range []string{"entries    4 · 2 context files", "domains    engineering 2 · ops 2", "recent     2 entries changed in the last 7 days", "changed    since the index was written: 1 file indexed, 0 removed", "health     1 warning (arbor doctor", "ops/pager/broken.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	var st struct {
		Entries int
		Healthy bool
		Changed struct{ Scanned bool }
	}
	// The engine opened for the command has just read the tree: it is not
	// scanned twice.
	if err := json.Unmarshal([]byte(must(t, "", "--root", dir, "status", "--json")), &st); err != nil || st.Entries != 4 || st.Healthy || st.Changed.Scanned {
		t.Errorf("status --json: %+v, %v", st, err)
	}
}
