package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// treeReads counts the files read outside .arbor/: the tree's own.
type treeReads struct {
	host.FS
	paths []string
}

func (c *treeReads) ReadFile(p string) ([]byte, error) {
	if !strings.HasPrefix(p, api.StateDir+"/") {
		c.paths = append(c.paths, p)
	}
	return c.FS.ReadFile(p)
}

// catalogTree is a MemFS whose clock the test moves (Unix milliseconds),
// holding a few entries that link to each other, a context file and a
// broken file.
func catalogTree(t *testing.T) (*host.MemFS, *int64) {
	t.Helper()
	mem := host.NewMemFS()
	now := day0.UnixMilli()
	mem.SetNow(func() int64 { return now })
	files := map[string]string{
		"ops/pager/rotation.md":   "---\ntitle: Pager rotation\nrelated: [ops/pager/escalation.md]\nimportance: 90\n---\n\n## Narrative\nThe pager rotates weekly on Mondays.\n",
		"ops/pager/escalation.md": "---\ntitle: Escalation\n---\n\n## Narrative\nPage the secondary after fifteen minutes. See [[rotation]].\n",
		"ops/context.md":          "---\ntitle: Operations\n---\n\nHow we run things.\n",
		"ops/deploys/friday.md":   "---\ntitle: Friday deploys\n---\n\n## Narrative\nNo deploys on Friday afternoons.\n",
		"ops/broken.md":           "---\ntitle: [unclosed\n---\n\nbody\n",
	}
	for p, s := range files {
		if err := mem.WriteFile(p, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	return mem, &now
}

// An open after a close reads no file of an unchanged tree, then only the
// files that changed; the answers are those of the tree on disk.
func TestCatalogOpenReadsWhatChanged(t *testing.T) {
	mem, now := catalogTree(t)
	clock := &clockVar{day0.Add(time.Minute)}
	*now += 10_000
	e, _ := openEngine(t, mem, clock, Options{})
	e.Close()

	fs := &treeReads{FS: mem}
	e, res := openEngine(t, fs, clock, Options{})
	if len(fs.paths) != 0 {
		t.Errorf("an open of an unchanged tree read %v", fs.paths)
	}
	if res.Entries != 3 || res.Contexts != 1 || len(res.Warnings) != 1 || res.Warnings[0].Path != "ops/broken.md" {
		t.Errorf("open: %+v", res)
	}
	if r, err := e.Read(api.ReadParams{Path: "ops/pager/escalation.md"}); err != nil || !reflect.DeepEqual(r.Backlinks, []string{"ops/pager/rotation.md"}) {
		t.Errorf("read: %+v, %v", r, err)
	}
	if st := e.Stats(); st.Maturity[api.MaturityCore] != 1 || st.Relations != 2 {
		t.Errorf("stats from the cards (legacy importance, relations): %+v", st)
	}
	e.Close()

	// An edit of another size, a new file, a removed one.
	*now += 10_000
	mem.WriteFile("ops/pager/rotation.md", []byte("---\ntitle: Pager rotation\n---\n\n## Narrative\nThe pager rotates every second Thursday.\n"))
	mem.WriteFile("ops/oncall/handover.md", []byte("---\ntitle: Handover\n---\n\n## Narrative\nHandover happens at nine.\n"))
	mem.Remove("ops/deploys/friday.md")
	*now += 10_000
	fs.paths = nil
	e, res = openEngine(t, fs, clock, Options{})
	defer e.Close()
	if want := []string{"ops/oncall/handover.md", "ops/pager/rotation.md"}; !reflect.DeepEqual(fs.paths, want) {
		t.Errorf("read %v, want %v", fs.paths, want)
	}
	if res.Index.Indexed != 2 || res.Index.Removed != 1 {
		t.Errorf("index after the edits: %+v", res.Index)
	}
	if r, _ := e.Query(api.SearchParams{Query: "when does the pager rotate"}); !strings.Contains(r.Answer, "Thursday") {
		t.Errorf("answer: %q", r.Answer)
	}
	if r, _ := e.Search(api.SearchParams{Query: "friday deploys"}); len(r.Results) != 0 {
		t.Errorf("a removed entry is found: %+v", r.Results)
	}
}

// An edit that keeps the size and the modification time of a file is
// found all the same when the time is not older than the catalog or than
// the listing that read the file ("racy git"). Both are told by the clock
// that stamps the files, never by the engine's, here a year ahead of it
// (a fixed clock may be anywhere).
func TestCatalogSameSizeSameTimeEdit(t *testing.T) {
	for _, tc := range []struct {
		name string
		// the storage's clock when the open lists the tree and when it
		// writes the catalog, after the file's time (day0)
		listed, written int64
		// the open sees the storage through a wrapper that hides its
		// clock: the listing is timed by the system's, ahead of the
		// storage's
		skewed bool
	}{
		{"within the catalog's tick", 0, 0, true},
		{"within the listing's tick", 1_000, 60_000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, now := catalogTree(t)
			clock := &clockVar{day0.AddDate(1, 0, 0)}
			var fs host.FS = mem
			if tc.skewed {
				fs = &treeReads{FS: mem}
			}
			*now += tc.listed
			e, _ := openEngine(t, fs, clock, Options{})
			*now = day0.UnixMilli() + tc.written
			e.Close() // writes the catalog
			at := *now
			*now = day0.UnixMilli()
			mem.WriteFile("ops/pager/rotation.md", []byte("---\ntitle: Pager rotation\nrelated: [ops/pager/escalation.md]\nimportance: 90\n---\n\n## Narrative\nThe pager rotates weekly on Sundays.\n"))
			*now = at + 60_000
			e, _ = openEngine(t, mem, clock, Options{})
			defer e.Close()
			if r, _ := e.Read(api.ReadParams{Path: "ops/pager/rotation.md"}); !strings.Contains(r.Markdown, "Sundays") {
				t.Fatalf("read: %q", r.Markdown)
			}
			if r, _ := e.Search(api.SearchParams{Query: "sundays"}); len(r.Results) != 1 {
				t.Errorf("the edit is not indexed: %+v", r.Results)
			}
		})
	}
}

// An engine whose clock is fixed months before the files' times (a
// reproducible run: api.OpenParams.FixedTime) trusts the sizes and times
// of files clearly older than the listing by the storage's clock: an open
// after a close reads none of them, nor does a scan.
func TestCatalogFixedClockReusesFiles(t *testing.T) {
	mem, now := catalogTree(t)
	*now += 10_000
	clock := host.FixedClock(day0.AddDate(0, -6, 0))
	e, _ := openEngine(t, mem, clock, Options{})
	e.Close()
	*now += 10_000

	fs := &treeReads{FS: mem}
	e, res := openEngine(t, fs, clock, Options{})
	defer e.Close()
	if len(fs.paths) != 0 || res.Entries != 3 || res.Index.Reused != 4 {
		t.Errorf("the open after a close read %v: %+v", fs.paths, res)
	}
	if r, err := e.Refresh(api.RefreshParams{}); err != nil || r.Checked != 0 || len(fs.paths) != 0 {
		t.Errorf("a scan of the unchanged tree checked %d files, read %v (%v)", r.Checked, fs.paths, err)
	}
}

// A catalog that is damaged, truncated or of another version is not
// trusted: the open warns, reads the tree and writes a good one.
func TestCatalogDamagedIsRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"a byte flipped", func(b []byte) []byte { b[len(b)-5] ^= 0x20; return b }, "checksum"},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, "checksum"},
		{"another format", func(b []byte) []byte { b[len("arbor catalog\n")] = 99; return b }, "format 99"},
		{"not a catalog", func([]byte) []byte { return []byte("{}") }, "not a catalog"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, now := catalogTree(t)
			clock := &clockVar{day0.Add(time.Minute)}
			*now += 10_000
			e, _ := openEngine(t, mem, clock, Options{})
			e.Close()
			good, _ := mem.ReadFile(api.CatalogFile)
			mem.WriteFile(api.CatalogFile, tc.damage(append([]byte(nil), good...)))
			*now += 10_000

			fs := &treeReads{FS: mem}
			e, res := openEngine(t, fs, clock, Options{})
			var warned bool
			for _, w := range res.Warnings {
				// The file named once, as the warning's path.
				warned = warned || w.Kind == api.WarnState && w.Path == api.CatalogFile && strings.Contains(w.Message, tc.want) && !strings.Contains(w.Message, api.CatalogFile)
			}
			if !warned || len(fs.paths) != 5 || res.Entries != 3 {
				t.Errorf("warnings %+v, read %v, %d entries", res.Warnings, fs.paths, res.Entries)
			}
			// Saved with the index, when the engine closes.
			e.Close()
			if b, _ := mem.ReadFile(api.CatalogFile); string(b) != string(good) {
				t.Error("the damaged catalog was not replaced by a good one")
			}
		})
	}
}

// A read-only open reads no file the catalog shows unchanged, and writes
// no catalog of its own.
func TestCatalogReadOnly(t *testing.T) {
	mem, now := catalogTree(t)
	clock := &clockVar{day0.Add(time.Minute)}
	*now += 10_000
	e, _ := openEngine(t, mem, clock, Options{})
	e.Close()
	mem.WriteFile("ops/oncall/handover.md", []byte("# Handover\n\nAt nine.\n"))
	before := mem.Files()
	fs := &treeReads{FS: mem}
	e, _ = openEngine(t, fs, clock, Options{ReadOnly: true})
	if r, _ := e.Search(api.SearchParams{Query: "handover"}); len(r.Results) != 1 {
		t.Errorf("search: %+v", r.Results)
	}
	e.Close()
	if want := []string{"ops/oncall/handover.md"}; !reflect.DeepEqual(fs.paths, want) {
		t.Errorf("read %v, want %v", fs.paths, want)
	}
	if after := mem.Files(); !reflect.DeepEqual(after, before) {
		t.Error("a read-only open changed files")
	}
}

// An entry the catalog holds as a card, changed on disk since without its
// size or time showing it, is read as it is now, and an UPDATE applies to
// what is on disk.
func TestCatalogCardOfChangedFile(t *testing.T) {
	mem, now := catalogTree(t)
	clock := &clockVar{day0.Add(time.Minute)}
	*now += 10_000
	e, _ := openEngine(t, mem, clock, Options{})
	e.Close()
	e, _ = openEngine(t, mem, clock, Options{})
	defer e.Close()
	// Written after the open's listing: the session holds the old card.
	*now += 10_000
	mem.WriteFile("ops/deploys/friday.md", []byte("---\ntitle: Friday deploys\n---\n\n## Narrative\nDeploys on Friday need two approvals.\n"))
	r, err := e.Read(api.ReadParams{Path: "ops/deploys/friday.md"})
	if err != nil || !strings.Contains(r.Markdown, "two approvals") {
		t.Fatalf("read: %+v, %v", r, err)
	}
	res := e.Curate(api.CurateParams{Operations: []api.Operation{{Type: "UPDATE", Path: "ops/deploys/friday.md", Reason: "tag", Content: api.Content{Tags: []string{"release"}}}}})
	if res.Applied[0].Status != api.StatusSuccess {
		t.Fatalf("update: %+v", res.Applied[0])
	}
	if b, _ := mem.ReadFile("ops/deploys/friday.md"); !strings.Contains(string(b), "two approvals") || !strings.Contains(string(b), "release") {
		t.Errorf("the update lost what is on disk: %s", b)
	}
}

// Deleting .arbor/ gives the same answers: after edits made outside the
// engine (an edit, a deletion, an addition, a rename, an edit keeping size
// and time), an open through the persisted catalog and one from scratch
// agree on queries, the tree, stats and every entry read.
func TestCatalogSameAnswersAsFromScratch(t *testing.T) {
	mem, now := catalogTree(t)
	clock := &clockVar{day0.Add(time.Minute)}
	for i := range 30 {
		mem.WriteFile(fmt.Sprintf("notes/n%02d.md", i), []byte(fmt.Sprintf("---\ntitle: Note %d\nrelated: [notes/n%02d.md]\n---\n\n## Narrative\nNote number %d about topic%d.\n", i, (i+1)%30, i, i%5)))
	}
	*now += 10_000
	// n06 is written in the tick the catalog is, then edited in it again.
	mem.WriteFile("notes/n06.md", []byte("---\ntitle: Note 6\n---\n\n## Narrative\nAbout topic1.\n"))
	e, _ := openEngine(t, mem, clock, Options{})
	e.Close()
	mem.WriteFile("notes/n06.md", []byte("---\ntitle: Note 6\n---\n\n## Narrative\nAbout topic7.\n"))

	*now += 10_000
	mem.WriteFile("notes/n01.md", []byte("---\ntitle: Note one\n---\n\n## Narrative\nRewritten about topic9 entirely, longer than before.\n"))
	mem.Remove("notes/n02.md")
	mem.WriteFile("notes/n30.md", []byte("# Note thirty\n\nAbout topic1 and [[n04]].\n"))
	b, _ := mem.ReadFile("notes/n05.md")
	mem.Remove("notes/n05.md")
	mem.WriteFile("archive/n05.md", b)
	*now += 10_000

	view := func(fs host.FS) string {
		e, _ := openEngine(t, fs, clock, Options{ReadOnly: true})
		defer e.Close()
		var out []any
		for _, q := range []string{"topic1", "topic7", "topic9", "note number", "pager", "n05"} {
			r, _ := e.Search(api.SearchParams{Query: q, Limit: 50})
			for i := range r.Results {
				r.Results[i].Excerpt = ""
			}
			out = append(out, q, r.Results, r.Total)
		}
		tr, _ := e.Tree(api.TreeParams{})
		st := e.Stats()
		out = append(out, tr, st)
		for _, p := range e.catalog.Paths() {
			r, err := e.Read(api.ReadParams{Path: p})
			out = append(out, r, err)
		}
		j, _ := json.MarshalIndent(out, "", " ")
		return string(j)
	}
	warm := view(mem)
	scratch := host.NewMemFS()
	for p, b := range mem.Files() {
		if !strings.HasPrefix(p, api.StateDir+"/") {
			scratch.WriteFile(p, b)
		}
	}
	if cold := view(scratch); warm != cold {
		t.Errorf("the persisted catalog answers otherwise than the tree:\nwarm %s\ncold %s", warm, cold)
	}
	if !strings.Contains(warm, "topic7") || strings.Contains(warm, "notes/n02.md") {
		t.Errorf("the edits are not seen: %s", warm)
	}
}

// catalogWrites counts the writes of the persisted catalog (its base or
// its delta).
type catalogWrites struct {
	host.FS
	n int
}

func (c *catalogWrites) WriteFile(p string, data []byte) error {
	if p == api.CatalogFile || p == api.CatalogDeltaFile {
		c.n++
	}
	return c.FS.WriteFile(p, data)
}

// The catalog is written again only when what it holds changed: an open
// and close of an unchanged tree leaves it alone, an edit or a removal
// found by the open rewrites it.
func TestCatalogRewrittenOnlyWhenChanged(t *testing.T) {
	mem, now := catalogTree(t)
	clock := &clockVar{day0.Add(time.Minute)}
	*now += 10_000
	fs := &catalogWrites{FS: mem}
	cycle := func(what string, want int) {
		t.Helper()
		*now += 10_000
		fs.n = 0
		e, _ := openEngine(t, fs, clock, Options{})
		e.Close()
		if fs.n != want {
			t.Errorf("%s: the catalog was written %d times, want %d", what, fs.n, want)
		}
	}
	cycle("first open", 1)
	cycle("unchanged", 0)
	mem.WriteFile("ops/pager/escalation.md", []byte("---\ntitle: Escalation\n---\n\n## Narrative\nPage the secondary after ten minutes.\n"))
	cycle("an edit", 1)
	cycle("unchanged after the edit", 0)
	mem.Remove("ops/deploys/friday.md")
	cycle("a removal", 1)
	cycle("unchanged after the removal", 0)

	// An edit that keeps the file's size and time is seen when the index,
	// lost, has the file read again: the catalog learns its new stamp.
	fi, _ := mem.Stat("ops/pager/escalation.md")
	at := *now
	*now = fi.ModTime
	mem.WriteFile("ops/pager/escalation.md", []byte("---\ntitle: Escalation\n---\n\n## Narrative\nPage the secondary after six minutes.\n"))
	*now = at
	for p := range mem.Files() {
		if strings.HasPrefix(p, IndexDir+"/") {
			mem.Remove(p)
		}
	}
	cycle("an edit found through the index", 1)
	e, _ := openEngine(t, mem, clock, Options{})
	defer e.Close()
	if r, _ := e.Search(api.SearchParams{Query: "six minutes"}); len(r.Results) != 1 {
		t.Errorf("the edit is not found: %+v", r.Results)
	}
}

// Two engines on one root each save what changed since the persisted
// catalog and index they loaded (the delta of each): the last save wins,
// and an open after both reads from the tree only the files written since
// the last listing (the other engine's, and its own, whose time a write
// does not learn), none of the others; it answers from both engines'
// writes and writes them down: the open after that reads nothing.
func TestCatalogDeltasOfTwoEngines(t *testing.T) {
	mem, now := catalogTree(t)
	clock := &clockVar{day0.Add(time.Minute)}
	*now += 10_000
	e, _ := openEngine(t, mem, clock, Options{})
	e.Close()
	*now += 10_000

	add := func(e *Engine, title, text string) string {
		t.Helper()
		res := e.Curate(api.CurateParams{Operations: []api.Operation{{Type: api.OpAdd, Path: "ops/notes", Title: title,
			Content: api.Content{Narrative: &api.Narrative{Text: text}}, Reason: "test"}}})
		if res.Summary.Added != 1 {
			t.Fatalf("curate: %+v", res)
		}
		return res.Applied[0].Path
	}
	a, _ := openEngine(t, mem, clock, Options{})
	b, _ := openEngine(t, mem, clock, Options{})
	add(a, "Kettle", "The kettle is in the blue cupboard.")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat(api.CatalogDeltaFile); err != nil {
		t.Fatalf("a close after one write wrote no delta: %v", err)
	}
	*now += 10_000
	add(b, "Ladder", "The ladder hangs in the garage.")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	*now += 10_000

	fs := &treeReads{FS: mem}
	c, res := openEngine(t, fs, clock, Options{})
	written := []string{"ops/notes/context.md", "ops/notes/kettle.md", "ops/notes/ladder.md"}
	if !reflect.DeepEqual(fs.paths, written) || res.Entries != 5 {
		t.Errorf("the open after both saves read %v, %d entries; want %v read, 5 entries", fs.paths, res.Entries, written)
	}
	for q, want := range map[string]string{"where is the kettle": "blue cupboard", "where is the ladder": "garage"} {
		if r, _ := c.Query(api.SearchParams{Query: q}); !strings.Contains(r.Answer, want) {
			t.Errorf("%s: %q", q, r.Answer)
		}
	}
	c.Close()
	*now += 10_000
	fs.paths = nil
	d, res := openEngine(t, fs, clock, Options{})
	defer d.Close()
	if len(fs.paths) != 0 || res.Index.Reused != 7 {
		t.Errorf("the next open read %v: %+v", fs.paths, res.Index)
	}
}
