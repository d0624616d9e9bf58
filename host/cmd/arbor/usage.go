package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

func printUsage(w io.Writer) {
	fmt.Fprint(w, `arbor — a memory engine for AI agents: a tree of markdown notes
(domain › topic › subtopic › entry), curated with audited operations and
searched in tiers, without an LLM whenever it can.

Usage: arbor [--root DIR] [--json] [--color WHEN] <command> [flags] [arguments]

Commands:
`)
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name+" "+c.args))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name+" "+c.args, c.summary)
	}
	fmt.Fprint(w, `
Global flags (before or after the command):
  --root DIR   the memory root (default: $ARBOR_ROOT, else the nearest
               folder at or above the current one that holds .arbor/)
  --json       print the result as JSON instead of text (every command)
  --color WHEN color the text: auto (on a terminal unless NO_COLOR is
               set), always or never
  --version    print the version (before a command name only)

Examples:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n", c.example)
	}
	fmt.Fprint(w, `
Exit codes: 0 ok, 1 error (including a failed curate operation or a failed
doctor check), 2 usage.
Run 'arbor <command> --help' for a command's flags and more examples, and
'arbor completion bash|zsh|fish' for shell completion.
`)
}

func printCommandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: arbor %s\n\n%s\n", c.synopsis(), c.help)
	var own, global []string
	fs.VisitAll(func(f *flag.Flag) {
		if hidden[f.Name] {
			return
		}
		line := flagLine(f)
		if globalFlag[f.Name] {
			global = append(global, line)
		} else {
			own = append(own, line)
		}
	})
	if len(own) > 0 {
		fmt.Fprintf(w, "\nFlags:\n%s", strings.Join(own, ""))
	}
	fmt.Fprintf(w, "\nGlobal flags:\n%s", strings.Join(global, ""))
	fmt.Fprintf(w, "\nExamples:\n")
	for _, e := range append([]string{c.example}, c.examples...) {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// globalFlag names the flags every command takes.
var globalFlag = map[string]bool{"root": true, "json": true, "color": true}

// flagLine renders one flag as "  --name VALUE  usage (default x)\n".
func flagLine(f *flag.Flag) string {
	name, usage := flag.UnquoteUsage(f)
	head := "--" + f.Name
	if name != "" {
		head += " " + name
	}
	if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
		usage += fmt.Sprintf(" (default %s)", f.DefValue)
	}
	if len(head) <= 18 {
		return fmt.Sprintf("  %-18s %s\n", head, usage)
	}
	return fmt.Sprintf("  %s\n  %-18s %s\n", head, "", usage)
}
