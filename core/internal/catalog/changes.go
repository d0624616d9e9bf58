package catalog

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// Changes returns every entry below folder ("" for all) with when it last
// changed, newest first, equal times by path: the time its ranking's
// recency reads (Changed), or, for a note whose front matter has no dates,
// its file's modification time, which only entries without a listing the
// catalog kept ask stat for. An entry with no time at all (no dates, a
// storage that keeps no file times) is left out.
func (c *Catalog) Changes(folder string, stat func(p string) (host.DirEntry, error)) []api.RecentEntry {
	var out []api.RecentEntry
	for p := range c.Unsorted() {
		if r, ok := c.change(folder, p, stat); ok {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b api.RecentEntry) int {
		return cmp.Or(b.Changed.Compare(a.Changed), strings.Compare(a.Path, b.Path))
	})
	return out
}

// ChangedSince counts the entries below folder that changed at or after
// since, and returns the newest change (zero when no entry has a time), by
// the times of Changes: what a summary needs of Changes without a list of
// every entry sorted.
func (c *Catalog) ChangedSince(folder string, stat func(p string) (host.DirEntry, error), since time.Time) (n int, last time.Time) {
	for p := range c.Unsorted() {
		r, ok := c.change(folder, p, stat)
		if !ok {
			continue
		}
		if !r.Changed.Before(since) {
			n++
		}
		if r.Changed.After(last) {
			last = r.Changed
		}
	}
	return n, last
}

// change is the entry p's line of Changes, when p lies below folder and
// has a time.
func (c *Catalog) change(folder, p string, stat func(p string) (host.DirEntry, error)) (api.RecentEntry, bool) {
	if folder != "" && !strings.HasPrefix(p, folder+"/") {
		return api.RecentEntry{}, false
	}
	r := api.RecentEntry{Path: p, Changed: c.Changed(p), ChangedFrom: api.ChangedFrontMatter}
	if r.Changed.IsZero() {
		ms, ok := c.ModTime(p)
		if !ok {
			st, err := stat(p)
			if err != nil || st.ModTime == 0 {
				return api.RecentEntry{}, false // gone since the catalog read it, or no time is known: never recent
			}
			ms = st.ModTime
		}
		r.Changed, r.ChangedFrom = time.UnixMilli(ms).UTC(), api.ChangedFile
	}
	return r, true
}
