package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/arbormem/arbor/core/api"
)

var contextCommand = &command{
	name:    "context",
	args:    "PATH|QUERY",
	summary: "an entry with its relations and backlinks, as markdown for a prompt",
	help: "Prints the entry (PATH, an argument ending in .md) or the entry search ranks\n" +
		"first (QUERY, any other words), then the entries it relates to and those that\n" +
		"link to it, breadth-first up to --depth links away, each whole or by its\n" +
		"summary while the --budget of tokens (estimated at 4 characters a token) holds\n" +
		"them. The markdown goes to stdout; what got in and what was cut, to stderr.\n" +
		"--json gives every entry reached, its depth, and why it was cut.",
	example: "arbor context engineering/billing/invoice_retry_policy.md",
	examples: []string{
		"arbor context invoice retries --depth 2 --budget 4000 > prompt.md",
		"arbor context engineering/billing/invoice_retry_policy.md --json | jq '.entries[] | select(.included != \"full\")'",
	},
	minArgs: 1,
	maxArgs: -1,
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		depth := fs.Int("depth", api.DefaultContextDepth, fmt.Sprintf("follow links `N` steps away (0 to %d)", api.MaxContextDepth))
		budget := fs.Int("budget", api.DefaultContextBudget, fmt.Sprintf("at most `TOKENS` of markdown (%d to %d)", api.MinContextBudget, api.MaxContextBudget))
		archived := fs.Bool("archived", false, "reach the entries under _archive/ too (arbor tidy)")
		return func(a *app, args []string) error {
			p := api.ContextParams{Depth: depth, Budget: *budget, Archived: *archived}
			if arg := strings.Join(args, " "); len(args) == 1 && strings.HasSuffix(strings.ToLower(arg), ".md") {
				p.Path = arg
			} else {
				p.Query = arg
			}
			return a.ask("context", p, func(w io.Writer, raw json.RawMessage) error {
				var res api.ContextResult
				if err := json.Unmarshal(raw, &res); err != nil {
					return err
				}
				fmt.Fprintln(w, res.Markdown)
				fmt.Fprintln(a.stderr, a.ep.dim(contextFooter(res)))
				return nil
			})
		}
	},
}

// contextFooter says what a context holds and what it left out.
func contextFooter(res api.ContextResult) string {
	n := map[string]int{}
	for _, x := range res.Entries {
		n[x.Included]++
	}
	parts := []string{plural(len(res.Entries)-n[api.ContextOmitted], "entry", "entries")}
	if n[api.ContextTruncated] > 0 {
		parts = append(parts, res.Path+" cut to the budget")
	}
	if s := n[api.ContextSummary]; s > 0 {
		parts = append(parts, fmt.Sprintf("%d by summary only", s))
	}
	if o := n[api.ContextOmitted]; o > 0 {
		parts = append(parts, fmt.Sprintf("%d left out", o))
	}
	return fmt.Sprintf("%s · %d of %d tokens · %s", strings.Join(parts, " · "), res.Tokens, res.Budget, ms(res.TookMs))
}
