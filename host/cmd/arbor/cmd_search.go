package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/arbormem/arbor/core/api"
	hostllm "github.com/arbormem/arbor/host/llm"
)

var searchCommand = &command{
	name:    "search",
	args:    "QUERY",
	summary: "ranked full-text search, with scores and excerpts",
	help: "Searches titles, paths and content (BM25). The score is the normalized\n" +
		"s/(1+s) of the BM25 score. Several words may be given without quotes.\n" + filterHelp,
	example:  `arbor search "invoice retry" --limit 5`,
	complete: "none",
	examples: []string{
		`arbor search invoice --domain engineering --tag billing --since 30d --sort recent`,
		`arbor search '"connection pool" postgres'`,
		`arbor search 가치관 --json | jq -r '.results[].path'`,
	},
	minArgs: 1,
	maxArgs: -1,
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		limit := fs.Int("limit", 10, "the maximum number of results `N` (at most 100)")
		filters := filterFlags(fs)
		return func(a *app, args []string) error {
			p := api.SearchParams{Query: strings.Join(args, " "), Limit: *limit, Filters: filters()}
			return a.ask("search", p, func(w io.Writer, raw json.RawMessage) error {
				var res api.SearchResult
				if err := json.Unmarshal(raw, &res); err != nil {
					return err
				}
				printSearch(w, a.p, res)
				return nil
			})
		}
	},
}

var queryCommand = &command{
	name:    "query",
	args:    "QUESTION|-",
	summary: "answer a question from memory; says which tier answered",
	help: "Tiered retrieval: the exact cache (tier 0), then a direct answer from the index\n" +
		"(tier 2) when the best entry is clearly ahead. Otherwise, with an LLM provider\n" +
		"configured (docs/llm.md), one model call over the best entries (tier 3) and, when\n" +
		"they do not cover the question, an agentic loop over the tree's tools (tier 4),\n" +
		"with each model call's tokens and latency; without one, the best entries. With -,\n" +
		"reads one question per line from stdin and answers each in the same session, so\n" +
		"repeats hit the cache (a filtered or sorted question is never cached).\n" + filterHelp,
	example:  `arbor query "how often are failed invoices retried?"`,
	complete: "none",
	examples: []string{
		`arbor query "refund approval limit" --limit 3 --json`,
		`arbor query "what changed in billing?" --topic billing --sort recent`,
		`printf 'invoice retries\nrefund limit\n' | arbor query -`,
	},
	minArgs: 1,
	maxArgs: -1,
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		limit := fs.Int("limit", 0, "the maximum number of sources `N` (default: the engine's, 5)")
		noLLM := fs.Bool("no-llm", false, "answer from tiers 0–2 only, even with an LLM provider configured")
		budget := fs.Int("budget", 0, "the token budget `N` of the model calls (default: the engine's)")
		filters := filterFlags(fs)
		return func(a *app, args []string) error {
			questions := []string{strings.Join(args, " ")}
			if len(args) == 1 && args[0] == "-" {
				var err error
				if questions, err = readLines(a.stdin); err != nil {
					return fmt.Errorf("query: read stdin: %w", err)
				}
			}
			return a.withModel(!*noLLM, func(ctx context.Context, eng engine, m *hostllm.Client) error {
				for i, q := range questions {
					if i > 0 && !a.json {
						fmt.Fprintln(a.stdout)
					}
					if len(questions) > 1 && !a.json {
						fmt.Fprintf(a.stdout, "? %s\n", q)
					}
					p := api.QueryParams{SearchParams: api.SearchParams{Query: q, Limit: *limit, Filters: filters()}, TokenBudget: *budget}
					if err := a.queryOne(ctx, eng, m, p); err != nil {
						return err
					}
				}
				return nil
			})
		}
	},
}

// filterHelp is the help of the flags of filterFlags.
const filterHelp = "\nFilters narrow the search inside the index (the best N are the best N of what\n" +
	"they keep): --domain and --topic (a topic's name or domain/topic) by folder,\n" +
	"--tag (repeatable: every one) by tag, --since and --until by the entries'\n" +
	"updatedAt (else createdAt): a span back (7d, 2w), a date (a whole day for\n" +
	"--until) or an RFC 3339 time; --maturity (draft, validated, core; comma-separated:\n" +
	"any of them) and --min-importance by the lifecycle as of now. --sort recent or\n" +
	"importance orders the matches by that key, ties by relevance. Entries under\n" +
	"_archive/ (arbor tidy) are left out unless --archived."

// filterFlags defines the flags of api.Filters on fs; the function returned
// reads them once fs is parsed.
func filterFlags(fs *flag.FlagSet) func() api.Filters {
	var f api.Filters
	var tags stringList
	maturity := fs.String("maturity", "", "only entries at the lifecycle `TIERS` (draft, validated, core; comma-separated)")
	fs.StringVar(&f.Domain, "domain", "", "only the files of the `DOMAIN`")
	fs.StringVar(&f.Topic, "topic", "", "only the files of the `TOPIC` (its name, or domain/topic)")
	fs.Var(&tags, "tag", "only entries tagged `TAG` (repeatable: every one)")
	fs.StringVar(&f.Since, "since", "", "only entries changed since `WHEN` (7d, 2w, a date, an RFC 3339 time)")
	fs.StringVar(&f.Until, "until", "", "only entries changed until `WHEN` (a date keeps its whole day)")
	fs.Float64Var(&f.MinImportance, "min-importance", 0, "only entries of importance at least `N` (0 to 100)")
	fs.StringVar(&f.Sort, "sort", "", "order by `KEY`: relevance (default), recent or importance")
	fs.BoolVar(&f.Archived, "archived", false, "include the entries under _archive/ (arbor tidy)")
	return func() api.Filters {
		f.Tags = tags
		f.Maturity = nil
		for _, m := range strings.Split(*maturity, ",") {
			if m = strings.TrimSpace(m); m != "" {
				f.Maturity = append(f.Maturity, api.Maturity(m))
			}
		}
		return f
	}
}

// readLines returns the non-blank lines of r, trimmed. A line may be
// longer than a query may be (api.MaxQueryBytes), so that the engine says
// so, up to 1 MiB.
func readLines(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("a line of more than 1 MiB: a question holds at most %d bytes", api.MaxQueryBytes)
	} else if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no questions")
	}
	return out, nil
}

// ask calls one read-only method and prints its result.
func (a *app) ask(method string, params any, human func(io.Writer, json.RawMessage) error) error {
	return a.withEngine(func(eng engine) error {
		return a.print(eng, method, params, human)
	})
}

// print calls a method on an open engine and prints its result: as JSON, or
// with the human printer.
func (a *app) print(eng engine, method string, params any, human func(io.Writer, json.RawMessage) error) error {
	raw, err := eng.CallMethod(a.ctx, method, params)
	if err != nil {
		return err // an *api.Error says what went wrong
	}
	if a.json {
		return printJSON(a.stdout, raw)
	}
	if err := human(a.stdout, raw); err != nil {
		return fmt.Errorf("%s: decode result: %w", method, err)
	}
	return nil
}

func printSearch(w io.Writer, p palette, res api.SearchResult) {
	if len(res.Results) == 0 {
		fmt.Fprintf(w, "no results for %q · %s\n", res.Query, ms(res.TookMs))
		return
	}
	for i, h := range res.Results {
		printHit(w, p, fmt.Sprintf("%2d. ", i+1), h)
	}
	n := "results"
	if res.Total == 1 {
		n = "result"
	}
	fmt.Fprintln(w, p.dim(fmt.Sprintf("%d %s · %s", res.Total, n, ms(res.TookMs))))
}

// printHit prints a result as "prefix score path — title" and its excerpt.
func printHit(w io.Writer, p palette, prefix string, h api.Hit) {
	line := fmt.Sprintf("%s%s  %s", prefix, p.yellow(fmt.Sprintf("%.4f", h.Score)), p.cyan(h.Path))
	if h.Title != "" {
		line += " — " + p.bold(h.Title)
	}
	fmt.Fprintln(w, line)
	if ex := oneLine(h.Excerpt, 160); ex != "" {
		fmt.Fprintf(w, "%s%s\n", strings.Repeat(" ", len(prefix)+8), p.dim(ex))
	}
}

// printQuery prints a query's answer and its results, which came in the
// order sort asked for ("" is relevance: the lifecycle's score).
func printQuery(w io.Writer, p palette, res api.QueryResult, sort string) {
	switch {
	case res.Answer != "" && (res.NeedsLLM || res.OutOfDomain):
		fmt.Fprintln(w, p.yellow(strings.TrimRight(res.Answer, "\n")))
	case res.Answer != "":
		first, rest, _ := strings.Cut(strings.TrimRight(res.Answer, "\n"), "\n")
		fmt.Fprintln(w, p.bold(first))
		if rest != "" {
			fmt.Fprintln(w, rest)
		}
	case res.OutOfDomain:
		fmt.Fprintln(w, p.yellow("Nothing stored matches this question."))
	default:
		fmt.Fprintln(w, p.yellow("No direct answer."))
	}
	tier := fmt.Sprintf("tier %d (%s)", res.Tier, res.TierName)
	if res.NeedsLLM || res.OutOfDomain {
		tier = p.yellow(tier)
	} else {
		tier = p.green(tier)
	}
	fmt.Fprintf(w, "\n%s %s\n", tier, p.dim("· "+ms(res.TookMs)))
	if res.NeedsLLM || res.OutOfDomain {
		fmt.Fprintf(w, "%s\n", p.dim(res.Reason))
	}
	if len(res.Results) == 0 {
		return
	}
	// Results come by lifecycle score, not by ŝ: show both, or the order
	// looks wrong.
	header := "sources"
	if res.LLM != nil || len(res.Sources) > 0 {
		// The answer lists its own sources; these are what the model was given.
		header = "search results given to the model"
	}
	order := "by the latter"
	if sort != "" && sort != api.SortRelevance {
		order = "by " + sort
	}
	fmt.Fprintln(w, "\n"+p.dim(header+": ŝ · lifecycle score, "+order))
	for _, h := range res.Results {
		scores := fmt.Sprintf("%.4f", h.Score)
		if h.Lifecycle != nil {
			scores = fmt.Sprintf("%.4f · %.4f", h.Score, h.Lifecycle.Score)
		}
		line := fmt.Sprintf("  %s  %s", p.yellow(scores), p.cyan(h.Path))
		if h.Title != "" {
			line += " — " + h.Title
		}
		fmt.Fprintln(w, line)
	}
}
