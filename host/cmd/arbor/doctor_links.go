package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// linkCheck lists the symbolic links of the tree, which the engine does
// not follow (docs/ABI.md §2). What one leading inside the root leads to
// is read once, under its own name, so the link's name finds nothing, and
// an operation naming a path through it fails: worth a warning. One
// leading outside the root, or nowhere, is not read at all.
func linkCheck(root string) check {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return check{Name: "links", Status: checkFail, Detail: err.Error()}
	}
	var linked, ignored []string
	skips, err := walkRoot(root, func(p string, d fs.DirEntry) error {
		switch {
		case p != root && strings.HasPrefix(d.Name(), "."):
			if d.IsDir() {
				return filepath.SkipDir // the engine reads no dot-name
			}
			return nil
		case d.Type()&fs.ModeSymlink == 0:
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		to, err := filepath.EvalSymlinks(p)
		inside, _ := filepath.Rel(real, to)
		if err != nil || inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)) {
			ignored = append(ignored, rel)
			return nil
		}
		what := "file"
		if fi, err := os.Stat(to); err == nil && fi.IsDir() {
			what = "folder"
		}
		linked = append(linked, fmt.Sprintf("%s → %s (a %s)", rel, filepath.ToSlash(inside), what))
		return nil
	})
	if err != nil {
		return check{Name: "links", Status: checkFail, Detail: fmt.Sprintf("look for symbolic links: %v", err)}
	}
	return notLookedIn(linkResult(linked, ignored), skips)
}

// linkResult is the links check of what the walk found.
func linkResult(linked, ignored []string) check {
	switch {
	case len(linked) > 0:
		detail := fmt.Sprintf("%s lead inside the tree, and the engine does not follow them: what each leads to is read once, under its own name, and a path through a link is refused; replace a link with what it leads to, or remove it", plural(len(linked), "symbolic link", "symbolic links"))
		if len(ignored) > 0 {
			detail += fmt.Sprintf(" (%d more lead outside the root or nowhere, and are not read)", len(ignored))
		}
		return check{Name: "links", Status: checkWarn, Detail: detail, Items: append(linked, ignored...)}
	case len(ignored) > 0:
		return check{Name: "links", Status: checkInfo, Detail: fmt.Sprintf("%s lead outside the root or nowhere, and are not read", plural(len(ignored), "symbolic link", "symbolic links")), Items: ignored}
	}
	return check{Name: "links", Status: checkOK, Detail: "no symbolic links in the tree"}
}

// walkDir is filepath.WalkDir; a test makes a folder unlistable with it,
// as the system makes another user's private folder (root lists every
// folder, so a test run as root could not).
var walkDir = filepath.WalkDir

// skipped is a folder a walk of the tree could not look in: its path,
// relative and slash separated, and why, "path too long" or "permission
// denied".
type skipped struct{ path, why string }

// walkRoot walks the tree below root as filepath.WalkDir does, calling fn
// for each file and folder, stepping over what is removed while it walks,
// and over the folders it cannot look in, which it returns for
// notLookedIn: past the system's path limit (ENAMETOOLONG), or that this
// user may not list (EACCES), which the engine leaves out of the memory
// without a word, where a check failed whole for them.
func walkRoot(root string, fn func(p string, d fs.DirEntry) error) (skips []skipped, err error) {
	err = walkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil // removed while walking
		case errors.Is(err, syscall.ENAMETOOLONG):
			skips = append(skips, skipped{relSlash(root, p), "path too long"})
			return nil
		case errors.Is(err, fs.ErrPermission) && p != root:
			skips = append(skips, skipped{relSlash(root, p), "permission denied"})
			return nil
		case err != nil:
			return err
		}
		return fn(p, d)
	})
	return skips, err
}

// notLookedIn adds to c the folders a walk of the tree stepped over
// (walkRoot): the check looked everywhere else, and failing it whole for
// them said nothing of the rest. Such a folder is worth a warning: the
// engine cannot read what it holds either (an open warns of each file
// too deep as "path too long", and leaves an unlistable folder out).
func notLookedIn(c check, skips []skipped) check {
	if len(skips) == 0 {
		return c
	}
	if c.Status == checkOK || c.Status == checkInfo {
		c.Status = checkWarn
	}
	count := map[string]int{}
	for _, s := range skips {
		count[s.why]++
		c.Items = append(c.Items, s.path+" ("+s.why+")")
	}
	if n := count["path too long"]; n > 0 {
		c.Detail += fmt.Sprintf("; %s past the system's path limit not looked in (path too long: move what they hold up the tree, the engine cannot read it either)", plural(n, "folder", "folders"))
	}
	if n := count["permission denied"]; n > 0 {
		c.Detail += fmt.Sprintf("; %s this user may not list not looked in (permission denied: the engine leaves out what they hold; give this user read and search permission on them, or move them out of the tree)", plural(n, "folder", "folders"))
	}
	return c
}

// relSlash is p relative to root, slash separated.
func relSlash(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}
