package curatefrom

import (
	"errors"
	"fmt"
	"testing"

	"github.com/arbormem/arbor/core/host"
)

func names(t *testing.T, fs host.FS, dir string) string {
	t.Helper()
	list, err := fs.ReadDir(dir)
	if err != nil {
		return "error: " + err.Error()
	}
	var out []string
	for _, de := range list {
		n := de.Name
		if de.IsDir {
			n += "/"
		}
		out = append(out, n)
	}
	return fmt.Sprint(out)
}

func TestOverlayKeepsTheBaseUntouched(t *testing.T) {
	base := host.NewMemFS()
	for _, p := range []string{"a/b/x.md", "a/b/y.md", "a/c/z.md"} {
		if err := base.WriteFile(p, []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	o := newOverlay(base)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(o.WriteFile("a/b/x.md", []byte("new x")))
	must(o.WriteFile("d/e/f.md", []byte("f")))
	must(o.Remove("a/c/z.md"))
	must(o.Remove("a/c"))
	if got := names(t, o, "a"); got != "[b/]" {
		t.Fatalf("a = %s", got)
	}
	if got := names(t, o, ""); got != "[a/ d/]" {
		t.Fatalf("root = %s", got)
	}
	if b, _ := o.ReadFile("a/b/x.md"); string(b) != "new x" {
		t.Fatalf("read through the overlay: %q", b)
	}
	if _, err := o.ReadFile("a/c/z.md"); !errors.Is(err, host.ErrNotFound) {
		t.Fatalf("a removed file: %v", err)
	}
	if _, err := o.Stat("a/c"); !errors.Is(err, host.ErrNotFound) {
		t.Fatalf("a removed folder: %v", err)
	}
	if err := o.Remove("a/b"); !errors.Is(err, host.ErrInvalid) {
		t.Fatalf("removing a folder with files: %v", err)
	}
	if err := o.WriteFile("a/b", nil); !errors.Is(err, host.ErrInvalid) {
		t.Fatalf("writing over a folder: %v", err)
	}
	// A removed folder written again holds only the new file.
	must(o.WriteFile("a/c/w.md", []byte("w")))
	if got := names(t, o, "a/c"); got != "[w.md]" {
		t.Fatalf("a/c = %s", got)
	}
	must(o.Rename("a/b/y.md", "a/c/y.md"))
	if got := names(t, o, "a/b") + names(t, o, "a/c"); got != "[x.md][w.md y.md]" {
		t.Fatalf("after rename: %s", got)
	}
	// The base never changed.
	if fmt.Sprint(len(base.Files())) != "3" || string(base.Files()["a/b/x.md"]) != "a/b/x.md" {
		t.Fatalf("the base changed: %v", base.Files())
	}
}
