// Command arbor is the command-line tool of Arbor, a memory engine for AI
// agents: a tree of markdown notes (domain › topic › subtopic › entry) that
// it curates with audited operations and answers queries from, in tiers.
// The engine is the embedded WebAssembly module, run by host/runtime.
//
//	arbor init ~/notes && cd ~/notes
//	arbor add --path engineering/billing --title "Invoice retry policy" \
//	  --narrative "Failed invoices are retried three times." --reason "billing sync"
//	arbor query "how often are invoices retried?"
//
// Run `arbor --help` for every command. Exit codes: 0 ok, 1 error
// (including a failed curate operation), 2 usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"strings"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

func main() {
	os.Exit(runKeepingFlags(os.Args[1:]))
}

// runKeepingFlags runs the command line on the process's own streams and
// then puts back the flags their descriptors had (O_NONBLOCK above all):
// they belong to open files shared with the shell and the other processes
// of a pipeline. The deferred restore runs on every return, including the
// commands' own handling of SIGINT and SIGTERM, and while a panic unwinds.
func runKeepingFlags(args []string) int {
	defer keepStdioFlags()()
	return run(args, os.Stdin, os.Stdout, os.Stderr)
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// app is one invocation: the streams and the global flags.
type app struct {
	ctx       context.Context
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
	root      string // --root
	json      bool   // --json
	color     string // --color: auto, always or never
	fixedTime string // --fixed-time (undocumented): freezes the engine's clock
	// p colors what goes to stdout, ep what goes to stderr.
	p, ep palette
}

// globalFlags registers the flags every command accepts, before or after
// its name.
func (a *app) globalFlags(fs *flag.FlagSet) {
	fs.StringVar(&a.root, "root", a.root, "the memory root `DIR` (default: $ARBOR_ROOT, else the nearest folder at or above the current one that holds .arbor/)")
	fs.BoolVar(&a.json, "json", a.json, "print the result as JSON instead of text")
	fs.StringVar(&a.color, "color", a.color, "color the text output `WHEN`: auto, always or never (auto: on a terminal, unless NO_COLOR is set)")
	fs.StringVar(&a.fixedTime, "fixed-time", a.fixedTime, "")
}

// hidden flags work but are not listed in help.
var hidden = map[string]bool{"fixed-time": true}

// run executes one command line and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{ctx: context.Background(), stdin: stdin, stdout: stdout, stderr: stderr, color: "auto"}
	global := newFlagSet("arbor")
	a.globalFlags(global)
	version := global.Bool("version", false, "print the version and exit")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout)
			return exitOK
		}
		return a.usageError(nil, err.Error())
	}
	if *version {
		return a.printVersion()
	}
	rest := global.Args()
	if len(rest) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	name, rest := rest[0], rest[1:]
	if name == "help" {
		return a.help(rest)
	}
	cmd := lookup(name)
	if cmd == nil {
		return a.usageError(nil, fmt.Sprintf("unknown command %q", name))
	}
	fs := newFlagSet(cmd.name)
	a.globalFlags(fs)
	runner := cmd.setup(fs)
	pos, err := parseInterleaved(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandUsage(stdout, cmd, fs)
			return exitOK
		}
		return a.usageError(cmd, err.Error())
	}
	if len(pos) < cmd.minArgs || (cmd.maxArgs >= 0 && len(pos) > cmd.maxArgs) {
		return a.usageError(cmd, fmt.Sprintf("%s: wrong number of arguments", cmd.name))
	}
	if err := a.setColors(); err != nil {
		return a.usageError(cmd, err.Error())
	}
	err = runner(a, pos)
	var ue usageErr
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return a.usageError(cmd, string(ue))
	}
	fmt.Fprintf(stderr, "%s %s\n", a.ep.red("arbor:"), strings.TrimPrefix(err.Error(), "arbor: "))
	return exitError
}

// printVersion prints Arbor's release (the module version it was installed
// at, when `go install …@version` built it), the ABI it speaks and the Go it
// was built with.
func (a *app) printVersion() int {
	v := struct {
		Version    string `json:"version"`
		Module     string `json:"module,omitempty"`
		ABIVersion int    `json:"abiVersion"`
		GoVersion  string `json:"goVersion"`
		Platform   string `json:"platform"`
	}{api.Version, installedVersion(), runtime.ABIVersion, goruntime.Version(), goruntime.GOOS + "/" + goruntime.GOARCH}
	if a.json {
		if err := printJSON(a.stdout, mustJSON(v)); err != nil {
			fmt.Fprintf(a.stderr, "arbor: %v\n", err)
			return exitError
		}
		return exitOK
	}
	shown := v.Version
	if v.Module != "" {
		shown = v.Module
	}
	fmt.Fprintf(a.stdout, "arbor %s (ABI %d, %s %s)\n", shown, v.ABIVersion, v.GoVersion, v.Platform)
	return exitOK
}

// setColors decides, once the flags are parsed, whether each stream is
// colored.
func (a *app) setColors() error {
	on, err := colorFor(a.color, a.stdout)
	if err != nil {
		return err
	}
	a.p.on = on
	a.ep.on, _ = colorFor(a.color, a.stderr)
	return nil
}

// usageErr is a mistake in the command line: exit code 2.
type usageErr string

func (e usageErr) Error() string { return string(e) }

func (a *app) usageError(cmd *command, msg string) int {
	fmt.Fprintf(a.stderr, "arbor: %s\n", msg)
	if cmd != nil {
		fmt.Fprintf(a.stderr, "usage: arbor %s\nRun 'arbor %s --help' for its flags.\n", cmd.synopsis(), cmd.name)
	} else {
		fmt.Fprintln(a.stderr, "Run 'arbor --help' for the commands.")
	}
	return exitUsage
}

func (a *app) help(args []string) int {
	if len(args) == 0 {
		printUsage(a.stdout)
		return exitOK
	}
	cmd := lookup(args[0])
	if cmd == nil {
		return a.usageError(nil, fmt.Sprintf("unknown command %q", args[0]))
	}
	fs := newFlagSet(cmd.name)
	a.globalFlags(fs)
	cmd.setup(fs)
	printCommandUsage(a.stdout, cmd, fs)
	return exitOK
}
