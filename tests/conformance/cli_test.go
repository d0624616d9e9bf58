package conformance

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// checkedSuffix names the file beside a cache entry that marks its code as
// checked (host/_patch/wazero-mapped-cache.patch).
const checkedSuffix = ".checked"

// The CLI as ./build.sh builds it (bin/arbor: wazero patched to skip
// validating a module whose compiled code its cache holds, host/_patch)
// answers alike with a cold compilation cache (the module validated and
// compiled), a warm one (validation skipped), one whose code is marked as
// checked (not checked again) and a damaged one, marked or not (compiled
// in memory, the cache emptied, a warning).
func TestBuiltCLIAnswersAlikeFromItsCache(t *testing.T) {
	bin, err := filepath.Abs(filepath.Join(repoRoot, "bin", "arbor"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("bin/arbor is missing: run ./build.sh cli")
	}
	if testing.Short() {
		t.Skip("compiles the engine module")
	}
	root, cacheHome := filepath.Join(t.TempDir(), "notes"), t.TempDir()
	if err := CopyTree(filepath.Join(repoRoot, "examples", "notes"), root); err != nil {
		t.Fatal(err)
	}
	arbor := func(args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--root", root}, args...)...)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome, "HOME="+cacheHome)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("arbor %v: %v\n%s", args, err, errb.String())
		}
		return out.String(), errb.String()
	}
	arbor("init")
	took := regexp.MustCompile(`"tookMs": [0-9.e+-]+`)
	answer := func() (string, string) {
		out, errs := arbor("--json", "query", "which tokenizer for Korean")
		return took.ReplaceAllString(out, `"tookMs": 0`), errs
	}
	cached := func() []string {
		var files []string
		filepath.WalkDir(filepath.Join(cacheHome, "arbor", "wazero"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(p, checkedSuffix) {
				files = append(files, p)
			}
			return nil
		})
		return files
	}
	cold, _ := answer()
	if !strings.Contains(cold, "korean_tokenizer_findings.md") {
		t.Fatalf("the query does not find the Korean tokenizer entry:\n%s", cold)
	}
	files := cached()
	if len(files) != 1 {
		t.Fatalf("the first start left %d files in the cache, want 1: %v", len(files), files)
	}
	// The CLI marks the code it mapped and checked once the entry last
	// changed more than a coarse clock's tick (2 s) ago, renamed into
	// place by the first start, and checks it no more.
	time.Sleep(2100 * time.Millisecond)
	if warm, _ := answer(); warm != cold {
		t.Errorf("from the cache:\n%s\nwith a cold cache:\n%s", warm, cold)
	}
	if _, err := os.Stat(files[0] + checkedSuffix); err != nil {
		t.Errorf("the entry is not marked as checked: %v", err)
	}
	if warm, _ := answer(); warm != cold {
		t.Errorf("from the cache, marked as checked:\n%s\nwith a cold cache:\n%s", warm, cold)
	}
	// One byte of the marked entry's code changed in the middle, where the
	// CLI maps the code from the file (the mark no longer matches), then
	// (compiled afresh) the entry cut short.
	damage := []struct {
		how    string
		damage func(file string) error
	}{
		{"a byte of its code changed", func(file string) error {
			f, err := os.OpenFile(file, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			info, err := f.Stat()
			if err != nil {
				return err
			}
			b := []byte{0}
			if _, err := f.ReadAt(b, info.Size()/2); err != nil {
				return err
			}
			b[0] ^= 0xff
			_, err = f.WriteAt(b, info.Size()/2)
			return err
		}},
		{"cut short", func(file string) error { return os.Truncate(file, 1000) }},
	}
	for _, d := range damage {
		if files = cached(); len(files) != 1 {
			t.Fatalf("before damaging it (%s), the cache holds %d files, want 1: %v", d.how, len(files), files)
		}
		if err := d.damage(files[0]); err != nil {
			t.Fatal(err)
		}
		damaged, warned := answer()
		if damaged != cold {
			t.Errorf("from a cache entry %s:\n%s\nwith a cold cache:\n%s", d.how, damaged, cold)
		}
		if !strings.Contains(warned, "could not be used") {
			t.Errorf("a cache entry %s gave no warning: %q", d.how, warned)
		}
		answer() // compiles afresh into the emptied cache
	}
}
