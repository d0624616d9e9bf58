package api

import (
	"strconv"
	"strings"
	"time"
)

// RecentParams are the parameters of "recent" (docs/ABI.md §4.13).
type RecentParams struct {
	// Since keeps the entries changed at or after a time: a span back from
	// now ("30m", "12h", "7d", "2w") or a date or time ("2026-03-01",
	// RFC 3339). Empty keeps every entry.
	Since string `json:"since,omitempty"`
	// Domain keeps the entries under one folder: a domain, or any folder
	// below it ("engineering/billing").
	Domain string `json:"domain,omitempty"`
	// Limit bounds the entries, 1 to MaxLimit; 0 means DefaultRecentLimit.
	Limit int `json:"limit,omitempty"`
	// Archived includes the entries under ArchiveFolder, left out by
	// default (but when Domain names the archive).
	Archived bool `json:"archived,omitempty"`
}

// DefaultRecentLimit is how many entries "recent" returns when no limit is given.
const DefaultRecentLimit = 20

// Sources of a RecentEntry's time.
const (
	ChangedFrontMatter = "frontMatter" // updatedAt, else createdAt
	ChangedFile        = "file"        // the file's modification time: its front matter has no dates
)

// RecentEntry is one entry of a "recent" answer.
type RecentEntry struct {
	Path    string `json:"path"`
	Title   string `json:"title"`
	Summary string `json:"summary,omitempty"`
	// Changed is when the entry last changed, and ChangedFrom what says so
	// (ChangedFrontMatter, ChangedFile).
	Changed     time.Time `json:"changed"`
	ChangedFrom string    `json:"changedFrom"`
}

// RecentResult is the answer of "recent": the entries changed since the
// time asked, newest first (equal times by path), at most the limit.
type RecentResult struct {
	Entries []RecentEntry `json:"entries"`
	// Total counts every entry that matched, before the limit.
	Total int `json:"total"`
	// Since is the time Since named, when given.
	Since  *time.Time `json:"since,omitempty"`
	TookMs float64    `json:"tookMs"`
}

// ParseSince reads a "since" value (RecentParams.Since) as of now: a
// whole number and a unit, m (minutes), h (hours), d (days) or w (weeks),
// back from now; or a date (2006-01-02, midnight UTC) or an RFC 3339
// time. Anything else is an *Error with CodeInvalidParams.
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	units := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if len(s) >= 2 {
		if unit, ok := units[s[len(s)-1]]; ok {
			// Go's time.ParseDuration has no days or weeks, which is how
			// people say how far back to look.
			if n, err := strconv.Atoi(s[:len(s)-1]); err == nil && n >= 0 && n <= 100*365 {
				return now.Add(-time.Duration(n) * unit).UTC(), nil
			}
		}
	}
	return time.Time{}, Errorf(CodeInvalidParams, "since %q: want a span back from now (30m, 12h, 7d, 2w) or a date (2026-03-01) or an RFC 3339 time", s)
}

// Check returns p's limit: p.Limit, or DefaultRecentLimit when it is 0;
// a limit outside 1 to MaxLimit is an *Error with CodeInvalidParams.
func (p RecentParams) Check() (int, error) {
	switch {
	case p.Limit == 0:
		return DefaultRecentLimit, nil
	case p.Limit < 0 || p.Limit > MaxLimit:
		return 0, Errorf(CodeInvalidParams, "limit %d: want 1 to %d", p.Limit, MaxLimit)
	}
	return p.Limit, nil
}

// StatusParams are the parameters of "status" (docs/ABI.md §4.14).
type StatusParams struct {
	// NoScan leaves out the scan of the tree that "status" starts with. For
	// a caller that has just opened the session, whose open read the tree:
	// the CLI, which opens a session for each command. Changed then says
	// that nothing was scanned.
	NoScan bool `json:"noScan,omitempty"`
}

// StatusResult is the answer of "status" (docs/ABI.md §4.14): the tree at
// a glance.
type StatusResult struct {
	Entries  int              `json:"entries"`
	Contexts int              `json:"contexts"`
	Domains  map[string]int   `json:"domains"`
	Maturity map[Maturity]int `json:"maturity"`
	// Changed is what a scan of the tree found changed on disk since this
	// session last read it (and has now taken in, as "refresh" does).
	Changed RefreshResult `json:"changed"`
	// Index is how the session's open brought the persisted index in step
	// with the tree: what changed since the index was last written.
	Index IndexStats `json:"index"`
	// Unflushed counts the index changes held in memory, not yet written
	// (flush and close write them).
	Unflushed int `json:"unflushed"`
	// Recent counts the entries changed in the last seven days, and
	// LastChanged is the newest change (RecentEntry.Changed).
	Recent      int        `json:"recent"`
	LastChanged *time.Time `json:"lastChanged,omitempty"`
	// Upkeep counts the upkeep suggestions "tidy" would make that need no
	// entry read: stale entries to archive and crowded topics (docs/ABI.md
	// §4.17). Near-duplicates and oversized entries need every entry read,
	// which "tidy" does and "status" does not.
	Upkeep int `json:"upkeep"`
	// Warnings are the files the engine could not use and what else the
	// open reported; Healthy is true when there are none.
	Warnings []Warning `json:"warnings"`
	Healthy  bool      `json:"healthy"`
}
