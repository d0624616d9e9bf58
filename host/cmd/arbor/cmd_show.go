package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/arbormem/arbor/core/api"
)

var showCommand = &command{
	name:    "show",
	args:    "PATH",
	summary: "print an entry, its relations and its backlinks",
	help:    "Prints the entry's markdown as stored, then the entries it relates to and the\nentries that link to it.",
	example: "arbor show engineering/billing/invoice_retry_policy.md",
	examples: []string{
		"arbor show engineering/billing/context.md",
		"arbor show engineering/billing/invoice_retry_policy.md --json | jq .backlinks",
	},
	minArgs: 1,
	maxArgs: 1,
	setup: func(*flag.FlagSet) func(*app, []string) error {
		return func(a *app, args []string) error {
			return a.ask("read", api.ReadParams{Path: args[0]}, func(w io.Writer, raw json.RawMessage) error {
				var res api.ReadResult
				if err := json.Unmarshal(raw, &res); err != nil {
					return err
				}
				printShow(w, a.p, res)
				return nil
			})
		}
	},
}

func printShow(w io.Writer, pal palette, res api.ReadResult) {
	md := res.Markdown
	if md != "" && !strings.HasSuffix(md, "\n") {
		md += "\n"
	}
	fmt.Fprint(w, md)
	list := func(title, arrow string, paths []string) {
		fmt.Fprintf(w, "\n%s:", pal.bold(title))
		if len(paths) == 0 {
			fmt.Fprintln(w, " none")
			return
		}
		fmt.Fprintln(w)
		for _, path := range paths {
			fmt.Fprintf(w, "  %s %s\n", arrow, pal.cyan(path))
		}
	}
	list("relations", "→", res.Relations)
	list("backlinks", "←", res.Backlinks)
}
