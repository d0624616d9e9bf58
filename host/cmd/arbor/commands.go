package main

import (
	"flag"
	"io"
	"strings"
)

// command is one subcommand: its help and how it runs.
type command struct {
	name    string
	args    string // the positional arguments, for the synopsis
	summary string
	help    string // a paragraph for `arbor CMD --help`
	example string // shown in `arbor --help` and first in the command's help
	// examples are more, for the command's help only.
	examples []string
	// complete says how shell completion fills the positional arguments:
	// "files" (the default when args is set), "dirs", "none", or the words
	// themselves separated by spaces.
	complete string
	minArgs  int
	maxArgs  int // -1: any number
	// setup registers the command's flags and returns what runs it with the
	// positional arguments.
	setup func(fs *flag.FlagSet) func(a *app, args []string) error
}

func (c *command) synopsis() string {
	s := c.name + " [flags]"
	if c.args != "" {
		s += " " + c.args
	}
	return s
}

// commands are listed in help in this order; a new command is one line.
var commands = []*command{
	initCommand,
	addCommand,
	curateCommand,
	mvCommand,
	rmCommand,
	searchCommand,
	queryCommand,
	showCommand,
	contextCommand,
	treeCommand,
	statsCommand,
	recentCommand,
	statusCommand,
	tidyCommand,
	ingestCommand,
	syncCommand,
	mcpCommand,
	serveCommand,
	doctorCommand,
	completionCommand,
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// newFlagSet returns a flag set that reports errors to its caller and
// prints nothing itself.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseInterleaved parses flags placed anywhere among the positional
// arguments ("arbor search retry --limit 3"); after "--" everything is
// positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ", ") }

func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}
