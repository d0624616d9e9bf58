package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A few rounds of the runner, so that it keeps working: the committed
// report (REPORT.md) comes from a long run, `go run ./tests/faults`.
func TestFewRounds(t *testing.T) {
	bin := filepath.Join("..", "..", "bin", "arbor")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("bin/arbor is missing: run ./build.sh")
	}
	if testing.Short() {
		t.Skip("starts arbor processes")
	}
	r, err := run(4, bin, 7, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rounds != 4 || r.Kills == 0 || r.EditorSaves == 0 {
		t.Fatalf("the runner did not run: %+v", r)
	}
	if r.Lost+r.Torn+r.Resurrected+r.AuditMissing > 0 {
		t.Fatalf("lost %d, torn %d, resurrected %d, audit-missing %d:\n%v", r.Lost, r.Torn, r.Resurrected, r.AuditMissing, r.Problems)
	}
}
