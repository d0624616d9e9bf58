package runtime

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The cache keeps the newest compiled modules of each wazero folder and
// removes the rest, each with its mark of checked code; folders with few
// files are left alone; files a dead process left half-written, and its
// probes, go once stale.
func TestPruneCacheKeepsTheNewest(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "wazero-v1-amd64-linux")
	small := filepath.Join(dir, "wazero-v2-amd64-linux")
	for _, d := range []string{big, small} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	write := func(folder, name string, age time.Duration) {
		p := filepath.Join(folder, name)
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range []string{"a", "b", "c", "d", "e", "f"} {
		write(big, name, time.Duration(i)*time.Hour) // a newest, f oldest
	}
	// Marks do not count as modules, and go with theirs: the newest's
	// stays, a pruned one's and one whose module is gone do not.
	write(big, "a"+checkedSuffix, 0)
	write(big, "f"+checkedSuffix, 0)
	write(big, "z"+checkedSuffix, 0)
	write(small, "x", 48*time.Hour)
	write(small, "x"+checkedSuffix, 0)
	write(small, "y", 72*staleTemp)
	// Entries being written by other processes (wazero renames them into
	// place and fails if they vanish) stay, however many files are newer;
	// one a dead process left behind goes.
	write(big, "g.123.tmp", 30*time.Minute)
	write(big, "h.456.tmp", 2*staleTemp)
	// So with probes of writable: one now, one a killed process left.
	write(dir, probePrefix+"1", time.Minute)
	write(dir, probePrefix+"2", 2*staleTemp)

	pruneCache(dir, 4)

	names := func(folder string) []string {
		es, err := os.ReadDir(folder)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		slices.Sort(out)
		return out
	}
	if got := names(big); !slices.Equal(got, []string{"a", "a" + checkedSuffix, "b", "c", "d", "g.123.tmp"}) {
		t.Errorf("kept %v, want the four newest, the newest's mark and the file being written", got)
	}
	if got := names(small); !slices.Equal(got, []string{"x", "x" + checkedSuffix, "y"}) {
		t.Errorf("a folder under the limit lost files: %v", got)
	}
	if got := names(dir); !slices.Equal(got, []string{probePrefix + "1", "wazero-v1-amd64-linux", "wazero-v2-amd64-linux"}) {
		t.Errorf("the cache folder holds %v, want the recent probe and the wazero folders", got)
	}
}
