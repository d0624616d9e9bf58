package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// TestTidy: the plan finds the planted copy and writes nothing; --apply
// merges it; a reopened tree answers the query with the merged entry, the
// copy gone and the link to it rewritten; a stale entry goes to _archive/,
// out of search until --archived, and arbor mv brings it back.
func TestTidy(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	const keep, dup = "engineering/billing/invoice_retry_policy.md", "engineering/billing/retry_policy_copy.md"
	orig, err := os.ReadFile(filepath.Join(dir, keep))
	if err != nil {
		t.Fatal(err)
	}
	// The copy: the same knowledge, saved again later for another reason
	// (the engine's tests plant copies with reworded sentences).
	copyText := strings.Replace(string(orig), "agreed in the billing sync", "copied from the wiki", 1)
	copyText = strings.Replace(copyText, "updatedAt: 2025-06-01T10:00:00Z", "updatedAt: 2025-07-01T10:00:00Z", 1)
	writeFile(t, filepath.Join(dir, dup), copyText)
	writeFile(t, filepath.Join(dir, "engineering/billing/links_to_copy.md"), "---\ntitle: Links to the copy\nrelated: ["+dup+"]\n---\n\n## Narrative\nSee the copy.\n")

	out := must(t, "", "--root", dir, "--color", "never", "tidy", "--kind", "merge")
	if !strings.Contains(out, "merge") || !strings.Contains(out, dup) || !strings.Contains(out, "nothing written") {
		t.Fatalf("tidy plan:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, dup)); err != nil {
		t.Fatal("the plan wrote:", err)
	}
	var res api.TidyResult
	if err := json.Unmarshal([]byte(must(t, "", "--root", dir, "tidy", "--kind", "merge", "--apply", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Applied == nil || res.Applied.Summary.Merged != 1 || len(res.Suggestions) != 1 {
		t.Fatalf("tidy --apply: %+v", res)
	}
	kept, gone := res.Suggestions[0].Paths[0], res.Suggestions[0].Paths[1]
	if _, err := os.Stat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", gone, err)
	}
	if out := must(t, "", "--root", dir, "query", "failed invoices retried"); !strings.Contains(out, kept) || strings.Contains(out, gone) {
		t.Errorf("query after tidy:\n%s", out)
	}
	links, _ := os.ReadFile(filepath.Join(dir, "engineering/billing/links_to_copy.md"))
	if strings.Contains(string(links), gone) || !strings.Contains(string(links), kept) {
		t.Errorf("link not rewritten:\n%s", links)
	}

	// The stale entry of the tree (updated 2025-06-01, never used) is
	// archived once a year has passed; status counts it first.
	stale := "engineering/billing/dunning_emails.md"
	if out := must(t, "", "--root", dir, "--color", "never", "status"); !strings.Contains(out, "upkeep") {
		t.Errorf("status does not mention the upkeep:\n%s", out)
	}
	if out := must(t, "", "--root", dir, "--color", "never", "doctor"); !strings.Contains(out, "upkeep") || !strings.Contains(out, "arbor tidy") {
		t.Errorf("doctor does not mention the upkeep:\n%s", out)
	}
	must(t, "", "--root", dir, "tidy", "--kind", "archive", "--stale-days", "100", "--apply")
	archived := api.ArchiveFolder + "/" + stale
	if _, err := os.Stat(filepath.Join(dir, archived)); err != nil {
		t.Fatalf("not archived: %v", err)
	}
	if out := must(t, "", "--root", dir, "search", "reminder", "email"); strings.Contains(out, archived) {
		t.Errorf("search finds the archive:\n%s", out)
	}
	if out := must(t, "", "--root", dir, "search", "reminder", "email", "--archived"); !strings.Contains(out, archived) {
		t.Errorf("search --archived:\n%s", out)
	}
	must(t, "", "--root", dir, "mv", archived, stale, "--reason", "still used")
	if out := must(t, "", "--root", dir, "search", "reminder", "email"); !strings.Contains(out, stale) {
		t.Errorf("restored entry not found:\n%s", out)
	}
}

// TestTidyLimit: a plan of more suggestions than --limit prints the first
// ones and says how many it left out, --all prints every one, and
// --apply with --limit applies only those printed.
func TestTidyLimit(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	const n = 4
	for i := range n {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("ops/old/note_%d.md", i)), fmt.Sprintf("---\ntitle: Old note %d\ncreatedAt: 2024-01-01T00:00:00Z\n---\n\n## Narrative\nOld note number %d.\n", i, i))
	}
	// The suggestions printed: a line each that starts with its kind.
	archives := func(out string) int {
		n := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "archive ") {
				n++
			}
		}
		return n
	}
	all := must(t, "", "--root", dir, "--color", "never", "tidy", "--kind", "archive", "--all")
	total := archives(all)
	if total < n || strings.Contains(all, "left out") {
		t.Fatalf("tidy --all:\n%s", all)
	}
	out := must(t, "", "--root", dir, "--color", "never", "tidy", "--kind", "archive", "--limit", "2")
	if archives(out) != 2 || !strings.Contains(out, fmt.Sprintf("%d suggestions", total)) || !strings.Contains(out, fmt.Sprintf("printed the first 2, %d left out", total-2)) {
		t.Fatalf("tidy --limit 2 (of %d):\n%s", total, out)
	}
	for _, bad := range [][]string{{"--all", "--limit", "2"}, {"--limit", "0"}, {"--limit", "-3"}} {
		if r := arbor(t, "", append([]string{"--root", dir, "tidy"}, bad...)...); r.code != 2 {
			t.Errorf("tidy %v: exit %d, want 2 (usage)\n%s", bad, r.code, r.stderr)
		}
	}
	var res api.TidyResult
	if err := json.Unmarshal([]byte(must(t, "", "--root", dir, "tidy", "--kind", "archive", "--limit", "1", "--apply", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Suggestions) != 1 || res.Omitted != total-1 || res.Applied == nil || res.Applied.Summary.Moved != 1 {
		t.Fatalf("tidy --limit 1 --apply: %+v", res)
	}
	if left := archives(must(t, "", "--root", dir, "--color", "never", "tidy", "--kind", "archive", "--all")); left != total-1 {
		t.Errorf("after applying 1 of %d: %d left", total, left)
	}
}
