package main

import (
	"encoding/json"
	"flag"
	"fmt"

	"github.com/arbormem/arbor/core/api"
)

var mvCommand = &command{
	name:    "mv",
	args:    "SRC DST",
	summary: "move an entry or a folder, rewriting the links to it",
	help: "Moves with a MOVE operation. SRC is an entry (a path ending in .md) or a folder\n" +
		"domain/topic[/subtopic]. An entry moves into the folder DST, keeping its file name,\n" +
		"or to DST when DST ends in .md; a folder moves into DST when that folder exists,\n" +
		"else it is renamed to DST, as mv does. Every relation, legacy @path line and\n" +
		"wikilink that named what moved by its path is rewritten in the same step, and\n" +
		"context.md files, the index and the lifecycle signals follow. --reason is\n" +
		"required. Nothing changes when the move fails (the destination exists, the source\n" +
		"is missing, a folder would move into itself).",
	example: `arbor mv engineering/billing/invoice_retry_policy.md finance/billing --reason "billing moved to finance"`,
	examples: []string{
		`arbor mv engineering/billing finance --reason "finance owns billing now"  # finance exists: finance/billing`,
		`arbor mv notes/scratch/idea.md projects/arbor/search_filters.md --reason "it became a plan" --json`,
	},
	minArgs: 2,
	maxArgs: 2,
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		reason := fs.String("reason", "", "why it moves: the `REASON` (required)")
		return func(a *app, args []string) error {
			if *reason == "" {
				return usageErr("mv: --reason is required")
			}
			return a.curateOne(api.Operation{Type: api.OpMove, Path: args[0], To: args[1], Reason: *reason})
		}
	},
}

var rmCommand = &command{
	name:    "rm",
	args:    "PATH",
	summary: "delete an entry or a folder's entries",
	help: "Deletes with a DELETE operation: the entry PATH (ending in .md), or the entries\n" +
		"and context files of the folder PATH, with the folders left empty (files the\n" +
		"engine does not read, such as attachments, stay and are listed). --reason is\n" +
		"required and goes to the audit log. Prints the entries that still link to what\n" +
		"was removed.",
	example:  `arbor rm scratch/notes/old_idea.md --reason "superseded"`,
	examples: []string{`arbor rm scratch --reason "clean up the scratch domain"`},
	minArgs:  1,
	maxArgs:  1,
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		reason := fs.String("reason", "", "why it goes: the `REASON` (required)")
		return func(a *app, args []string) error {
			if *reason == "" {
				return usageErr("rm: --reason is required")
			}
			return a.curateOne(api.Operation{Type: api.OpDelete, Path: args[0], Reason: *reason})
		}
	},
}

// curateOne applies one operation and reports it as curate does.
func (a *app) curateOne(op api.Operation) error {
	params, err := json.Marshal(api.CurateParams{Operations: []api.Operation{op}})
	if err != nil {
		return fmt.Errorf("%s: %w", op.Type, err)
	}
	return a.curate(params)
}
