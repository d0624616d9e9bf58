package retrieve

import (
	"slices"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/search"
)

// Scope resolves a search's filters and sort as of now (docs/ABI.md §4.3)
// into what the index runs: what the files say (domain, topic, tags,
// dates) is filtered by the index's own fields; the lifecycle filters
// (maturity, importance) are computed here from the signals as of now,
// since they change with use, not with the files, and the index keeps the
// paths that pass them. The sort's key is read the same way: an entry's
// date from the catalog, its importance from the signals as of now.
func (rv *Retriever) Scope(f api.Filters) (search.Scope, error) {
	now := rv.clock.Now()
	s, err := f.Resolve(now)
	if err != nil {
		return search.Scope{}, err
	}
	sc := search.Scope{Filter: search.Filter{Domain: s.Domain, Topic: s.Topic, Tags: s.Tags, Since: s.Since, Until: s.Until}}
	// The archive is left out unless asked for, and only filtered when
	// the tree has one: a tree without it searches unfiltered.
	if !s.Archived && s.Domain != api.ArchiveFolder {
		held, err := rv.index.HoldsDomain(api.ArchiveFolder)
		if err != nil {
			return search.Scope{}, err
		}
		if held {
			sc.Without = api.ArchiveFolder
		}
	}
	p := rv.signals.Model()
	if s.Lifecycle() {
		sc.Keep = map[string]bool{}
		for _, path := range rv.catalog.Paths() {
			sig := rv.signals.Of(path).At(p, now)
			if sig.Importance >= s.MinImportance && (len(s.Maturity) == 0 || slices.Contains(s.Maturity, sig.Maturity)) {
				sc.Keep[path] = true
			}
		}
	}
	switch s.Sort {
	case api.SortRecent:
		sc.By = func(path string) (float64, bool) {
			t := rv.catalog.Changed(path) // without reading the entry
			return float64(t.Unix()), !t.IsZero()
		}
	case api.SortImportance:
		sc.By = func(path string) (float64, bool) {
			if !rv.catalog.Has(path) {
				return 0, false // a context file has no lifecycle
			}
			return rv.signals.Of(path).At(p, now).Importance, true
		}
	}
	return sc, nil
}

// admits reports whether sc keeps the file at path, for a file found
// outside the index (nearest by meaning).
func (rv *Retriever) admits(sc search.Scope, path string) bool {
	if sc.Filter.IsZero() {
		return true
	}
	var (
		tags []string
		date time.Time
	)
	if en, ok := rv.catalog.Get(path); ok {
		tags, date = en.Tags, en.Changed()
	}
	return sc.Admits(path, tags, date)
}
