package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// readCounter counts the files read.
type readCounter struct {
	host.FS
	reads int
}

func (c *readCounter) ReadFile(p string) ([]byte, error) {
	c.reads++
	return c.FS.ReadFile(p)
}

func entryText(title, narrative string) string {
	return "---\ntitle: " + title + "\n---\n\n## Narrative\n" + narrative + "\n"
}

// A long-lived session answers from what is on disk once the host has
// told it what changed (refresh with paths, from a watcher) or asked it
// to look (refresh without paths, a stamp scan): edits, deletions and new
// files made outside it are seen, the cached answer of a changed entry is
// not served again, and a scan of an unchanged tree reads no file.
func TestRefreshSeesOutsideChanges(t *testing.T) {
	mem := host.NewMemFS()
	tick := int64(1_000)
	mem.SetNow(func() int64 { tick++; return tick })
	mem.WriteFile("ops/pager/rotation.md", []byte(entryText("Pager rotation", "The pager rotates weekly on Mondays.")))
	mem.WriteFile("ops/pager/escalation.md", []byte(entryText("Escalation", "Page the secondary after fifteen minutes.")))
	fs := &readCounter{FS: mem}
	e, _ := openEngine(t, fs, host.FixedClock(day0), Options{})
	defer e.Close()

	q := api.SearchParams{Query: "when does the pager rotate"}
	if r, err := e.Query(q); err != nil || len(r.Results) == 0 || r.Results[0].Path != "ops/pager/rotation.md" {
		t.Fatalf("first query: %+v, %v", r, err)
	}
	// An editor changes the rotation; until the host says so the session
	// knows nothing of it.
	mem.WriteFile("ops/pager/rotation.md", []byte(entryText("Pager rotation", "The pager rotates every second Thursday.")))
	res, err := e.Refresh(api.RefreshParams{Paths: []string{"ops/pager/rotation.md", ".arbor/state.json", ".git/index"}})
	if err != nil || res.Updated != 1 || res.Checked != 1 || res.Scanned || !slices.Equal(res.Paths, []string{"ops/pager/rotation.md"}) {
		t.Fatalf("refresh of the edited file: %+v, %v", res, err)
	}
	r, err := e.Query(q)
	if err != nil || r.Tier == 0 || !strings.Contains(r.Answer, "Thursday") {
		t.Fatalf("query after the edit (tier %d): %q, %v", r.Tier, r.Answer, err)
	}
	if s, _ := e.Search(api.SearchParams{Query: "Mondays"}); len(s.Results) != 0 {
		t.Errorf("the old text is still indexed: %+v", s.Results)
	}

	// A deletion, a new file and a new folder, found by a scan.
	mem.Remove("ops/pager/escalation.md")
	mem.WriteFile("ops/oncall/handover.md", []byte(entryText("Handover", "Handover happens at nine in the morning.")))
	res, err = e.Refresh(api.RefreshParams{})
	if err != nil || !res.Scanned || res.Added != 1 || res.Removed != 1 || res.Updated != 0 ||
		!slices.Equal(res.Paths, []string{"ops/oncall/handover.md", "ops/pager/escalation.md"}) {
		t.Fatalf("scan: %+v, %v", res, err)
	}
	if _, err := e.Read(api.ReadParams{Path: "ops/pager/escalation.md"}); err == nil {
		t.Error("the deleted entry is still read")
	}
	if s, _ := e.Search(api.SearchParams{Query: "handover nine"}); len(s.Results) != 1 {
		t.Errorf("the new entry is not found: %+v", s.Results)
	}
	if st := e.Stats(); st.Entries != 2 {
		t.Errorf("stats after the scan: %d entries", st.Entries)
	}

	// Nothing changed: the scan lists folders and reads no file.
	fs.reads = 0
	if res, err = e.Refresh(api.RefreshParams{}); err != nil || res.Checked != 0 || fs.reads != 0 || res.Paths != nil {
		t.Fatalf("scan of an unchanged tree: %+v, %d reads, %v", res, fs.reads, err)
	}

	// A folder removed as a whole, reported by its path.
	mem.Remove("ops/oncall/handover.md")
	mem.Remove("ops/oncall")
	if res, err = e.Refresh(api.RefreshParams{Paths: []string{"ops/oncall"}}); err != nil || res.Removed != 1 || !slices.Equal(res.Paths, []string{"ops/oncall/handover.md"}) {
		t.Fatalf("refresh of a removed folder: %+v, %v", res, err)
	}
	if _, err := e.Refresh(api.RefreshParams{Paths: []string{"../etc"}}); err == nil {
		t.Error("a path leaving the root is refused")
	}
}

// refusing is a storage that refuses (host.ErrDenied) every read, listing
// and stat of the paths at or below one path, as a host refuses a path
// naming a symbolic link of the tree, or leading out of the root.
type refusing struct {
	host.FS
	at string
}

func (r *refusing) refused(p string) bool {
	return r.at != "" && (p == r.at || strings.HasPrefix(p, r.at+"/"))
}

func (r *refusing) ReadFile(p string) ([]byte, error) {
	if r.refused(p) {
		return nil, host.ErrDenied
	}
	return r.FS.ReadFile(p)
}

func (r *refusing) Stat(p string) (host.DirEntry, error) {
	if r.refused(p) {
		return host.DirEntry{}, host.ErrDenied
	}
	return r.FS.Stat(p)
}

func (r *refusing) ReadDir(p string) ([]host.DirEntry, error) {
	if r.refused(p) {
		return nil, host.ErrDenied
	}
	return r.FS.ReadDir(p)
}

// A path the host refuses to read is no part of the tree: a watcher
// reports a symbolic link made in the tree (which hosts do not follow),
// or a folder replaced by one, and refreshing that path forgets what the
// catalog held there, where it failed the whole refresh, and with it the
// other paths reported.
func TestRefreshForgetsAPathTheHostRefuses(t *testing.T) {
	mem := host.NewMemFS()
	mem.WriteFile("ops/alias/deploy.md", []byte(entryText("Deploy", "Deploys use the zebracorn pipeline.")))
	mem.WriteFile("eng/deploy.md", []byte(entryText("Deploy", "Deploys use the zebracorn pipeline.")))
	fs := &refusing{FS: mem}
	e, _ := openEngine(t, fs, host.FixedClock(day0), Options{})
	defer e.Close()
	if s, _ := e.Search(api.SearchParams{Query: "zebracorn"}); len(s.Results) != 2 {
		t.Fatalf("before: %+v", s.Results)
	}
	// ops/alias becomes a link to eng; eng/deploy.md is edited.
	fs.at = "ops/alias"
	mem.WriteFile("eng/deploy.md", []byte(entryText("Deploy", "Deploys use the okapi pipeline.")))
	res, err := e.Refresh(api.RefreshParams{Paths: []string{"ops/alias", "eng/deploy.md"}})
	if err != nil || res.Removed != 1 || res.Updated != 1 || res.Checked != 1 || !slices.Equal(res.Paths, []string{"eng/deploy.md", "ops/alias/deploy.md"}) {
		t.Fatalf("refresh: %+v, %v", res, err)
	}
	if s, _ := e.Search(api.SearchParams{Query: "zebracorn"}); len(s.Results) != 0 {
		t.Errorf("the old text is still found: %+v", s.Results)
	}
	// A path the host refuses that the catalog never held changes nothing.
	fs.at = "misc/link.md"
	if res, err := e.Refresh(api.RefreshParams{Paths: []string{"misc/link.md"}}); err != nil || res.Checked != 0 || len(res.Paths) != 0 {
		t.Fatalf("refresh of a refused path never read: %+v, %v", res, err)
	}
}

// folderReads reads a folder as the hosts do: an invalid path (RootFS
// and nodeFs say "is a directory"), where MemFS finds no file.
type folderReads struct{ host.FS }

func (f folderReads) ReadFile(p string) ([]byte, error) {
	if st, err := f.FS.Stat(p); err == nil && st.IsDir {
		return nil, fmt.Errorf("read %s: is a directory: %w", p, host.ErrInvalid)
	}
	return f.FS.ReadFile(p)
}

// An entry replaced by a folder of the same name (a person makes
// "rotation.md/" to hold the parts of the note, a checkout brings one) is
// gone: a long-lived engine forgot nothing of it, answered from its old
// text, and every later scan failed reading it.
func TestRefreshForgetsAFileAFolderReplaced(t *testing.T) {
	mem := host.NewMemFS()
	mem.WriteFile("ops/pager/rotation.md", []byte(entryText("Pager rotation", "The pager rotates on Mondays.")))
	e, _ := openEngine(t, folderReads{mem}, host.FixedClock(day0), Options{})
	defer e.Close()
	mem.Remove("ops/pager/rotation.md")
	mem.WriteFile("ops/pager/rotation.md/inner.md", []byte(entryText("Inner", "The zebracorn part.")))
	for _, paths := range [][]string{{"ops/pager/rotation.md"}, nil} {
		if _, err := e.Refresh(api.RefreshParams{Paths: paths}); err != nil {
			t.Fatalf("refresh %q: %v", paths, err)
		}
		if s, _ := e.Search(api.SearchParams{Query: "Mondays"}); len(s.Results) != 0 {
			t.Errorf("refresh %q: the file's text is still found: %+v", paths, s.Results)
		}
		if s, _ := e.Search(api.SearchParams{Query: "zebracorn"}); len(s.Results) != 1 {
			t.Errorf("refresh %q: the folder's entry is not found: %+v", paths, s.Results)
		}
	}
	// And back: the folder goes, a file takes its name.
	mem.Remove("ops/pager/rotation.md/inner.md")
	mem.Remove("ops/pager/rotation.md")
	mem.WriteFile("ops/pager/rotation.md", []byte(entryText("Pager rotation", "The pager rotates on Fridays.")))
	if _, err := e.Refresh(api.RefreshParams{Paths: []string{"ops/pager/rotation.md"}}); err != nil {
		t.Fatal(err)
	}
	if s, _ := e.Search(api.SearchParams{Query: "zebracorn"}); len(s.Results) != 0 {
		t.Errorf("the folder's entry is still found: %+v", s.Results)
	}
	if s, _ := e.Search(api.SearchParams{Query: "Fridays"}); len(s.Results) != 1 {
		t.Errorf("the file is not found: %+v", s.Results)
	}
}

// A file a watcher reports is read again, whatever its size and time say:
// a tool that restores a time (cp -p, rsync -a, tar x, touch -r) can put
// other bytes of the same size under the time the catalog noted, and a
// long-lived engine that heard the change answered the old text for good.
func TestRefreshReadsAReportedFileWhoseSizeAndTimeAreUnchanged(t *testing.T) {
	mem, now := catalogTree(t)
	*now += 10_000
	e, _ := openEngine(t, mem, host.FixedClock(day0), Options{})
	defer e.Close()
	const p = "ops/pager/escalation.md"
	fi, _ := mem.Stat(p)
	at := *now
	*now = fi.ModTime // the edit keeps the time, as touch -r does
	mem.WriteFile(p, []byte("---\ntitle: Escalation\n---\n\n## Narrative\nPage the secondary after sixteen minutes. See [[rotation]].\n"[:fi.Size]))
	*now = at
	if after, _ := mem.Stat(p); after != fi {
		t.Fatalf("the edit changed the listing: %+v, was %+v", after, fi)
	}
	res, err := e.Refresh(api.RefreshParams{Paths: []string{p}})
	if err != nil || res.Updated != 1 || !slices.Equal(res.Paths, []string{p}) {
		t.Fatalf("refresh of the edited file: %+v, %v", res, err)
	}
	if s, _ := e.Search(api.SearchParams{Query: "sixteen"}); len(s.Results) != 1 {
		t.Errorf("the edit is not found: %+v", s.Results)
	}
	if s, _ := e.Search(api.SearchParams{Query: "fifteen"}); len(s.Results) != 0 {
		t.Errorf("the old text is still found: %+v", s.Results)
	}
}

// pathReads counts the reads of one path.
type pathReads struct {
	host.FS
	path  string
	reads int
}

func (c *pathReads) ReadFile(p string) ([]byte, error) {
	if p == c.path {
		c.reads++
	}
	return c.FS.ReadFile(p)
}

// A note that grows past the size limit (a log appended to, a dump saved
// over it) is dropped without being read: a long-lived engine read all of
// it, gigabytes, before finding it too big (a 1.5 GB file took 43 s and
// 3 GB of memory in arbor serve).
func TestRefreshDropsAFileGrownPastTheLimitUnread(t *testing.T) {
	mem := host.NewMemFS()
	const p = "ops/pager/rotation.md"
	mem.WriteFile(p, []byte(entryText("Pager rotation", "The pager rotates on Mondays.")))
	fs := &pathReads{FS: mem, path: p}
	e, _ := openEngine(t, fs, host.FixedClock(day0), Options{MaxFileBytes: 200})
	defer e.Close()
	mem.WriteFile(p, []byte(entryText("Pager rotation", "The pager rotates on Mondays."+strings.Repeat(" And on.", 30))))
	for _, paths := range [][]string{{p}, nil} {
		fs.reads = 0
		res, err := e.Refresh(api.RefreshParams{Paths: paths})
		if err != nil || fs.reads != 0 {
			t.Fatalf("refresh %q: %+v, %v, the file read %d times", paths, res, err, fs.reads)
		}
		if s, _ := e.Search(api.SearchParams{Query: "Mondays"}); len(s.Results) != 0 {
			t.Errorf("refresh %q: the file over the limit is still found: %+v", paths, s.Results)
		}
		mem.WriteFile(p, []byte(entryText("Pager rotation", "The pager rotates on Mondays.")))
		if _, err := e.Refresh(api.RefreshParams{Paths: []string{p}}); err != nil {
			t.Fatal(err)
		}
		mem.WriteFile(p, []byte(entryText("Pager rotation", "The pager rotates on Mondays."+strings.Repeat(" And on.", 30))))
	}
}
