package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/rootlock"
)

// What a crash leaves behind, and what `doctor` says of it: an operation
// whose audit line was not written yet (the journal, which opening the
// root records), temporary files of atomic writes, and the root's lock.

// journalCheck reports the operation a killed process left in the
// journal, as the engine recorded it when doctor opened the root
// (recovered is that open warning's message, "" when there was none).
func journalCheck(pending bool, recovered string) (check, bool) {
	switch {
	case recovered != "":
		return check{Name: "journal", Status: checkWarn, Detail: "a process was killed during a curate; the operation is now in the audit log", Items: []string{recovered}}, true
	case pending:
		return check{Name: "journal", Status: checkOK, Detail: "the last curate was interrupted after its audit line was written; nothing was lost"}, true
	}
	return check{}, false
}

// leftoverCheck finds the temporary files of atomic writes that a killed
// process left in the root (api.TempPrefix, in every host), and with fix
// removes them, holding the root's lock so that no running write loses
// the file it is about to rename. Folders it cannot look in are stepped
// over, and named (notLookedIn).
func leftoverCheck(ctx context.Context, root string, fix bool) (c check) {
	found, skips, err := leftovers(root)
	defer func() { c = notLookedIn(c, skips) }()
	if err != nil {
		return check{Name: "leftovers", Status: checkFail, Detail: err.Error()}
	}
	if len(found) == 0 {
		return check{Name: "leftovers", Status: checkOK, Detail: "no temporary files left by an interrupted write"}
	}
	if !fix {
		return check{Name: "leftovers", Status: checkWarn, Items: found,
			Detail: fmt.Sprintf("%d temporary files left by interrupted writes (each is a copy, never the only one: the file it was meant to replace is whole); arbor doctor --fix removes them", len(found))}
	}
	lock, err := rootlock.Acquire(ctx, root)
	if err != nil {
		return check{Name: "leftovers", Status: checkFail, Detail: fmt.Sprintf("not removed: %v", err)}
	}
	defer lock.Release()
	found, skips, err = leftovers(root) // a write may have finished meanwhile
	if err != nil {
		return check{Name: "leftovers", Status: checkFail, Detail: err.Error()}
	}
	var failed []string
	for _, rel := range found {
		if err := os.Remove(filepath.Join(root, filepath.FromSlash(rel))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			failed = append(failed, fmt.Sprintf("%s: %v", rel, err))
		}
	}
	if len(failed) > 0 {
		return check{Name: "leftovers", Status: checkFail, Detail: fmt.Sprintf("%d of %d temporary files could not be removed", len(failed), len(found)), Items: failed}
	}
	return check{Name: "leftovers", Status: checkOK, Detail: fmt.Sprintf("removed %d temporary files left by interrupted writes", len(found)), Items: found}
}

// leftovers lists the temporary files under root, relative and slash
// separated, skipping .git, and the folders it could not look in.
func leftovers(root string) (found []string, skips []skipped, err error) {
	skips, err = walkRoot(root, func(p string, d fs.DirEntry) error {
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), api.TempPrefix) {
			found = append(found, relSlash(root, p))
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("look for temporary files: %w", err)
	}
	return found, skips, nil
}

// lockCheck says who holds the root's lock, if anyone.
func lockCheck(root string) (check, bool) {
	o, held, err := rootlock.Holder(root)
	switch {
	case err != nil:
		return check{Name: "lock", Status: checkWarn, Detail: fmt.Sprintf("%s cannot be read (the next writer removes it once it is stale): %v", rootlock.Path, err)}, true
	case !held:
		return check{}, false
	}
	since, _ := time.Parse(time.RFC3339Nano, o.Since)
	return check{Name: "lock", Status: checkInfo, Detail: fmt.Sprintf("held by pid %d on %s for %s: writes wait for it; a lock whose process is gone is taken over", o.PID, o.Host, time.Since(since).Round(time.Second))}, true
}
