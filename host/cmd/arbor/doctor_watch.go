package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// watchLimitFile holds Linux's limit of inotify watches one user may hold
// (a variable for the tests).
var watchLimitFile = "/proc/sys/fs/inotify/max_user_watches"

// watchCheck compares the tree's folders with the system's limit of
// watches: `arbor serve`, `arbor mcp` and a watching Node memory watch
// every folder, one watch each, and past the limit hear nothing of the
// folders left over, which they then scan every two seconds instead. It
// warns from half the limit, since editors and other tools hold watches
// too. There is no such limit to read off Linux: no check.
func watchCheck(root string) (check, bool) {
	b, err := os.ReadFile(watchLimitFile)
	if err != nil {
		return check{}, false
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || limit <= 0 {
		return check{}, false
	}
	folders := 0
	if _, err := walkRoot(root, func(p string, d fs.DirEntry) error {
		switch {
		case !d.IsDir():
		case p != root && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir // never watched
		default:
			folders++
		}
		return nil
	}); err != nil {
		return check{Name: "watches", Status: checkWarn, Detail: fmt.Sprintf("folders not counted: %v", err)}, true
	}
	detail := fmt.Sprintf("%s to watch, of the %d inotify watches this user may hold (fs.inotify.max_user_watches)", plural(folders, "folder", "folders"), limit)
	if folders > limit/2 {
		return check{Name: "watches", Status: checkWarn, Detail: detail + fmt.Sprintf(
			": arbor serve, arbor mcp and a watching Node memory watch every folder, and past the limit scan for changes every 2 s instead of hearing them; raise it (sudo sysctl fs.inotify.max_user_watches=%d)", max(4*folders, 524288))}, true
	}
	return check{Name: "watches", Status: checkOK, Detail: detail}, true
}
