package api

import (
	"math"
	"strings"
	"time"
)

// Filters narrow a search or a query to some entries and choose the order
// of its results (docs/ABI.md §4.3). The zero value keeps everything, by
// relevance.
type Filters struct {
	// Domain keeps the files of one domain (the first folder).
	Domain string `json:"domain,omitempty"`
	// Topic keeps the files of one topic (the second folder): its name,
	// or domain/topic.
	Topic string `json:"topic,omitempty"`
	// Tags keeps the entries carrying every one of them (case-insensitive).
	Tags []string `json:"tags,omitempty"`
	// Since and Until keep the entries whose updatedAt (else createdAt) is
	// within them, each a span back from now (7d), a date or an RFC 3339
	// time (ParseSince); a date Until keeps its whole day.
	Since string `json:"since,omitempty"`
	Until string `json:"until,omitempty"`
	// Maturity keeps the entries at one of these tiers as of the call.
	Maturity []Maturity `json:"maturity,omitempty"`
	// MinImportance keeps the entries whose importance as of the call is
	// at least this (0 to 100).
	MinImportance float64 `json:"minImportance,omitempty"`
	// Sort orders the results: SortRelevance (the default), SortRecent or
	// SortImportance.
	Sort string `json:"sort,omitempty"`
	// Archived includes the entries under ArchiveFolder, which are left
	// out by default.
	Archived bool `json:"archived,omitempty"`
}

// The orders of Filters.Sort.
const (
	SortRelevance  = "relevance"
	SortRecent     = "recent"
	SortImportance = "importance"
)

// Scope is Filters checked and resolved as of an instant.
type Scope struct {
	Domain, Topic string
	Tags          []string
	// Since and Until bound the entries' dates, inclusive; zero is open.
	Since, Until  time.Time
	Maturity      []Maturity
	MinImportance float64
	Sort          string // SortRelevance, SortRecent or SortImportance
	// Archived includes what is under ArchiveFolder.
	Archived bool
}

// Lifecycle reports whether s filters by lifecycle signals, which change
// with use rather than with the files.
func (s Scope) Lifecycle() bool { return len(s.Maturity) > 0 || s.MinImportance > 0 }

// IsZero reports whether s keeps everything by relevance.
func (s Scope) IsZero() bool {
	return s.Domain == "" && s.Topic == "" && len(s.Tags) == 0 && s.Since.IsZero() && s.Until.IsZero() &&
		!s.Lifecycle() && s.Sort == SortRelevance
}

// Resolve checks f and resolves its times as of now. A bad value is an
// *Error with CodeInvalidParams.
func (f Filters) Resolve(now time.Time) (Scope, error) {
	s := Scope{Maturity: f.Maturity, MinImportance: f.MinImportance, Sort: f.Sort, Archived: f.Archived}
	folder := func(what, v string) (string, error) {
		v = strings.TrimSpace(v)
		if v == "" {
			return "", nil
		}
		c, err := CleanPath(v)
		if err != nil {
			return "", Errorf(CodeInvalidParams, "%s %q: %v", what, v, err)
		}
		return c, nil
	}
	var err error
	if s.Domain, err = folder("domain", f.Domain); err != nil {
		return Scope{}, err
	}
	if strings.Contains(s.Domain, "/") {
		return Scope{}, Errorf(CodeInvalidParams, "domain %q: a domain is one folder; a folder below it is a topic (topic %q)", f.Domain, s.Domain)
	}
	if s.Topic, err = folder("topic", f.Topic); err != nil {
		return Scope{}, err
	}
	if d, t, ok := strings.Cut(s.Topic, "/"); ok {
		if strings.Contains(t, "/") {
			return Scope{}, Errorf(CodeInvalidParams, "topic %q: want a topic's name or domain/topic", f.Topic)
		}
		if s.Domain != "" && s.Domain != d {
			return Scope{}, Errorf(CodeInvalidParams, "topic %q is not in domain %q", f.Topic, s.Domain)
		}
		s.Domain, s.Topic = d, t
	}
	for _, t := range f.Tags {
		if t = strings.TrimSpace(t); t == "" {
			return Scope{}, Errorf(CodeInvalidParams, "tags: an empty tag")
		}
		s.Tags = append(s.Tags, t)
	}
	if strings.TrimSpace(f.Since) != "" {
		if s.Since, err = ParseSince(f.Since, now); err != nil {
			return Scope{}, err
		}
	}
	if u := strings.TrimSpace(f.Until); u != "" {
		if s.Until, err = ParseSince(u, now); err != nil {
			return Scope{}, Errorf(CodeInvalidParams, "until %q: want a span back from now (30m, 12h, 7d, 2w) or a date (2026-03-01) or an RFC 3339 time", u)
		}
		if _, err := time.Parse(time.DateOnly, u); err == nil {
			// A day given as the end keeps that day whole.
			s.Until = s.Until.AddDate(0, 0, 1).Add(-time.Nanosecond)
		}
	}
	if !s.Since.IsZero() && !s.Until.IsZero() && s.Until.Before(s.Since) {
		return Scope{}, Errorf(CodeInvalidParams, "until %s is before since %s: nothing could match", s.Until.Format(time.RFC3339), s.Since.Format(time.RFC3339))
	}
	for _, m := range f.Maturity {
		if !m.Valid() {
			return Scope{}, Errorf(CodeInvalidParams, "maturity %q: want draft, validated or core", m)
		}
	}
	if math.IsNaN(f.MinImportance) || f.MinImportance < 0 || f.MinImportance > MaxImportance {
		return Scope{}, Errorf(CodeInvalidParams, "minImportance %g: want 0 to %g", f.MinImportance, float64(MaxImportance))
	}
	switch f.Sort {
	case "":
		s.Sort = SortRelevance
	case SortRelevance, SortRecent, SortImportance:
	default:
		return Scope{}, Errorf(CodeInvalidParams, "sort %q: want relevance, recent or importance", f.Sort)
	}
	return s, nil
}
