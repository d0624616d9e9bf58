package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

func dated(title, updated string) string {
	return "---\ntitle: " + title + "\ncreatedAt: 2026-01-01T00:00:00Z\nupdatedAt: " + updated + "\n---\n\n## Narrative\n" + title + ".\n"
}

// recentEngine opens a tree of dated entries and one undated note, with
// the engine's clock at day0 and the files' at noon the day before.
func recentEngine(t *testing.T) (*Engine, *host.MemFS) {
	t.Helper()
	fs := host.NewMemFS()
	fileTime := day0.Add(-12 * time.Hour).UnixMilli()
	fs.SetNow(func() int64 { return fileTime })
	for p, s := range map[string]string{
		"eng/billing/old.md":    dated("Old", "2026-01-05T00:00:00Z"),
		"eng/billing/newer.md":  dated("Newer", "2026-02-27T00:00:00Z"),
		"eng/auth/created.md":   "---\ntitle: Created only\ncreatedAt: 2026-02-25T00:00:00Z\nsummary: no update yet\n---\n",
		"ops/pager/rota.md":     dated("Rota", "2026-02-28T09:00:00Z"),
		"notes/misc/Undated.md": "# Undated\n\nA note with no front matter.\n",
	} {
		if err := fs.WriteFile(p, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	e, _ := openEngine(t, fs, &clock{now: day0}, Options{})
	t.Cleanup(func() { e.Close() })
	return e, fs
}

func TestRecent(t *testing.T) {
	e, _ := recentEngine(t)
	paths := func(r api.RecentResult) []string {
		var out []string
		for _, x := range r.Entries {
			out = append(out, x.Path)
		}
		return out
	}
	all, err := e.Recent(api.RecentParams{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"notes/misc/Undated.md", "ops/pager/rota.md", "eng/billing/newer.md", "eng/auth/created.md", "eng/billing/old.md"}
	if got := paths(all); !slices.Equal(got, want) || all.Total != 5 || all.Since != nil {
		t.Fatalf("recent = %v (total %d), want %v", got, all.Total, want)
	}
	if u := all.Entries[0]; u.ChangedFrom != api.ChangedFile || !u.Changed.Equal(day0.Add(-12*time.Hour)) || u.Title != "Undated" {
		t.Errorf("undated note: %+v", u)
	}
	if c := all.Entries[3]; c.ChangedFrom != api.ChangedFrontMatter || !c.Changed.Equal(time.Date(2026, 2, 25, 0, 0, 0, 0, time.UTC)) || c.Summary != "no update yet" {
		t.Errorf("created-only entry: %+v", c)
	}
	week, err := e.Recent(api.RecentParams{Since: "5d", Domain: "eng", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(week); !slices.Equal(got, []string{"eng/billing/newer.md"}) || week.Total != 2 || !week.Since.Equal(day0.AddDate(0, 0, -5)) {
		t.Errorf("since 5d in eng, limit 1 = %v (total %d, since %v)", got, week.Total, week.Since)
	}
	byDate, err := e.Recent(api.RecentParams{Since: "2026-02-27", Domain: "eng/billing"})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(byDate); !slices.Equal(got, []string{"eng/billing/newer.md"}) {
		t.Errorf("since a date = %v", got)
	}
	for _, bad := range []api.RecentParams{{Since: "soon"}, {Since: "-3d"}, {Limit: 1000}, {Domain: "../x"}} {
		if _, err := e.Recent(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestStatus(t *testing.T) {
	e, fs := recentEngine(t)
	st, err := e.Status(api.StatusParams{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 5 || st.Domains["eng"] != 3 || !st.Healthy || st.Recent != 4 || !st.LastChanged.Equal(day0.Add(-12*time.Hour)) ||
		st.Index.Indexed != 5+st.Contexts || st.Changed.Added+st.Changed.Updated+st.Changed.Removed != 0 {
		t.Fatalf("status = %+v", st)
	}
	// A file added and a broken one written behind the session's back.
	if err := fs.WriteFile("ops/pager/handover.md", []byte(dated("Handover", "2026-02-28T10:00:00Z"))); err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile("ops/pager/broken.md", []byte("---\ntitle: [unclosed\n---\n")); err != nil {
		t.Fatal(err)
	}
	// Without the scan the counts are the session's: the new files are not
	// taken in, and Changed says nothing was scanned.
	st, err = e.Status(api.StatusParams{NoScan: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Changed.Scanned || st.Changed.Added != 0 || st.Entries != 5 || st.Recent != 4 {
		t.Errorf("status without a scan after outside changes = %+v", st)
	}
	st, err = e.Status(api.StatusParams{})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Changed.Scanned || st.Changed.Added != 2 || st.Entries != 6 || st.Recent != 5 || st.Unflushed == 0 {
		t.Errorf("status after outside changes = %+v", st)
	}
}
