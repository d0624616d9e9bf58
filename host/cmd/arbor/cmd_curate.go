package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
)

var addCommand = &command{
	name:    "add",
	summary: "add one entry, described by flags",
	help: "Adds one entry with an ADD operation. --path is a folder domain/topic[/subtopic]\n" +
		"(the file is named after --title) or a full entry path ending in .md; --reason is\n" +
		"required. New folders and files are lowercase snake_case; a folder that exists in\n" +
		"another case stays as it is (Engineering/Billing goes to engineering/billing), and\n" +
		"names Windows cannot hold (CON, aux.md, a:b, a trailing dot) are refused. Prints\n" +
		"where the entry went. Fails when the entry already exists.",
	example: `arbor add --path engineering/billing --title "Invoice retry policy" --narrative "Failed invoices are retried three times." --tag billing --reason "agreed in the billing sync"`,
	examples: []string{
		`arbor add --path personal/preferences --title "Coffee" --fact "coffee: flat white, no sugar [preference]" --reason "asked twice"`,
		`arbor add --path engineering/auth/session_lifetime.md --summary "sessions last 12 h" --relation engineering/auth/refresh_token_rotation.md --reason "security review" --json`,
	},
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		var op api.Operation
		var narrative, facts stringList
		var tags, keywords, relations, snippets stringList
		fs.StringVar(&op.Path, "path", "", "the folder `PATH` domain/topic[/subtopic], or a full entry path ending in .md (required)")
		fs.StringVar(&op.Title, "title", "", "the entry's `TITLE`")
		fs.StringVar(&op.Summary, "summary", "", "a one-line `SUMMARY`")
		fs.Var(&narrative, "narrative", "the narrative `TEXT` (repeatable: one paragraph each)")
		fs.Var(&tags, "tag", "a `TAG` (repeatable)")
		fs.Var(&keywords, "keyword", "a search `KEYWORD` (repeatable)")
		fs.Var(&relations, "relation", "a related entry `PATH` (repeatable)")
		fs.Var(&facts, "fact", "a `FACT` written \"subject: statement [category]\" (repeatable)")
		fs.Var(&snippets, "snippet", "a code or text `SNIPPET` (repeatable)")
		fs.StringVar(&op.Reason, "reason", "", "why this is stored: the `REASON` (required)")
		return func(a *app, _ []string) error {
			if op.Path == "" {
				return usageErr("add: --path is required")
			}
			if op.Reason == "" {
				return usageErr("add: --reason is required")
			}
			if op.Title == "" && !strings.HasSuffix(op.Path, ".md") {
				return usageErr("add: --title is required when --path is a folder")
			}
			op.Type = api.OpAdd
			if len(narrative) > 0 {
				op.Content.Narrative = &api.Narrative{Text: strings.Join(narrative, "\n\n")}
			}
			for _, f := range facts {
				op.Content.Facts = append(op.Content.Facts, parseFact(f))
			}
			op.Content.Tags, op.Content.Keywords = tags, keywords
			op.Content.Relations, op.Content.Snippets = relations, snippets
			return a.curateOne(op)
		}
	},
}

// parseFact reads "subject: statement [category]"; without a colon the
// whole text is the statement.
func parseFact(s string) api.Fact {
	var f api.Fact
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, " ["); i >= 0 && strings.HasSuffix(s, "]") {
		f.Category = strings.TrimSpace(s[i+2 : len(s)-1])
		s = strings.TrimSpace(s[:i])
	}
	if subject, statement, ok := strings.Cut(s, ":"); ok && strings.TrimSpace(subject) != "" {
		f.Subject, f.Statement = strings.TrimSpace(subject), strings.TrimSpace(statement)
	} else {
		f.Statement = s
	}
	return f
}

var curateCommand = &command{
	name:    "curate",
	args:    "[FILE|-] | --from FILE...",
	summary: "apply operations from a JSON file or stdin, or curate raw files through the LLM",
	help: "Applies curate operations (ADD, UPDATE, UPSERT, MERGE, DELETE, MOVE) in order: a JSON\n" +
		"array of operations, or {\"operations\": [...]}, read from FILE or from stdin (- or\n" +
		"no argument). Prints one line per operation; exits 1 if any operation failed.\n\n" +
		"With --from, the files (at most 5, 40,000 characters each) are raw material: the\n" +
		"configured LLM provider (docs/llm.md) proposes operations, sees each one's result,\n" +
		"and may fix and resend failed ones; nothing is written until it is done, and\n" +
		"Ctrl-C leaves the tree unchanged.",
	example: "arbor curate ops.json",
	examples: []string{
		`echo '[{"type":"UPSERT","path":"personal/preferences","title":"Desk","content":{"narrative":"Stand until noon."},"reason":"new desk"}]' | arbor curate -`,
		`echo '{"operations":[{"type":"MERGE","path":"a/b/old.md","mergeTarget":"a/b/new.md","reason":"duplicate"}]}' | arbor curate --json`,
		`echo '[{"type":"DELETE","path":"scratch","reason":"clean up the scratch domain"}]' | arbor curate`,
	},
	maxArgs: -1,
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		from := fs.Bool("from", false, "curate from the raw files given as arguments, through the LLM")
		instruction := fs.String("instruction", "", "with --from: what the model should focus on, as `TEXT`")
		budget := fs.Int("budget", 0, "with --from: the token budget `N` of the model calls (default: the engine's)")
		return func(a *app, args []string) error {
			if *from {
				return a.curateFrom(args, *instruction, *budget)
			}
			if len(args) > 1 {
				return usageErr("curate: one file of operations (or --from FILE... for raw files)")
			}
			name := "-"
			if len(args) == 1 {
				name = args[0]
			}
			var data []byte
			var err error
			if name == "-" {
				data, err = io.ReadAll(a.stdin)
				name = "stdin"
			} else {
				data, err = os.ReadFile(name)
			}
			if err != nil {
				return fmt.Errorf("curate: %w", err)
			}
			params, err := operationsParams(name, data)
			if err != nil {
				return err
			}
			return a.curate(params)
		}
	},
}

// operationsParams turns a file of operations into the params of
// "curate", leaving the operations themselves for the engine to check.
func operationsParams(name string, data []byte) ([]byte, error) {
	data = bytes.TrimSpace(data)
	// The engine would refuse it too, but only as "the request is not
	// UTF-8", without naming the input.
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("curate: %s is not valid UTF-8", name)
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, fmt.Errorf("curate: %s is not valid JSON: %w", name, err)
	}
	switch {
	case len(data) > 0 && data[0] == '[':
		return append(append([]byte(`{"operations":`), data...), '}'), nil
	case len(data) > 0 && data[0] == '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err == nil && obj["operations"] != nil {
			return data, nil
		}
	}
	return nil, fmt.Errorf(`curate: %s must hold a JSON array of operations or {"operations": [...]}`, name)
}

// curate sends the operations and reports each one; a failed operation
// makes the command fail.
func (a *app) curate(params []byte) error {
	return a.withEngine(func(eng engine) error {
		raw, err := eng.CallMethod(a.ctx, "curate", json.RawMessage(params))
		if err != nil {
			return fmt.Errorf("curate: %w", err)
		}
		var res api.CurateResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("curate: decode result: %w", err)
		}
		if a.json {
			if err := printJSON(a.stdout, raw); err != nil {
				return err
			}
		} else {
			printCurate(a.stdout, a.p, res)
		}
		if res.Summary.Failed > 0 {
			return fmt.Errorf("%d of %d operations failed", res.Summary.Failed, len(res.Applied))
		}
		return nil
	})
}

func printCurate(w io.Writer, p palette, res api.CurateResult) {
	if len(res.Applied) == 0 {
		fmt.Fprintln(w, "no operations")
		return
	}
	for _, ap := range res.Applied {
		mark := p.green("✓")
		if ap.Status != api.StatusSuccess {
			mark = p.red("✗")
		}
		fmt.Fprintf(w, "%s %s %s — %s\n", mark, p.bold(fmt.Sprintf("%-6s", ap.Type)), p.cyan(ap.Path), ap.Message)
		if len(ap.Carried) > 0 {
			fmt.Fprintf(w, "         carried over: %s\n", strings.Join(ap.Carried, ", "))
		}
		if ap.To != "" {
			fmt.Fprintf(w, "         now at: %s\n", p.cyan(ap.To))
		}
		if len(ap.BrokenRelations) > 0 {
			fmt.Fprintf(w, "         still linked from: %s\n", strings.Join(ap.BrokenRelations, ", "))
		}
	}
	s := res.Summary
	failed := fmt.Sprintf("%d failed", s.Failed)
	if s.Failed > 0 {
		failed = p.red(failed)
	}
	fmt.Fprintf(w, "%d added, %d updated, %d merged, %d deleted, %d moved, %s\n", s.Added, s.Updated, s.Merged, s.Deleted, s.Moved, failed)
}
