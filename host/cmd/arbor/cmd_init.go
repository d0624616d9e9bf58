package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

var initCommand = &command{
	name:    "init",
	args:    "[DIR]",
	summary: "make DIR (default: --root, $ARBOR_ROOT, else .) a memory root",
	help: "Creates DIR/.arbor/, which marks DIR as a memory root; commands run anywhere\n" +
		"below DIR find it. Existing notes in DIR are left as they are. Without DIR,\n" +
		"initializes the root the other commands would use when one is named: --root,\n" +
		"else $ARBOR_ROOT; otherwise the current folder.",
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
