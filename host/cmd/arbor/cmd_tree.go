package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/arbormem/arbor/core/api"
)

var treeCommand = &command{
	name:    "tree",
	args:    "[PATH]",
	summary: "print the tree (or the folder PATH) with titles",
	help:    "Prints domains, topics, subtopics and entries as an indented tree, each with its\ntitle.",
	example: "arbor tree engineering --depth 2",
	examples: []string{
		"arbor tree --depth 1",
		"arbor tree engineering/billing --json",
	},
	maxArgs:  1,
	complete: "none",
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		depth := fs.Int("depth", 0, "how many levels `N` to show (default: all)")
		return func(a *app, args []string) error {
			if *depth < 0 {
				return usageErr("tree: --depth must not be negative")
			}
			p := api.TreeParams{Depth: *depth}
			if len(args) == 1 {
				p.Path = strings.TrimSuffix(args[0], "/")
			}
			return a.ask("tree", p, func(w io.Writer, raw json.RawMessage) error {
				var root *api.Node
				if err := json.Unmarshal(raw, &root); err != nil {
					return err
				}
				printTree(w, a.p, root)
				return nil
			})
		}
	},
}

func printTree(w io.Writer, p palette, root *api.Node) {
	if root == nil {
		return
	}
	indent := ""
	if root.Path != "" {
		printNode(w, p, "", root)
		indent = "  "
	}
	if root.Path == "" && len(root.Children) == 0 {
		fmt.Fprintln(w, "(empty)")
	}
	for _, c := range root.Children {
		walkTree(w, p, indent, c)
	}
}

func walkTree(w io.Writer, p palette, indent string, n *api.Node) {
	printNode(w, p, indent, n)
	for _, c := range n.Children {
		walkTree(w, p, indent+"  ", c)
	}
}

func printNode(w io.Writer, p palette, indent string, n *api.Node) {
	name := n.Name
	if n.Path != "" && name == "" {
		name = n.Path
	}
	if n.Kind != "entry" {
		name = p.bold(p.cyan(name + "/"))
	}
	if n.Title != "" && n.Title != n.Name {
		fmt.Fprintf(w, "%s%s %s\n", indent, name, p.dim("— "+n.Title))
	} else {
		fmt.Fprintf(w, "%s%s\n", indent, name)
	}
}
