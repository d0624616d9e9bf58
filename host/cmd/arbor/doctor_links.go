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
	long, err := walkRoot(root, func(p string, d fs.DirEntry) error {
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
	return pastLimit(linkResult(linked, ignored), long)
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

// walkRoot walks the tree below root as filepath.WalkDir does, calling fn
// for each file and folder, stepping over what is removed while it walks
// and over the folders whose path is past the system's limit
// (ENAMETOOLONG), which it returns, relative and slash separated, for
// pastLimit.
func walkRoot(root string, fn func(p string, d fs.DirEntry) error) (long []string, err error) {
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil // removed while walking
		case errors.Is(err, syscall.ENAMETOOLONG):
			long = append(long, relSlash(root, p))
			return nil
		case err != nil:
			return err
		}
		return fn(p, d)
	})
	return long, err
}

// pastLimit adds to c the folders a walk of the tree stepped over because
// their path is past the system's limit (ENAMETOOLONG): the check looked
// everywhere else, and failing it whole for them said nothing of the rest.
// Such a folder is worth a warning: the engine cannot read what it holds
// either (an open warns of each such file as "path too long").
func pastLimit(c check, long []string) check {
	if len(long) == 0 {
		return c
	}
	if c.Status == checkOK || c.Status == checkInfo {
		c.Status = checkWarn
	}
	c.Detail += fmt.Sprintf("; %s past the system's path limit not looked in (path too long: move what they hold up the tree, the engine cannot read it either)", plural(len(long), "folder", "folders"))
	for _, p := range long {
		c.Items = append(c.Items, p+" (path too long)")
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
