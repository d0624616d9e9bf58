package curate

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/tree"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

var (
	tNow  = time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	clock = host.FixedClock(tNow)
)

// fixture is a small tree: two billing entries (old_retry is linked from
// three other entries in the three link styles), a legacy entry, an
// Obsidian note and a broken file.
var fixture = map[string]string{
	"eng/context.md":         "# Eng\n\nEngineering.\n",
	"eng/billing/context.md": "# Billing\n\nBilling topic.\n",
	"eng/billing/invoice_retry.md": `---
title: Invoice retry
summary: invoices are retried
tags: [billing]
related: [eng/billing/old_retry.md, eng/auth/login.md]
keywords: [invoice, retry]
createdAt: 2026-02-10T00:00:00Z
updatedAt: 2026-02-10T00:00:00Z
owner: alice
---

## Reason
first write

## Narrative
Retries happen nightly.

### Rules
Three retries, then escalate.

## Facts
- **retry**: three attempts [policy]

## Snippets
` + "```go\nretry(3)\n```" + `

## Notes
Keep this section.
`,
	"eng/billing/old_retry.md": `---
title: Old retry
summary: the old retry policy
tags: [billing, legacy]
related: [eng/billing/invoice_retry.md, eng/auth/session.md]
keywords: [retry, cron]
createdAt: 2026-01-05T00:00:00Z
updatedAt: 2026-01-05T00:00:00Z
---

## Reason
history

## Narrative
Retries used to run hourly.

### Examples
retry at 01:00

## Facts
- **cron**: hourly job [history]
- **retry**: three attempts [policy]
`,
	"eng/auth/login.md": `---
title: Login
createdAt: 2026-01-01T00:00:00Z
updatedAt: 2026-01-01T00:00:00Z
---

## Reason
auth notes

## Narrative
Login may trigger billing checks.

## Relations
@eng/billing/old_retry.md
`,
	"eng/auth/session.md": `---
title: Session
related: [eng/billing/old_retry.md]
createdAt: 2026-01-01T00:00:00Z
updatedAt: 2026-01-01T00:00:00Z
---

## Reason
auth
`,
	"notes/Daily Note.md":   "# Daily Note\n\nSee [[old_retry]] and [[eng/billing/old_retry|the old one]] and [[Unrelated]].\n",
	"eng/billing/broken.md": "---\ntitle: [unclosed\n---\nbody\n",
}

// fixtureWithSubtopic returns a copy of fixture with a subtopic folder
// under eng/billing: a context file and an entry linking to the note.
func fixtureWithSubtopic() map[string]string {
	files := maps.Clone(fixture)
	files["eng/billing/sub/context.md"] = "# Sub\n"
	files["eng/billing/sub/deep.md"] = "---\ntitle: Deep\n---\n\n## Narrative\nsee [[Daily Note]]\n"
	return files
}

// memOf returns a MemFS holding files (path → text).
func memOf(t testing.TB, files map[string]string) *host.MemFS {
	t.Helper()
	fs := host.NewMemFS()
	for p, s := range files {
		if err := fs.WriteFile(p, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

// load reads a whole MemFS into a catalog, as the engine does.
func load(t testing.TB, fs host.FS) *catalog.Catalog {
	t.Helper()
	return loadMax(t, fs, DefaultMaxFileBytes)
}

// loadMax is load with a size limit of maxBytes.
func loadMax(t testing.TB, fs host.FS, maxBytes int) *catalog.Catalog {
	t.Helper()
	cat, _, _, err := catalog.Load(fs, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

type env struct {
	fs      *host.MemFS
	c       *Curator
	changes []Change
}

func newEnv(t testing.TB, files map[string]string) *env {
	t.Helper()
	fs := memOf(t, files)
	e := &env{fs: fs}
	e.c = &Curator{FS: fs, Clock: clock, Catalog: load(t, fs), OnChange: func(ch Change) { e.changes = append(e.changes, ch) }}
	return e
}

func (e *env) entry(t testing.TB, p string) *tree.Entry {
	t.Helper()
	data, err := e.fs.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	en, err := tree.ParseEntry(p, data)
	if err != nil {
		t.Fatalf("parse %s: %v\n%s", p, err, data)
	}
	return en
}

// treeFiles is the tree content without the .arbor folder.
func treeFiles(fs *host.MemFS) map[string]string {
	out := map[string]string{}
	for p, b := range fs.Files() {
		if !strings.HasPrefix(p, ".arbor/") {
			out[p] = string(b)
		}
	}
	return out
}

func diffFiles(a, b map[string]string) string {
	var d []string
	for p, s := range a {
		if t, ok := b[p]; !ok {
			d = append(d, "only before: "+p)
		} else if s != t {
			d = append(d, "changed: "+p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			d = append(d, "only after: "+p)
		}
	}
	sort.Strings(d)
	return strings.Join(d, "\n")
}

// catalogState is a comparable picture of a catalog.
func catalogState(cat *catalog.Catalog) string {
	var b strings.Builder
	for _, p := range cat.Paths() {
		e, _ := cat.Get(p)
		j, _ := json.Marshal(e)
		fmt.Fprintf(&b, "E %s %s back=%v fwd=%v\n", p, j, cat.Backlinks(p), cat.Forward(p))
	}
	for _, p := range cat.ContextPaths() {
		fmt.Fprintf(&b, "C %s\n", p)
	}
	for _, p := range cat.BrokenPaths() {
		fmt.Fprintf(&b, "B %s\n", p)
	}
	return b.String()
}

func auditLines(t testing.TB, fs host.FS) []auditRecord {
	t.Helper()
	data, err := fs.ReadFile(AuditPath)
	if errors.Is(err, host.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []auditRecord
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		var r auditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

func one(t testing.TB, e *env, op api.Operation) Applied {
	t.Helper()
	res := e.c.Apply([]api.Operation{op})
	if len(res.Applied) != 1 {
		t.Fatalf("applied = %d", len(res.Applied))
	}
	return res.Applied[0]
}

func mustSucceed(t testing.TB, a Applied) {
	t.Helper()
	if a.Status != api.StatusSuccess {
		t.Fatalf("%s %s failed: %s", a.Type, a.Path, a.Message)
	}
}

// faultFS fails the nth mutating call (WriteFile, Append, Remove, Rename)
// counted from 1; with sticky, every call from the nth on fails (a crash).
type faultFS struct {
	host.FS
	n, calls int
	sticky   bool
}

var errInjected = fmt.Errorf("injected fault: %w", host.ErrIO)

func (f *faultFS) hit() bool {
	f.calls++
	return f.calls == f.n || (f.sticky && f.n > 0 && f.calls >= f.n)
}

func (f *faultFS) WriteFile(p string, data []byte) error {
	if f.hit() {
		return errInjected
	}
	return f.FS.WriteFile(p, data)
}

func (f *faultFS) Append(p string, data []byte) error {
	if f.hit() {
		return errInjected
	}
	return f.FS.Append(p, data)
}

func (f *faultFS) Remove(p string) error {
	if f.hit() {
		return errInjected
	}
	return f.FS.Remove(p)
}

func (f *faultFS) Rename(a, b string) error {
	if f.hit() {
		return errInjected
	}
	return f.FS.Rename(a, b)
}

// otherDevice is an FS where mount is another device (a mount inside the
// tree): a rename into or out of it fails as a host's does (EXDEV). The
// renames made are added to renames, when set.
type otherDevice struct {
	host.FS
	mount   string
	renames *[]string
}

func (f otherDevice) Rename(from, to string) error {
	if in := func(p string) bool { return p == f.mount || strings.HasPrefix(p, f.mount+"/") }; in(from) != in(to) {
		return fmt.Errorf("rename %s: %w", from, host.ErrCrossDevice)
	}
	if err := f.FS.Rename(from, to); err != nil {
		return err
	}
	if f.renames != nil {
		*f.renames = append(*f.renames, from+" → "+to)
	}
	return nil
}

// countReads is an FS that counts the reads of each file (it is no
// host.RangeReader: no file is read in part past it).
type countReads struct {
	host.FS
	reads map[string]int
}

func (f countReads) ReadFile(p string) ([]byte, error) {
	f.reads[p]++
	return f.FS.ReadFile(p)
}
