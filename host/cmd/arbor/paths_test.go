package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// add --path with capitals lands in the folder that exists, a name Windows
// cannot hold is refused (exit 1, nothing written), and doctor reports
// names that differ only in Unicode form.
func TestPathsNormalisedAndTwins(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	out := must(t, "", "--root", dir, "--fixed-time", fixedTime, "add", "--path", "Engineering/Billing",
		"--title", "Card Refunds", "--narrative", "Refunds go back to the card.", "--reason", "support sync")
	if !strings.Contains(out, "✓ ADD") || !strings.Contains(out, "engineering/billing/card_refunds.md") {
		t.Fatalf("add output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "engineering/billing/card_refunds.md")); err != nil {
		t.Fatal(err)
	}
	if ls, _ := os.ReadDir(dir); len(ls) != 2 { // .arbor and engineering
		t.Errorf("a second domain appeared: %v", ls)
	}

	before := snapshot(t, dir)
	for _, c := range []struct{ path, title, want string }{
		{"CON/x", "Notes", `"CON" is a device name Windows reserves`},
		{"engineering/billing", "aux", `"aux.md" is a device name Windows reserves`},
		{"engineering/a:b", "Notes", `"a:b" holds ':'`},
		{"engineering/later./x", "Notes", `"later." ends in a dot or a space`},
	} {
		r := arbor(t, "", "--root", dir, "add", "--path", c.path, "--title", c.title, "--narrative", "x", "--reason", "r")
		if r.code != exitError || !strings.Contains(r.stdout, "✗ ADD") || !strings.Contains(r.stdout, c.want) {
			t.Errorf("add --path %q --title %q: exit %d, want 1 with %q\nstdout: %s\nstderr: %s", c.path, c.title, r.code, c.want, r.stdout, r.stderr)
		}
	}
	sameFiles(t, "add with names Windows cannot hold", before, snapshot(t, dir))

	// The same note twice, its accent composed and decomposed (as macOS
	// wrote it): both are read, and doctor says they are twins.
	writeFile(t, filepath.Join(dir, "recettes/café.md"), "# Café\n\ncomposed\n")
	writeFile(t, filepath.Join(dir, "recettes/cafe\u0301.md"), "# Café\n\ndecomposed\n")
	var rep doctorReport
	if err := json.Unmarshal([]byte(must(t, "", "--root", dir, "--json", "doctor")), &rep); err != nil {
		t.Fatal(err)
	}
	var twins *check
	for i, c := range rep.Checks {
		if c.Name == "twins" {
			twins = &rep.Checks[i]
		}
		if c.Name == "files" {
			t.Errorf("twins reported as unusable files: %+v", c)
		}
	}
	if twins == nil || twins.Status != checkWarn || len(twins.Items) != 1 ||
		twins.Items[0] != "recettes/cafe\u0301.md · recettes/café.md" || !strings.Contains(twins.Detail, "Unicode form") || !rep.OK {
		t.Fatalf("doctor: %+v", rep)
	}
	out = must(t, "", "--root", dir, "doctor")
	if !strings.Contains(out, "! twins") || !strings.Contains(out, "recettes/café.md") {
		t.Errorf("doctor output:\n%s", out)
	}
	if out := must(t, "", "--root", dir, "stats"); !strings.Contains(out, "entries    5\n") {
		t.Errorf("stats:\n%s", out)
	}
}
