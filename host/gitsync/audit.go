package gitsync

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/arbormem/arbor/core/api"
)

// auditFile is the engine's audit log (docs/format.md, .arbor/); past
// 256 KiB it is renamed audit.<time>.jsonl and begun again.
var auditFile = filepath.Join(api.StateDir, "audit.jsonl")

// op is one line of the audit log.
type op struct {
	Op     string `json:"op"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Status string `json:"status"`
}

// auditSince returns the operations applied since the last sync: the
// lines of the audit log after the size it had then (those of the log it
// was renamed to first, when it was rotated since), and the log's size
// now.
func auditSince(root string, last syncState) ([]op, int64) {
	cur := filepath.Join(root, auditFile)
	data, _ := os.ReadFile(cur)
	from := last.AuditBytes
	var text []byte
	if int64(len(data)) >= from {
		text = data[from:]
	} else {
		// Rotated since: the rest of the log the sync read from, then all
		// of the new one.
		old, _ := filepath.Glob(filepath.Join(root, api.StateDir, "audit.*.jsonl"))
		sort.Strings(old)
		if n := len(old); n > 0 {
			if prev, err := os.ReadFile(old[n-1]); err == nil && int64(len(prev)) >= from {
				text = append(text, prev[from:]...)
			}
		}
		text = append(text, data...)
	}
	var ops []op
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var o op
		if json.Unmarshal(sc.Bytes(), &o) == nil && o.Status == api.StatusSuccess {
			ops = append(ops, o)
		}
	}
	return ops, int64(len(data))
}

// maxListed bounds the operations a commit message lists one by one.
const maxListed = 30

// commitMessage summarises a commit of the root's changes: the audited
// operations by type, then each (the first maxListed), or, when the files
// were changed by hand, how many.
func commitMessage(ops []op, changed []string) string {
	if len(ops) == 0 {
		return fmt.Sprintf("arbor sync: %d files changed outside Arbor\n\n- %s\n", len(changed), strings.Join(first(changed, maxListed), "\n- "))
	}
	counts := map[string]int{}
	var kinds []string
	for _, o := range ops {
		if counts[o.Op] == 0 {
			kinds = append(kinds, o.Op)
		}
		counts[o.Op]++
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "arbor sync: %s\n\n", strings.Join(parts, ", "))
	for i, o := range ops {
		if i == maxListed {
			fmt.Fprintf(&b, "- … and %d more\n", len(ops)-maxListed)
			break
		}
		fmt.Fprintf(&b, "- %s %s: %s\n", o.Op, o.Path, oneLine(o.Reason))
	}
	return b.String()
}

func first(l []string, n int) []string {
	if len(l) > n {
		return append(l[:n:n], fmt.Sprintf("… and %d more", len(l)-n))
	}
	return l
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
