package engine

import (
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tidy"
)

// recentDays is the span "status" counts recent changes over.
const recentDays = 7

// Recent lists the entries changed since a time, newest first (docs/ABI.md
// §4.13). An entry's time is the one its ranking's recency reads
// (updatedAt, else createdAt: tree.Entry.Changed), or, for a note whose
// front matter has no dates, its file's modification time.
func (e *Engine) Recent(p api.RecentParams) (api.RecentResult, error) {
	start := time.Now()
	limit, err := p.Check()
	if err != nil {
		return api.RecentResult{}, err
	}
	res := api.RecentResult{Entries: []api.RecentEntry{}}
	var since time.Time
	if strings.TrimSpace(p.Since) != "" {
		if since, err = api.ParseSince(p.Since, e.clock.Now()); err != nil {
			return api.RecentResult{}, err
		}
		res.Since = &since
	}
	folder := ""
	if strings.TrimSpace(p.Domain) != "" {
		if folder, err = api.CleanPath(strings.TrimSpace(p.Domain)); err != nil {
			return api.RecentResult{}, err
		}
	}
	all := e.catalog.Changes(folder, e.fs.Stat)
	archived := p.Archived || api.IsArchived(folder)
	for _, r := range all {
		if !r.Changed.Before(since) && (archived || !api.IsArchived(r.Path)) {
			res.Entries = append(res.Entries, r)
		}
	}
	res.Total = len(res.Entries)
	res.Entries = res.Entries[:min(limit, len(res.Entries))]
	for i := range res.Entries {
		r := &res.Entries[i]
		r.Title, _ = e.catalog.Title(r.Path)
		if en, ok := e.catalog.Get(r.Path); ok {
			r.Summary = en.Summary
		}
	}
	res.TookMs = api.TookMs(start)
	return res, nil
}

// Status is the tree at a glance (docs/ABI.md §4.14): it first scans the
// tree for what changed on disk since the session read it, as "refresh"
// does, so that the counts are the files' own, unless p.NoScan says that
// the session's open has just read it.
func (e *Engine) Status(p api.StatusParams) (api.StatusResult, error) {
	var changed api.RefreshResult
	if !p.NoScan {
		var err error
		if changed, err = e.Refresh(api.RefreshParams{}); err != nil {
			return api.StatusResult{}, err
		}
	}
	st := e.counts()
	res := api.StatusResult{
		Entries: st.Entries, Contexts: st.Contexts, Domains: st.Domains, Maturity: st.Maturity,
		Changed: changed, Index: e.synced, Unflushed: e.index.Unflushed(),
		Warnings: st.Warnings, Healthy: len(st.Warnings) == 0,
	}
	recent, last := e.catalog.ChangedSince("", e.fs.Stat, e.clock.Now().AddDate(0, 0, -recentDays))
	res.Recent = recent
	if !last.IsZero() {
		res.LastChanged = &last
	}
	tp, _ := api.TidyParams{}.Check(e.signals.Model().InitialImportance) // the defaults check
	res.Upkeep = tidy.Pending(e.tidyTree(), tp)
	return res, nil
}
