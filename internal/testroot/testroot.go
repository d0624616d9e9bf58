// Package testroot writes and reads the files of a memory root in tests,
// as a person's editor or git leaves them on disk.
package testroot

import (
	"os"
	"path/filepath"
	"testing"
)

// Write makes the file at the slash path p under root hold text,
// creating its folders.
func Write(t testing.TB, root, p, text string) {
	t.Helper()
	full := filepath.Join(root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Read returns the text of the file at the slash path p under root.
func Read(t testing.TB, root, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
