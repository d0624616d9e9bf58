//go:build linux || darwin

package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// A note past the system's path limit (18 folders of 243 bytes, made one
// at a time from inside the one above) is reported as a path too long,
// and doctor's walks step over its folder with a warning, looking
// everywhere else, where they failed whole ("file name too long").
func TestDoctorStepsOverAPathTooLong(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	writeFile(t, filepath.Join(dir, "engineering", api.TempPrefix+"left"), "a copy")
	seg := strings.Repeat("a", 243)
	t.Chdir(dir)
	for range 18 {
		if err := os.Mkdir(seg, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Chdir(seg)
	}
	if err := os.WriteFile("note.md", []byte("---\ntitle: Deep\n---\n\n## Narrative\ndeep text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	status := doctorChecks(t, dir)
	for _, name := range []string{"links", "leftovers"} {
		c := status[name]
		long := 0
		for _, it := range c.Items {
			if strings.HasPrefix(it, seg+"/") && strings.HasSuffix(it, " (path too long)") {
				long++
			}
		}
		if c.Status != checkWarn || !strings.Contains(c.Detail, "1 folder past the system's path limit not looked in") || long != 1 {
			t.Errorf("%s: %+v, want a warning naming the folder too long", name, c)
		}
	}
	if !strings.Contains(strings.Join(status["leftovers"].Items, " "), "engineering/"+api.TempPrefix+"left") {
		t.Errorf("leftovers stopped looking at the folder too long: %+v", status["leftovers"])
	}
	if files := strings.Join(status["files"].Items, " "); !strings.Contains(files, "/note.md: unreadable: read ") || !strings.Contains(files, "path too long for the file system") {
		t.Errorf("files: %+v, want the note unreadable as a path too long", status["files"])
	}
}

// doctor counts the folders a watching engine watches against the
// system's limit of watches, and warns from half of it.
func TestDoctorWatches(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	limit := filepath.Join(t.TempDir(), "max_user_watches")
	defer func(f string) { watchLimitFile = f }(watchLimitFile)
	watchLimitFile = limit
	watches := func(max string) check {
		t.Helper()
		writeFile(t, limit, max+"\n")
		var rep doctorReport
		if err := json.Unmarshal([]byte(must(t, "", "--root", dir, "--json", "doctor")), &rep); err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Checks {
			if c.Name == "watches" {
				return c
			}
		}
		t.Fatalf("no watches check in %+v", rep.Checks)
		return check{}
	}
	if c := watches("8192"); c.Status != checkOK || !strings.Contains(c.Detail, "of the 8192 inotify watches") {
		t.Errorf("a small tree: %+v", c)
	}
	if c := watches("4"); c.Status != checkWarn || !strings.Contains(c.Detail, "sudo sysctl fs.inotify.max_user_watches=524288") {
		t.Errorf("a tree past half the limit: %+v", c)
	}
}

// A folder this user may not list (another user's, chmod 700) is left out
// of the memory by the engine without a word; doctor's walks failed whole
// on it ("permission denied"). They now step over it and name it.
func TestDoctorNamesAFolderItMayNotList(t *testing.T) {
	needEngine(t)
	dir := newTree(t)
	writeFile(t, filepath.Join(dir, "engineering", api.TempPrefix+"left"), "a copy")
	writeFile(t, filepath.Join(dir, "private", "diary", "note.md"), "---\ntitle: Private\n---\n\n## Narrative\nprivate text\n")
	denied := filepath.Join(dir, "private")
	defer func(w func(string, fs.WalkDirFunc) error) { walkDir = w }(walkDir)
	walkDir = func(root string, fn fs.WalkDirFunc) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if p != denied || err != nil {
				return fn(p, d, err)
			}
			if err := fn(p, d, nil); err != nil {
				return err
			}
			// As WalkDir does when it cannot read the folder.
			if err := fn(p, d, &fs.PathError{Op: "open", Path: p, Err: syscall.EACCES}); err != nil {
				return err
			}
			return filepath.SkipDir
		})
	}
	status := doctorChecks(t, dir)
	for _, name := range []string{"links", "leftovers"} {
		c := status[name]
		if c.Status != checkWarn || !strings.Contains(c.Detail, "1 folder this user may not list not looked in (permission denied") || !slices.Contains(c.Items, "private (permission denied)") {
			t.Errorf("%s: %+v, want a warning naming the folder", name, c)
		}
	}
	if !slices.Contains(status["leftovers"].Items, "engineering/"+api.TempPrefix+"left") {
		t.Errorf("leftovers stopped looking elsewhere: %+v", status["leftovers"])
	}
}

// doctorChecks runs arbor doctor --json on dir and returns its checks by
// name.
func doctorChecks(t *testing.T, dir string) map[string]check {
	t.Helper()
	var rep doctorReport
	if err := json.Unmarshal([]byte(must(t, "", "--root", dir, "--json", "doctor")), &rep); err != nil {
		t.Fatal(err)
	}
	status := map[string]check{}
	for _, c := range rep.Checks {
		status[c.Name] = c
	}
	return status
}
