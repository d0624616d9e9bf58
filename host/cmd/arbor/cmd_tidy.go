package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/arbormem/arbor/core/api"
	hostllm "github.com/arbormem/arbor/host/llm"
	"github.com/arbormem/arbor/host/runtime"
)

var tidyCommand = &command{
	name:    "tidy",
	args:    "[PATH]",
	summary: "upkeep: merge near-duplicates, split big entries, archive stale ones",
	help: "Plans the upkeep of the tree (or of the folder PATH) and prints it, each\n" +
		"suggestion with its reason and the curate operations that carry it out:\n" +
		"near-duplicates (word-shingle similarity at least --similarity) merged into the\n" +
		"fullest of them, the fuller text kept and differing sentences marked; entries\n" +
		"over --split-bytes split by their sections and fact groups; drafts unchanged and\n" +
		"unused for --stale-days, of importance at most --archive-importance, moved under\n" +
		"_archive/ (left out of search, query, recent and context unless asked with\n" +
		"--archived; arbor mv brings one back); topics of more than --crowded entries\n" +
		"given subtopics by shared tags. Nothing is written without --apply, which applies\n" +
		"each suggestion through curate (atomic, audited), stopping a suggestion at its\n" +
		"first failure and undoing a split that failed before it deleted its entry.\n\n" +
		"A large tree's plan holds thousands of suggestions (one per stale entry): the\n" +
		"first 200 are printed, then the count of each kind and of those left out;\n" +
		"--limit N prints the first N, --all every one. --apply applies the whole plan,\n" +
		"or with --limit N only the first N suggestions (those printed).\n\n" +
		"With an LLM provider configured (docs/llm.md), --apply has the model write each\n" +
		"merged entry, one call per group of duplicates; an answer that drops a fact, is\n" +
		"not an entry, or a failed call leaves that group to the deterministic merge, with\n" +
		"a warning. Nothing is written until the model is done, and Ctrl-C leaves the\n" +
		"tree unchanged. --no-llm merges deterministically; the plan never calls a model.",
	example: "arbor tidy",
	examples: []string{
		"arbor tidy --apply --kind merge,archive",
		"arbor tidy --kind merge --limit 10 --apply",
		"arbor tidy engineering --kind split --split-bytes 16384 --json | jq '.suggestions[].reason'",
	},
	complete: "dirs",
	maxArgs:  1,
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		var p api.TidyParams
		kinds := fs.String("kind", "", "only these `KINDS` of suggestion: "+strings.Join(api.TidyKinds, ", ")+" (comma-separated; default all)")
		fs.BoolVar(&p.Apply, "apply", false, "apply the plan (default: print it only)")
		fs.Float64Var(&p.Similarity, "similarity", api.DefaultTidySimilarity, "near-duplicates from this word-shingle Jaccard `SIMILARITY` (0.5 to 1)")
		fs.IntVar(&p.SplitBytes, "split-bytes", api.DefaultTidySplitBytes, "split entries over `BYTES`")
		fs.IntVar(&p.StaleDays, "stale-days", api.DefaultTidyStaleDays, "archive drafts unchanged and unused for `DAYS`")
		fs.Float64Var(&p.ArchiveImportance, "archive-importance", 0, "archive drafts of importance at most `N` (default: the initial importance)")
		fs.IntVar(&p.Crowded, "crowded", api.DefaultTidyCrowded, "propose subtopics for topics of more than `N` entries")
		noLLM := fs.Bool("no-llm", false, "with --apply: merge deterministically, even with an LLM provider configured")
		fs.IntVar(&p.TokenBudget, "budget", 0, "with --apply: the token budget `N` of the model calls (default: the engine's)")
		limit := fs.Int("limit", -1, fmt.Sprintf("print the first `N` suggestions (default %d); with --apply, apply only those", api.DefaultTidyLimit))
		all := fs.Bool("all", false, "print every suggestion")
		return func(a *app, args []string) error {
			switch {
			case *all && *limit >= 0:
				return usageErr("tidy: --all and --limit: give one")
			case *all:
				p.Limit = new(0)
			case *limit == 0:
				return usageErr("tidy: --limit 0: give a positive number, or --all for every suggestion")
			case *limit > 0:
				p.Limit = limit
			case *limit < -1:
				return usageErr(fmt.Sprintf("tidy: --limit %d: want a positive number", *limit))
			}
			for _, k := range strings.Split(*kinds, ",") {
				if k = strings.TrimSpace(k); k != "" {
					p.Kinds = append(p.Kinds, k)
				}
			}
			if len(args) == 1 {
				p.Folder = args[0]
			}
			// Only an apply needs the model: a plan never reads its
			// configuration, so a broken one cannot stop it.
			return a.withModel(p.Apply && !*noLLM, func(ctx context.Context, eng engine, m *hostllm.Client) error {
				var raw json.RawMessage
				var err error
				if m != nil {
					p.LLM = true
					raw, err = runtime.DriveWith(ctx, eng, "tidy", p, m)
				} else {
					raw, err = eng.CallMethod(ctx, "tidy", p)
				}
				if err != nil {
					return err
				}
				var res api.TidyResult
				if err := json.Unmarshal(raw, &res); err != nil {
					return fmt.Errorf("tidy: decode result: %w", err)
				}
				if a.json {
					if err := printJSON(a.stdout, raw); err != nil {
						return err
					}
				} else {
					printTidy(a.stdout, a.p, res)
					if res.LLM != nil {
						printTrace(a.stdout, *res.LLM, m)
					}
				}
				if res.Applied != nil && res.Applied.Summary.Failed > 0 {
					s := res.Applied.Summary
					return fmt.Errorf("tidy: %s of %d failed; a suggestion stops at its first failure", plural(s.Failed, "operation", "operations"), s.Added+s.Updated+s.Merged+s.Deleted+s.Moved+s.Failed)
				}
				return nil
			})
		}
	},
}

func printTidy(w io.Writer, p palette, res api.TidyResult) {
	if len(res.Suggestions) == 0 {
		fmt.Fprintf(w, "nothing to tidy in %s · %s\n", plural(res.Entries, "entry", "entries"), ms(res.TookMs))
		return
	}
	for _, s := range res.Suggestions {
		fmt.Fprintf(w, "%s %s\n", p.bold(fmt.Sprintf("%-8s", s.Kind)), p.cyan(strings.Join(s.Paths, ", ")))
		fmt.Fprintf(w, "         %s\n", s.Reason)
		if s.Warning != "" {
			fmt.Fprintf(w, "         %s %s\n", p.yellow("warning:"), s.Warning)
		}
		for _, op := range s.Operations {
			line := op.Type + " " + op.Path
			switch {
			case op.MergeTarget != "":
				line += " → " + op.MergeTarget
			case op.To != "":
				line += " → " + op.To
			}
			fmt.Fprintf(w, "         %s\n", p.dim(line))
		}
	}
	var counts []string
	for _, k := range api.TidyKinds {
		if n, ok := res.Counts[k]; ok {
			counts = append(counts, fmt.Sprintf("%s %d", k, n))
		}
	}
	total := len(res.Suggestions) + res.Omitted
	fmt.Fprintf(w, "%s in %s: %s · %s\n", plural(total, "suggestion", "suggestions"), plural(res.Entries, "entry", "entries"), strings.Join(counts, " · "), ms(res.TookMs))
	if res.Omitted > 0 {
		fmt.Fprintln(w, p.dim(fmt.Sprintf("printed the first %d, %d left out: --limit N prints the first N, --all every one", len(res.Suggestions), res.Omitted)))
	}
	if res.Applied == nil {
		fmt.Fprintln(w, p.dim("nothing written: arbor tidy --apply applies the plan"))
		return
	}
	printCurate(w, p, *res.Applied)
	if res.Omitted > 0 {
		fmt.Fprintln(w, p.dim(fmt.Sprintf("the operations listed are those of the %d suggestions printed; the counts are of all %d applied", len(res.Suggestions), total)))
	}
	if res.Undone > 0 {
		fmt.Fprintf(w, "undid %s of a split that failed\n", plural(res.Undone, "operation", "operations"))
	}
}
