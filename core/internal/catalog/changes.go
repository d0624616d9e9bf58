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
	for _, p := range c.Paths() {
		if folder != "" && !strings.HasPrefix(p, folder+"/") {
			continue
		}
		r := api.RecentEntry{Path: p, Changed: c.Changed(p), ChangedFrom: api.ChangedFrontMatter}
		if r.Changed.IsZero() {
			ms, ok := c.ModTime(p)
			if !ok {
				st, err := stat(p)
				if err != nil || st.ModTime == 0 {
					continue // gone since the catalog read it, or no time is known: never recent
				}
				ms = st.ModTime
			}
			r.Changed, r.ChangedFrom = time.UnixMilli(ms).UTC(), api.ChangedFile
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b api.RecentEntry) int {
		return cmp.Or(b.Changed.Compare(a.Changed), strings.Compare(a.Path, b.Path))
	})
	return out
}
