package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A few rounds of the runner, with each editor, so that it keeps working:
// the committed report (REPORT.md) comes from long runs, `go run
// ./tests/faults`.
func TestFewRounds(t *testing.T) {
	bin := filepath.Join("..", "..", "bin", "arbor")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("bin/arbor is missing: run ./build.sh")
	}
	if testing.Short() {
		t.Skip("starts arbor processes")
	}
	for _, tc := range []struct {
		rounds  int
		inPlace bool
	}{{4, false}, {3, true}} {
		r, err := run(tc.rounds, bin, 7, false, tc.inPlace)
		if err != nil {
			t.Fatal(err)
		}
		if r.Rounds != tc.rounds || r.Kills == 0 || r.EditorSaves == 0 || r.Moves.Sent == 0 {
			t.Fatalf("the runner did not run: %+v", r)
		}
		if r.failed() {
			t.Fatalf("in place %v: lost %d, torn %d, resurrected %d, audit-missing %d, duplicated %d, diverged %d, links naming no file %d:\n%v",
				tc.inPlace, r.Lost, r.Torn, r.Resurrected, r.AuditMissing, r.Moves.Duplicated, r.Moves.Diverged, r.Moves.LinksBroken, r.Problems)
		}
	}
}

// A few rounds of syncs killed (-mode sync), so that that runner keeps
// working too.
func TestFewSyncRounds(t *testing.T) {
	bin := filepath.Join("..", "..", "bin", "arbor")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("bin/arbor is missing: run ./build.sh")
	}
	if testing.Short() {
		t.Skip("starts arbor processes")
	}
	r, err := runSync(4, bin, 2, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rounds != 4 || r.Syncs < 20 || r.Saves == 0 {
		t.Fatalf("the runner did not run: %+v", r)
	}
	if r.failed() {
		t.Fatalf("stuck %d, diverged %d, lost %d, torn %d, resurrected %d, damaged %d, unclean %d:\n%v",
			r.Stuck, r.Diverged, r.Lost, r.Torn, r.Resurrected, r.Damaged, r.Unclean, r.Problems)
	}
}
