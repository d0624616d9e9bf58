package curate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/tree"
)

// moveOp is a MOVE of p to to.
func moveOp(p, to string) api.Operation {
	return api.Operation{Type: "MOVE", Path: p, To: to, Reason: "reorganise"}
}

// links returns the links e declares that the catalog resolves, resolved.
func (e *env) resolved(t *testing.T, p string) []string {
	t.Helper()
	return e.c.Catalog.Forward(p)
}

func TestMoveEntryIntoFolder(t *testing.T) {
	e := newEnv(t, fixture)
	const src, dst = "eng/billing/old_retry.md", "archive/billing/old_retry.md"
	before := treeFiles(e.fs)
	a := one(t, e, moveOp(src, "archive/billing"))
	mustSucceed(t, a)
	if a.Path != src || a.To != dst || a.Moved[src] != dst || len(a.Moved) != 1 {
		t.Fatalf("applied = %+v", a)
	}
	got := treeFiles(e.fs)
	// The entry keeps its bytes: none of its own links named what moved.
	if got[dst] != before[src] {
		t.Errorf("moved entry changed:\n%s\nwas\n%s", got[dst], before[src])
	}
	if _, ok := got[src]; ok {
		t.Error("source still there")
	}
	for _, cp := range []string{"archive/context.md", "archive/billing/context.md"} {
		if _, ok := got[cp]; !ok {
			t.Errorf("%s not written", cp)
		}
	}
	// Every link that named the entry by its path points at the new one,
	// in each style; the note's [[old_retry]] still finds it by name.
	if r := e.entry(t, "eng/auth/session.md").Related; !slices.Equal(r, []string{dst}) {
		t.Errorf("session related = %v", r)
	}
	if r := e.entry(t, "eng/auth/login.md").LegacyRelations; !slices.Equal(r, []string{dst}) {
		t.Errorf("login legacy relations = %v", r)
	}
	if r := e.entry(t, "eng/billing/invoice_retry.md").Related; !slices.Equal(r, []string{dst, "eng/auth/login.md"}) {
		t.Errorf("invoice_retry related = %v", r)
	}
	if note := got["notes/Daily Note.md"]; note != "# Daily Note\n\nSee [[old_retry]] and [[archive/billing/old_retry|the old one]] and [[Unrelated]].\n" {
		t.Errorf("note = %q", note)
	}
	// The rewrites are minimal edits: the rest of each file is as it was.
	if want := strings.Replace(before["eng/auth/session.md"], src, dst, 1); got["eng/auth/session.md"] != want {
		t.Errorf("session rewritten as\n%s", got["eng/auth/session.md"])
	}
	back := e.c.Catalog.Backlinks(dst)
	if want := []string{"eng/auth/login.md", "eng/auth/session.md", "eng/billing/invoice_retry.md", "notes/Daily Note.md"}; !slices.Equal(back, want) {
		t.Errorf("backlinks = %v, want %v", back, want)
	}
	if e.c.Catalog.Has(src) || !e.c.Catalog.Has(dst) {
		t.Error("catalog not in step")
	}
	if catalogState(e.c.Catalog) != catalogState(load(t, e.fs)) {
		t.Error("catalog differs from the tree reloaded")
	}
	if !strings.Contains(a.Message, "moved eng/billing/old_retry.md to archive/billing/old_retry.md; rewrote 4 links in 4 entries") {
		t.Errorf("message = %q", a.Message)
	}
	var removed, put bool
	for _, ch := range e.changes {
		removed = removed || ch.Path == src && ch.Removed
		put = put || ch.Path == dst && ch.Entry != nil
	}
	if !removed || !put {
		t.Errorf("changes = %+v", e.changes)
	}
	lines := auditLines(t, e.fs)
	if l := lines[len(lines)-1]; l.Op != "MOVE" || l.Path != src || l.To != dst || l.Status != api.StatusSuccess || l.Reason != "reorganise" {
		t.Errorf("audit = %+v", l)
	}
}

func TestMoveEntryRenamed(t *testing.T) {
	files := maps.Clone(fixture)
	// A note naming login by its base name: once another entry is called
	// login too, the name alone would find neither.
	files["notes/login links.md"] = "# Links\n\n[[login]] and [[old_retry]]\n"
	e := newEnv(t, files)
	const src, dst = "eng/billing/old_retry.md", "eng/auth/login_retry.md"
	mustSucceed(t, one(t, e, moveOp(src, dst)))
	if note := treeFiles(e.fs)["notes/Daily Note.md"]; !strings.Contains(note, "See [[eng/auth/login_retry]] and [[eng/auth/login_retry|the old one]]") {
		t.Errorf("a link by the old name was not spelled out: %q", note)
	}
	// The entry's own relation to invoice_retry stays; login keeps its links.
	if fwd := e.resolved(t, dst); !slices.Contains(fwd, "eng/billing/invoice_retry.md") {
		t.Errorf("forward = %v", fwd)
	}

	// Renamed onto a base name another entry holds: links naming that one
	// by name are spelled out, so they still find it.
	e = newEnv(t, files)
	mustSucceed(t, one(t, e, moveOp(src, "ops/oncall/login.md")))
	if note := treeFiles(e.fs)["notes/login links.md"]; note != "# Links\n\n[[eng/auth/login]] and [[ops/oncall/login]]\n" {
		t.Errorf("note = %q", note)
	}
	if back := e.c.Catalog.Backlinks("eng/auth/login.md"); !slices.Contains(back, "notes/login links.md") {
		t.Errorf("login lost a backlink: %v", back)
	}
}

// A MOVE to a path that names the entry's own file name keeps that name
// as a person spelt it (tidy archives to _archive/<its path>): only the
// new folders take the engine's spelling. Another name is spelt as the
// engine creates names; a twin of the name in the folder is refused.
func TestMoveKeepsAPersonsFileName(t *testing.T) {
	note := "---\ntitle: Fax Machine\n---\n\n## Narrative\nThe old fax.\n"
	e := newEnv(t, map[string]string{"office/kit/Fax Machine.md": note, "notes/n.md": "# N\n\nSee [[Fax Machine]].\n"})
	a := one(t, e, moveOp("office/kit/Fax Machine.md", "_archive/office/kit/Fax Machine.md"))
	mustSucceed(t, a)
	if data, err := e.fs.ReadFile("_archive/office/kit/Fax Machine.md"); err != nil || string(data) != note {
		t.Fatalf("archived as %q (%q, %v)", a.To, data, err)
	}
	mustSucceed(t, one(t, e, moveOp("_archive/office/kit/Fax Machine.md", "Office Stuff/Old Kit/Fax Machine.md")))
	if _, err := e.fs.ReadFile("office_stuff/old_kit/Fax Machine.md"); err != nil {
		t.Fatalf("new folders not spelt as the engine creates them: %v (%v)", err, treeFiles(e.fs))
	}
	mustSucceed(t, one(t, e, moveOp("office_stuff/old_kit/Fax Machine.md", "office/kit/Old Fax.md")))
	if _, err := e.fs.ReadFile("office/kit/old_fax.md"); err != nil {
		t.Fatalf("a new name not spelt as the engine creates names: %v", err)
	}
	e.fs.WriteFile("office/kit/Fax Machine.md", []byte(note))
	e.fs.WriteFile("office/desk/fax machine.md", []byte(note))
	e.c.Catalog = load(t, e.fs)
	if a := one(t, e, moveOp("office/kit/Fax Machine.md", "office/desk/Fax Machine.md")); a.Status != api.StatusFailed {
		t.Fatalf("a move onto a twin of its name: %+v", a)
	}
}

func TestMoveFolder(t *testing.T) {
	files := fixtureWithSubtopic()
	files["eng/billing/sub/context.md"] = string(tree.NewContext("eng/billing/sub"))
	files["eng/billing/diagram.png"] = "\x89PNG"
	e := newEnv(t, files)
	before := treeFiles(e.fs)
	a := one(t, e, moveOp("eng/billing", "finance/money"))
	mustSucceed(t, a)
	const to = "finance/money"
	if a.To != to {
		t.Fatalf("to = %q", a.To)
	}
	got := treeFiles(e.fs)
	for p := range before {
		if below(p, "eng/billing") {
			if _, ok := got[p]; ok {
				t.Errorf("%s left behind", p)
			}
			np := to + strings.TrimPrefix(p, "eng/billing")
			if _, ok := got[np]; !ok {
				t.Errorf("%s not moved to %s", p, np)
			}
		}
	}
	if _, err := e.fs.Stat("eng/billing"); err == nil {
		t.Error("old folder kept")
	}
	// Untouched files keep their bytes; a hand-written context.md moves as
	// it is, the engine's default one is written for its new folder.
	for _, p := range []string{"/broken.md", "/diagram.png", "/context.md", "/sub/deep.md"} {
		if got[to+p] != before["eng/billing"+p] {
			t.Errorf("%s changed", p)
		}
	}
	if want := string(tree.NewContext(to + "/sub")); got[to+"/sub/context.md"] != want {
		t.Errorf("default context not renamed:\n%s", got[to+"/sub/context.md"])
	}
	if _, ok := got["finance/context.md"]; !ok {
		t.Error("finance/context.md not written")
	}
	// Links between moved entries, and from outside, follow.
	if r := e.entry(t, to+"/invoice_retry.md").Related; !slices.Equal(r, []string{to + "/old_retry.md", "eng/auth/login.md"}) {
		t.Errorf("invoice_retry related = %v", r)
	}
	if r := e.entry(t, to+"/old_retry.md").Related; !slices.Equal(r, []string{to + "/invoice_retry.md", "eng/auth/session.md"}) {
		t.Errorf("old_retry related = %v", r)
	}
	if r := e.entry(t, "eng/auth/session.md").Related; !slices.Equal(r, []string{to + "/old_retry.md"}) {
		t.Errorf("session related = %v", r)
	}
	if _, broken := e.c.Catalog.Broken(to + "/broken.md"); !broken {
		t.Error("the broken file is not reported at its new path")
	}
	if catalogState(e.c.Catalog) != catalogState(load(t, e.fs)) {
		t.Errorf("catalog differs from the tree reloaded:\n%s\nvs\n%s", catalogState(e.c.Catalog), catalogState(load(t, e.fs)))
	}
	if len(a.Moved) != 3 || a.Moved["eng/billing/sub/deep.md"] != to+"/sub/deep.md" {
		t.Errorf("moved = %v", a.Moved)
	}
	if !strings.HasPrefix(a.Message, "moved folder eng/billing to finance/money: 3 entries, 2 context files, 2 other files") {
		t.Errorf("message = %q", a.Message)
	}

	// Into a folder that exists, as mv does.
	e = newEnv(t, fixtureWithSubtopic())
	a = one(t, e, moveOp("eng/billing/sub", "eng/auth"))
	mustSucceed(t, a)
	if a.To != "eng/auth/sub" || !e.c.Catalog.Has("eng/auth/sub/deep.md") {
		t.Errorf("to = %q", a.To)
	}
}

func TestMoveRefusals(t *testing.T) {
	cases := []struct {
		name string
		op   api.Operation
		want string
	}{
		{"no to", api.Operation{Type: "MOVE", Path: "eng/billing/old_retry.md", Reason: "r"}, "to is required for MOVE"},
		{"no reason", api.Operation{Type: "MOVE", Path: "eng/billing/old_retry.md", To: "eng/auth"}, "reason is required"},
		{"missing source", moveOp("eng/billing/nope.md", "eng/auth"), "not found: eng/billing/nope.md"},
		{"missing folder", moveOp("eng/nope", "ops"), "not found: eng/nope"},
		{"destination exists", moveOp("eng/billing/old_retry.md", "eng/billing/invoice_retry.md"), "already exists: eng/billing/invoice_retry.md"},
		{"destination twin", moveOp("eng/auth/login.md", "eng/billing/Old_Retry.md"), "already exists"},
		{"traversal source", moveOp("../etc/passwd", "eng/auth"), `invalid path "../etc/passwd"`},
		{"traversal destination", moveOp("eng/billing/old_retry.md", "../outside"), `invalid to "../outside"`},
		{"absolute destination", moveOp("eng/billing/old_retry.md", "/tmp/x"), `invalid to "/tmp/x"`},
		{"arbor destination", moveOp("eng/billing/old_retry.md", ".arbor/x"), `invalid to ".arbor/x"`},
		{"into itself", moveOp("eng/billing", "eng/billing/sub"), "cannot move eng/billing into itself (eng/billing/sub/billing)"},
		{"onto itself", moveOp("eng/billing", "eng/billing"), "cannot move eng/billing into itself"},
		{"already there", moveOp("eng/billing/old_retry.md", "eng/billing"), "eng/billing/old_retry.md is already there"},
		{"folder to entry", moveOp("eng/billing", "ops/x.md"), "a folder moves to a folder"},
		{"context", moveOp("eng/context.md", "ops/x"), "eng/context.md is a context file"},
		{"to context", moveOp("eng/billing/old_retry.md", "ops/x/context.md"), "to ops/x/context.md is a context file"},
		{"too shallow", moveOp("eng/billing/old_retry.md", "ops"), "entries live under domain/topic"},
		{"folder too deep", moveOp("eng/billing", "a/b/c"), "4 folder levels, at most 3"},
		{"content", api.Operation{Type: "MOVE", Path: "eng/billing/old_retry.md", To: "ops/x", Reason: "r", Content: api.Content{Tags: []string{"t"}}}, "give path, to and reason only"},
		{"folder destination exists", moveOp("eng/auth", "ops"), "already exists: ops/auth"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := fixtureWithSubtopic()
			files["ops/auth/keys.md"] = "# Keys\n"
			e := newEnv(t, files)
			before, cat := treeFiles(e.fs), catalogState(e.c.Catalog)
			a := one(t, e, tc.op)
			if a.Status != api.StatusFailed || !strings.Contains(a.Message, tc.want) {
				t.Fatalf("got %s %q, want failed %q", a.Status, a.Message, tc.want)
			}
			if d := diffFiles(before, treeFiles(e.fs)); d != "" {
				t.Errorf("a failed MOVE changed the tree:\n%s", d)
			}
			if catalogState(e.c.Catalog) != cat {
				t.Error("a failed MOVE changed the catalog")
			}
			lines := auditLines(t, e.fs)
			if l := lines[len(lines)-1]; l.Op != "MOVE" || l.Status != api.StatusFailed {
				t.Errorf("audit = %+v", l)
			}
		})
	}
}

// withAttachments is fixtureWithSubtopic with files a MOVE of eng/billing
// does not edit and the catalog does not hold: carried by renames, unread.
func withAttachments() (map[string]string, []string) {
	files := fixtureWithSubtopic()
	attached := []string{"eng/billing/invoice.pdf", "eng/billing/sub/scan.png", "eng/billing/sub/huge.md"}
	files[attached[0]] = "%PDF-1.7 an invoice"
	files[attached[1]] = "\x89PNG a scan"
	files[attached[2]] = "---\ntitle: Huge\n---\n\n## Narrative\n" + strings.Repeat("a long note ", 500) + "\n"
	return files, attached
}

// A MOVE stopped at any of its file changes, by a failure (every N, one
// call) or a crash (every call from the Nth on, the undo's too), never
// reads a file it carries by a rename, and leaves each file whole at its
// old place or its new one, never at both (what it edits aside: an entry
// whose links change is written anew, then its old copy removed). A
// failed MOVE renames every carried file back, its new folders gone; after
// a crash the next open (Recover) records what was done, by where the
// renamed files are, without reading them.
func TestMoveByRenameThroughFaults(t *testing.T) {
	files, attached := withAttachments()
	op := moveOp("eng/billing", "finance/money")
	newPath := func(p string) string { return strings.Replace(p, "eng/billing/", "finance/money/", 1) }
	ref := newEnv(t, files)
	ref.c.MaxFileBytes = 4096 // huge.md is over the limit: the catalog leaves it out, unread
	ref.c.Catalog = loadMax(t, ref.fs, 4096)
	before, dirs := treeFiles(ref.fs), folders(t, ref.fs)
	mustSucceed(t, one(t, ref, op))
	after := treeFiles(ref.fs)
	for _, p := range attached {
		if after[newPath(p)] != before[p] {
			t.Fatalf("%s not carried as it is", p)
		}
	}
	for _, sticky := range []bool{false, true} {
		for n := 1; ; n++ {
			mem := memOf(t, files)
			counted := countReads{FS: mem, reads: map[string]int{}}
			ffs := &faultFS{FS: counted, n: n, sticky: sticky}
			c := &Curator{FS: ffs, Clock: clock, Catalog: loadMax(t, mem, 4096), MaxFileBytes: 4096}
			a := c.Apply([]api.Operation{op}).Applied[0]
			if sticky {
				// The next process.
				if _, err := (&Curator{FS: counted, Clock: clock}).Recover(); err != nil {
					t.Fatalf("n=%d: Recover: %v", n, err)
				}
			}
			got := treeFiles(mem)
			for _, p := range attached {
				for _, at := range []string{p, newPath(p)} {
					if counted.reads[at] > 0 {
						t.Fatalf("n=%d sticky=%v: %s was read", n, sticky, at)
					}
				}
			}
			for p, s := range before {
				np := newPath(p)
				old, atOld := got[p]
				moved, atNew := got[np]
				switch {
				case np == p:
					if old != s && old != after[p] {
						t.Fatalf("n=%d sticky=%v: %s holds neither its before nor its after content", n, sticky, p)
					}
				case !atOld && !atNew:
					t.Fatalf("n=%d sticky=%v: %s lost in the move", n, sticky, p)
				case atOld && old != s, atNew && moved != after[np]:
					t.Fatalf("n=%d sticky=%v: %s is not whole", n, sticky, p)
				case atOld && atNew && s == after[np]:
					t.Fatalf("n=%d sticky=%v: %s, carried as it is, is at both places", n, sticky, p)
				}
			}
			switch {
			case sticky:
				lines := auditLines(t, mem)
				switch {
				case diffFiles(before, got) == "":
				case len(lines) != 1:
					t.Fatalf("n=%d: the tree changed and the audit log has %d lines", n, len(lines))
				case diffFiles(after, got) == "":
					if lines[0].Status != api.StatusSuccess {
						t.Fatalf("n=%d: a fully applied MOVE is logged as %+v", n, lines[0])
					}
				case lines[0].Status != api.StatusFailed || !strings.Contains(lines[0].Message, "interrupted") || !strings.Contains(lines[0].Message, " → "):
					t.Fatalf("n=%d: a half-applied MOVE is logged as %+v", n, lines[0])
				}
			case a.Status == api.StatusFailed:
				if d := diffFiles(before, got); d != "" {
					t.Fatalf("n=%d: the failed MOVE (%s) changed the tree:\n%s", n, a.Message, d)
				}
				if got := folders(t, mem); !slices.Equal(got, dirs) {
					t.Fatalf("n=%d: the failed MOVE left folders: %v, were %v", n, got, dirs)
				}
			default:
				if d := diffFiles(after, got); d != "" {
					t.Fatalf("n=%d: the MOVE succeeded (%s) but the tree is not the after state:\n%s", n, a.Message, d)
				}
			}
			if ffs.calls < n {
				break // the fault was never reached: every N was tried
			}
		}
	}
}

// A rename that cannot reach its destination (EXDEV: a subfolder is a
// mount) fails part way through the renames: those made are renamed back,
// and the MOVE is made again by copying, which says so. The tree is then
// the one renames give.
func TestMoveAcrossDevicesCopies(t *testing.T) {
	files := map[string]string{
		"media/clips/clip_notes.md":  "---\ntitle: Clip notes\n---\n\n## Narrative\nThe launch video.\n",
		"media/clips/launch.mp4":     "a video",
		"media/clips/raw/take_1.mp4": "a take",
	}
	op := moveOp("media/clips", "archive/clips")
	ref := newEnv(t, files)
	mustSucceed(t, one(t, ref, op))

	e := newEnv(t, files)
	var renames []string
	e.c.FS = otherDevice{FS: e.fs, mount: "media/clips/raw", renames: &renames}
	a := one(t, e, op)
	mustSucceed(t, a)
	if want := "moved folder media/clips to archive/clips: 1 entry, 0 context files, 2 other files; rewrote 0 links in 0 entries (copied, not renamed: a rename cannot carry its files to archive/clips, on another device (a mount inside the tree))"; a.Message != want {
		t.Errorf("message %q\nwant %q", a.Message, want)
	}
	if want := []string{
		"media/clips/clip_notes.md → archive/clips/clip_notes.md",
		"media/clips/launch.mp4 → archive/clips/launch.mp4",
		"archive/clips/launch.mp4 → media/clips/launch.mp4",
		"archive/clips/clip_notes.md → media/clips/clip_notes.md",
	}; !slices.Equal(renames, want) {
		t.Errorf("renames %q\nwant %q", renames, want)
	}
	if d := diffFiles(treeFiles(ref.fs), treeFiles(e.fs)); d != "" {
		t.Errorf("the copied tree differs from the renamed one:\n%s", d)
	}
	if catalogState(e.c.Catalog) != catalogState(load(t, e.fs)) {
		t.Error("catalog out of step")
	}
}

// busyFolder is an FS where the folder at busy cannot be removed, as a
// mount point cannot (EBUSY, an i/o error to the engine).
type busyFolder struct {
	host.FS
	busy string
}

func (f busyFolder) Remove(p string) error {
	if p == f.busy {
		return fmt.Errorf("remove %s: device or resource busy: %w", p, host.ErrIO)
	}
	return f.FS.Remove(p)
}

// A folder emptied by a MOVE that cannot be removed (a mount inside it)
// is said to be kept, and why; the folders holding it are kept for that
// alone, and were said to "hold files the engine does not list".
func TestMoveKeepsAFolderItCannotRemoveAndSaysWhy(t *testing.T) {
	files := map[string]string{
		"media/clips/clip_notes.md":  "---\ntitle: Clip notes\n---\n\n## Narrative\nThe launch video.\n",
		"media/clips/raw/take_1.mp4": "a take",
	}
	e := newEnv(t, files)
	e.c.FS = busyFolder{FS: e.fs, busy: "media/clips/raw"}
	a := one(t, e, moveOp("media/clips", "archive/clips"))
	mustSucceed(t, a)
	if want := "moved folder media/clips to archive/clips: 1 entry, 0 context files, 1 other file; rewrote 0 links in 0 entries (folder media/clips/raw kept: remove media/clips/raw: device or resource busy: i/o error)"; a.Message != want {
		t.Errorf("message %q\nwant %q", a.Message, want)
	}
}
