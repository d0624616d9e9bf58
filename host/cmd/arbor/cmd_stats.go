package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"

	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/core/lifecycle"
)

var statsCommand = &command{
	name:    "stats",
	summary: "count entries, context files, domains, relations, maturity tiers; list warnings",
	help:    "Counts what the tree holds, the entries per lifecycle tier (draft, validated, core), and lists the files the engine could not use.",
	example: "arbor stats --json",
	setup: func(*flag.FlagSet) func(*app, []string) error {
		return func(a *app, _ []string) error {
			return a.ask("stats", nil, func(w io.Writer, raw json.RawMessage) error {
				var res engine.StatsResult
				if err := json.Unmarshal(raw, &res); err != nil {
					return err
				}
				printStats(w, res)
				return nil
			})
		}
	},
}

func printStats(w io.Writer, s engine.StatsResult) {
	fmt.Fprintf(w, "entries    %d\ncontexts   %d\nrelations  %d\n", s.Entries, s.Contexts, s.Relations)
	fmt.Fprintf(w, "maturity   draft %d · validated %d · core %d\n", s.Maturity[lifecycle.Draft], s.Maturity[lifecycle.Validated], s.Maturity[lifecycle.Core])
	if len(s.Domains) > 0 {
		names := make([]string, 0, len(s.Domains))
		width := 0
		for d := range s.Domains {
			names = append(names, d)
			width = max(width, len(d))
		}
		sort.Strings(names)
		fmt.Fprintln(w, "domains")
		for _, d := range names {
			fmt.Fprintf(w, "  %-*s  %d\n", width, d, s.Domains[d])
		}
	}
	if len(s.Warnings) > 0 {
		fmt.Fprintf(w, "warnings (%d)\n", len(s.Warnings))
		for _, warn := range s.Warnings {
			fmt.Fprintf(w, "  %s: %s\n", warn.Path, warn.Message)
		}
	}
}
