package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

var recentCommand = &command{
	name:    "recent",
	summary: "the entries changed lately, newest first",
	help: "Lists the entries by when they last changed, newest first: updatedAt (else\n" +
		"createdAt) from the front matter, or the file's modification time for a note\n" +
		"without dates. --since keeps what changed within a span (30m, 12h, 7d, 2w) or\n" +
		"since a date (2026-03-01) or an RFC 3339 time; --domain keeps one domain or any\n" +
		"folder below it.",
	example:  "arbor recent --since 7d",
	examples: []string{"arbor recent --domain engineering --limit 5", "arbor recent --since 2026-03-01 --json | jq -r '.entries[].path'"},
	complete: "none",
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		var p api.RecentParams
		fs.StringVar(&p.Since, "since", "", "only what changed since a `SPAN` back (30m, 12h, 7d, 2w) or a date")
		fs.StringVar(&p.Domain, "domain", "", "only entries under the `FOLDER` (a domain, or a folder below one)")
		fs.IntVar(&p.Limit, "limit", api.DefaultRecentLimit, "at most `N` entries (1 to 100)")
		fs.BoolVar(&p.Archived, "archived", false, "include the entries under _archive/ (arbor tidy)")
		return func(a *app, _ []string) error {
			return a.ask("recent", p, func(w io.Writer, raw json.RawMessage) error {
				var res api.RecentResult
				if err := json.Unmarshal(raw, &res); err != nil {
					return err
				}
				printRecent(w, a.p, res)
				return nil
			})
		}
	},
}

func printRecent(w io.Writer, p palette, res api.RecentResult) {
	if len(res.Entries) == 0 {
		fmt.Fprintln(w, "nothing changed")
		return
	}
	t := table{}
	for _, r := range res.Entries {
		when := r.Changed.Format("2006-01-02 15:04")
		if r.ChangedFrom == api.ChangedFile {
			when += " (file)"
		}
		t.add(when, r.Path, r.Title)
	}
	t.write(w, "", func(_, col int, cell string) string {
		switch col {
		case 0:
			return p.dim(cell)
		case 1:
			return p.cyan(cell)
		}
		return cell
	})
	count := plural(len(res.Entries), "entry", "entries")
	if res.Total > len(res.Entries) {
		count = fmt.Sprintf("%d of %d entries", len(res.Entries), res.Total)
	}
	fmt.Fprintf(w, "%s · %s\n", count, ms(res.TookMs))
}

var statusCommand = &command{
	name:    "status",
	summary: "the memory at a glance: counts, what changed, health",
	help: "Opens the tree (a running arbor serve scans it instead, for what changed on\n" +
		"disk since it read it), then prints the entries and context files, the entries\n" +
		"per domain and lifecycle tier, what changed since the index was written (taken\n" +
		"in when the engine opened), index changes not yet written, the entries changed\n" +
		"in the last 7 days, the upkeep suggestions that need no entry read (stale\n" +
		"entries, crowded topics: arbor tidy), and the files the engine could not use\n" +
		"(arbor doctor says more).",
	example:  "arbor status",
	examples: []string{"arbor status --json | jq .healthy"},
	setup: func(*flag.FlagSet) func(*app, []string) error {
		return func(a *app, _ []string) error {
			return a.withEngine(func(eng engine) error {
				// An engine opened for this command has just read the tree;
				// a server's engine scans it for what changed since.
				var params api.StatusParams
				_, params.NoScan = eng.(*runtime.Engine)
				return a.print(eng, "status", params, func(w io.Writer, raw json.RawMessage) error {
					var res api.StatusResult
					if err := json.Unmarshal(raw, &res); err != nil {
						return err
					}
					printStatus(w, a.p, res)
					return nil
				})
			})
		}
	},
}

func printStatus(w io.Writer, p palette, s api.StatusResult) {
	label := func(l string) string { return p.bold(fmt.Sprintf("%-10s", l)) }
	fmt.Fprintf(w, "%s %d · %s\n", label("entries"), s.Entries, plural(s.Contexts, "context file", "context files"))
	if len(s.Domains) > 0 {
		names := make([]string, 0, len(s.Domains))
		for d := range s.Domains {
			names = append(names, d)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, d := range names {
			parts[i] = fmt.Sprintf("%s %d", p.cyan(d), s.Domains[d])
		}
		fmt.Fprintf(w, "%s %s\n", label("domains"), strings.Join(parts, " · "))
	}
	fmt.Fprintf(w, "%s draft %d · validated %d · core %d\n", label("maturity"), s.Maturity[api.MaturityDraft], s.Maturity[api.MaturityValidated], s.Maturity[api.MaturityCore])
	recent := plural(s.Recent, "entry", "entries") + " changed in the last 7 days"
	if s.LastChanged != nil {
		recent += ", the last " + s.LastChanged.Format(time.DateTime)
	}
	fmt.Fprintf(w, "%s %s\n", label("recent"), recent)
	fmt.Fprintf(w, "%s since the index was written: %s indexed, %d removed, %d unchanged\n",
		label("changed"), plural(s.Index.Indexed, "file", "files"), s.Index.Removed, s.Index.Reused)
	if c := s.Changed; c.Added+c.Updated+c.Removed > 0 {
		fmt.Fprintf(w, "%s on disk since the engine read the tree: %d added, %d updated, %d removed (now taken in)\n", label(""), c.Added, c.Updated, c.Removed)
	}
	if s.Upkeep > 0 {
		fmt.Fprintf(w, "%s %s: stale entries to archive, crowded topics (arbor tidy plans them, and finds near-duplicates and oversized entries)\n", label("upkeep"), plural(s.Upkeep, "suggestion", "suggestions"))
	}
	if s.Unflushed > 0 {
		fmt.Fprintf(w, "%s %d index changes not written yet (a flush or close writes them)\n", label("unflushed"), s.Unflushed)
	}
	if s.Healthy {
		fmt.Fprintf(w, "%s %s\n", label("health"), p.green("ok"))
		return
	}
	fmt.Fprintf(w, "%s %s\n", label("health"), p.yellow(plural(len(s.Warnings), "warning", "warnings")+" (arbor doctor says more)"))
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "  %s: %s\n", warn.Path, warn.Message)
	}
}
