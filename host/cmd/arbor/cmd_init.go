package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/arbormem/arbor/core/api"
)

var initCommand = &command{
	name:    "init",
	args:    "[DIR]",
	summary: "make DIR (default: --root, $ARBOR_ROOT, else .) a memory root",
	help: "Creates DIR/.arbor/, which marks DIR as a memory root; commands run anywhere\n" +
		"below DIR find it, and its .gitignore keeps the engine's state out of git.\n" +
		"Existing notes in DIR are left as they are. Without DIR, initializes the root\n" +
		"the other commands would use when one is named: --root, else $ARBOR_ROOT;\n" +
		"otherwise the current folder.",
	example: "arbor init ~/notes",
	examples: []string{
		"cd ~/vault && arbor init        # an Obsidian vault opens as it is",
		"ARBOR_ROOT=~/notes arbor init --json",
	},
	maxArgs:  1,
	complete: "dirs",
	setup: func(*flag.FlagSet) func(*app, []string) error {
		return func(a *app, args []string) error {
			// Without DIR, the root named by --root or $ARBOR_ROOT: the
			// one every other command would then open. Initializing the
			// current folder instead would make a root no command uses.
			dir := a.root
			if len(args) == 1 {
				dir = args[0]
			}
			if dir == "" {
				dir = os.Getenv("ARBOR_ROOT")
			}
			if dir == "" {
				dir = "."
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return fmt.Errorf("init %s: %w", dir, err)
			}
			marker := filepath.Join(abs, rootMarker)
			_, statErr := os.Stat(marker)
			existed := statErr == nil
			if err := os.MkdirAll(marker, 0o755); err != nil {
				return fmt.Errorf("init %s: %w", dir, err)
			}
			// The engine writes the same file at open; writing it here too
			// means a `git add -A` right after init stores no engine state.
			ignore := filepath.Join(abs, filepath.FromSlash(api.IgnoreFile))
			if _, err := os.Stat(ignore); errors.Is(err, fs.ErrNotExist) {
				if err := os.WriteFile(ignore, []byte(api.IgnoreRules), 0o644); err != nil {
					return fmt.Errorf("init %s: %w", dir, err)
				}
			}
			if a.json {
				return printJSON(a.stdout, json.RawMessage(mustJSON(map[string]any{"root": abs, "created": !existed})))
			}
			if existed {
				fmt.Fprintf(a.stdout, "%s is already an Arbor memory root\n", abs)
			} else {
				fmt.Fprintf(a.stdout, "Initialized an Arbor memory root in %s\n", abs)
			}
			return nil
		}
	},
}
