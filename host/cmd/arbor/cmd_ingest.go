package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/api"
)

// Files go to the engine in batches: one call per batch keeps the request
// small and lets the progress bar move, while one curate per batch keeps
// the index and audit-log writes few.
const (
	ingestBatchFiles = 32
	ingestBatchBytes = 2 << 20
)

var ingestCommand = &command{
	name:    "ingest",
	args:    "PATH...",
	summary: "split files and folders into entries (markdown, text, JSON, CSV, e-mail, calendar, code, chats)",
	help: "Splits files into entries without an LLM and writes them through curate: a markdown\n" +
		"note whole, plain text by paragraph, JSON/JSONL by record, CSV/TSV by row, .eml messages,\n" +
		".ics events, Go/JS/TS/Python by top-level symbol, chat transcripts (LoCoMo,\n" +
		"LongMemEval, {role, content} lists) by turn or session. Folders are read recursively;\n" +
		"hidden and binary files are skipped with a note; a path inside the memory root, or a\n" +
		"folder holding it (compared by real paths, through symbolic links), is refused. The\n" +
		"engine detects each file's encoding: UTF-8, UTF-16 with a byte-order mark, else\n" +
		"Windows-1252 (which reads Latin-1). A file in a folder is named\n" +
		"<folder>/<path inside it>, a file given alone by its base name:\n" +
		"the name is the source's identity. Re-ingesting an unchanged file writes nothing; a\n" +
		"changed one updates only the entries whose pieces changed, where they now live.\n" +
		"A note keeps its shape: its folders are domain/topic/subtopic (deeper ones fold into\n" +
		"the last), its front matter (title, description, tags, aliases, dates, other keys) is\n" +
		"the entry's, its headings stay in the text, its links to other notes ([x](other.md),\n" +
		"[[other]]) become relations; a front matter that does not parse is kept as text, with\n" +
		"a warning (docs/ABI.md §4.11).\n" +
		"With --prune, the sources ingested earlier from a folder given here (names under\n" +
		"<folder>/) whose file is gone have their entries deleted, so that the tree mirrors the\n" +
		"folder; entries the user wrote or edited are kept. A folder that could not be read\n" +
		"whole is not pruned, nor an empty one (a share not mounted?) without --prune-empty.\n" +
		"A folder's name belongs to the folder first ingested under it (by its real path): a\n" +
		"second folder of that name is refused, and --name ingests it under another.\n" +
		"Shows a progress bar on a terminal, one line per file otherwise. Exits 1 if a file failed.",
	example: "arbor ingest ~/notes mail/2026-01-13.eml",
	examples: []string{
		"arbor ingest --prune ~/notes  # also drop the entries of deleted notes",
		"arbor ingest --name home-notes ~/home/notes  # sources home-notes/...",
	},
	minArgs: 1,
	maxArgs: -1,
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		var opts api.IngestOptions
		contextTurns := fs.Int("context-turns", 2, "chats between people: preceding turns kept in each turn's entry")
		fs.StringVar(&opts.Domain, "domain", "", "put every entry under this `DOMAIN` instead of the derived one")
		fs.IntVar(&opts.MaxSourceBytes, "max-size", api.DefaultMaxSourceBytes, "refuse files larger than this many `BYTES`")
		var f ingestFlags
		fs.BoolVar(&f.prune, "prune", false, "delete the entries of files gone from the folders given")
		fs.BoolVar(&f.pruneEmpty, "prune-empty", false, "with --prune, also prune a folder that is empty")
		fs.StringVar(&f.name, "name", "", "ingest the folder given under this source `NAME` instead of its own")
		fs.BoolVar(&f.moved, "moved", false, "the folders given moved on disk: they take the place of those their names were ingested from")
		return func(a *app, args []string) error {
			if *contextTurns < 0 {
				return usageErr("ingest: --context-turns must be 0 or more")
			}
			if f.pruneEmpty && !f.prune {
				return usageErr("ingest: --prune-empty goes with --prune")
			}
			if f.name != "" {
				if len(args) != 1 {
					return usageErr("ingest: --name names one folder: give one PATH")
				}
				name, err := api.CleanPath(f.name)
				if err != nil {
					return usageErr(fmt.Sprintf("ingest: --name: %v", err))
				}
				f.name = name
			}
			opts.ContextTurns = contextTurns
			return a.ingest(args, opts, f)
		}
	},
}

// ingestFlags are the flags of ingest that choose what is sent and pruned.
type ingestFlags struct {
	prune, pruneEmpty bool
	// name replaces the folder's own name in its sources' names.
	name string
	// moved: the folders moved on disk (api.IngestParams.Relocated).
	moved bool
}

// ingestSkip is a file left out before reaching the engine, and why.
type ingestSkip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// ingestSource is one file to send: its path on disk and its source name.
type ingestSource struct {
	path, name string
	size       int64
}

// ingestReport is what `arbor ingest --json` prints: the engine's results
// over every batch (the removed sources last), plus what was skipped.
type ingestReport struct {
	Files   []api.IngestFile  `json:"files"`
	Skipped []ingestSkip      `json:"skipped"`
	Summary api.IngestSummary `json:"summary"`
	// Warnings are the engine's, once per prefix and code over the calls.
	Warnings []api.IngestWarning `json:"warnings,omitempty"`
}

func (a *app) ingest(args []string, opts api.IngestOptions, flags ingestFlags) error {
	root, err := a.findRoot()
	if err != nil {
		return err
	}
	// Sources and the root are compared by their real paths: through a
	// symbolic link, a folder holding the root (or inside it) is another
	// spelling of the same files.
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return fmt.Errorf("ingest: the memory root: %w", err)
	}
	var srcs []ingestSource
	var prefixes []string
	// origins: where each folder's files come from, by prefix; folders:
	// the argument that gave each prefix, for the messages.
	origins, folders := map[string]string{}, map[string]string{}
	rep := ingestReport{Files: []api.IngestFile{}, Skipped: []ingestSkip{}}
	for _, arg := range args {
		prefix, origin, whole, err := collect(arg, flags.name, root, &srcs, &rep.Skipped)
		if err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		if prefix != "" {
			if o, ok := origins[prefix]; ok && o != origin {
				return fmt.Errorf("ingest: %s and %s are both named %s: ingest one of them apart, under another name (--name NAME)", folders[prefix], arg, strings.TrimSuffix(prefix, "/"))
			}
			origins[prefix], folders[prefix] = origin, arg
		}
		switch {
		case !flags.prune || prefix == "":
		case whole:
			prefixes = append(prefixes, prefix)
		default:
			rep.Skipped = append(rep.Skipped, ingestSkip{arg, "not pruned: part of the folder could not be read"})
		}
	}
	if len(origins) == 0 {
		origins = nil
	}
	var prog ingestProgress = &lineProgress{w: a.stdout}
	switch {
	case a.json:
		prog = nopProgress{}
	case isTerminal(a.stderr):
		prog = &barProgress{w: a.stderr, out: a.stdout, total: len(srcs)}
	}
	if !a.json {
		for _, s := range rep.Skipped {
			prog.skipped(s)
		}
	}
	err = a.withEngine(func(eng engine) error {
		var batch []api.SourceFile
		var names []string
		size := 0
		// The last call prunes: the files of the earlier ones (and those
		// not sent: unreadable, binary) still exist, so it keeps them.
		send := func(last bool) error {
			p := api.IngestParams{Files: batch, Origins: origins, Relocated: flags.moved, IngestOptions: opts}
			if last && prefixes != nil {
				p.Prune, p.Keep, p.PruneEmpty = prefixes, pruneKeep(srcs, names), flags.pruneEmpty
			} else if len(batch) == 0 {
				return nil
			}
			if len(names) > 0 {
				prog.sending(names)
			}
			raw, err := eng.CallMethod(a.ctx, "ingest", p)
			if err != nil {
				return err
			}
			var res api.IngestResult
			if err := json.Unmarshal(raw, &res); err != nil {
				return fmt.Errorf("decode result: %w", err)
			}
			for i, f := range res.Files {
				rep.Files = append(rep.Files, f)
				if i < len(batch) {
					prog.done(f)
				} else {
					prog.removed(f) // the sources pruned come after the files
				}
			}
			for _, w := range res.Warnings {
				if !slices.ContainsFunc(rep.Warnings, func(o api.IngestWarning) bool { return o.Code == w.Code && o.Prefix == w.Prefix }) {
					rep.Warnings = append(rep.Warnings, w)
				}
			}
			batch, names, size = nil, nil, 0
			return nil
		}
		for _, s := range srcs {
			f, skip, failed := readSource(s, opts)
			if skip != nil {
				rep.Skipped = append(rep.Skipped, *skip)
				prog.skipped(*skip)
				continue
			}
			if failed != nil {
				rep.Files = append(rep.Files, *failed)
				prog.done(*failed)
				continue
			}
			if len(batch) > 0 && (len(batch) >= ingestBatchFiles || size+len(f.Data) > ingestBatchBytes) {
				if err := send(false); err != nil {
					return err
				}
			}
			batch, names, size = append(batch, f), append(names, f.Name), size+len(f.Data)
		}
		return send(true)
	})
	prog.finish()
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	for _, f := range rep.Files {
		s := &rep.Summary
		s.Files++
		s.Added += f.Added
		s.Updated += f.Updated
		s.Deleted += f.Deleted
		s.Unchanged += f.Unchanged
		s.Failed += f.Failed
		switch f.Status {
		case api.IngestFailed:
			s.FailedFiles++
		case api.IngestRemoved:
			s.Removed++
		}
	}
	if a.json {
		if err := printJSON(a.stdout, mustJSON(rep)); err != nil {
			return err
		}
	} else {
		prog.report(rep)
		for _, w := range rep.Warnings {
			fmt.Fprintln(a.stdout, warningLine(w, folders[w.Prefix], origins[w.Prefix]))
		}
	}
	if n := rep.Summary.FailedFiles; n > 0 {
		return fmt.Errorf("%d of %d files failed", n, rep.Summary.Files)
	}
	return nil
}

// collect adds the files at arg: a file under its base name, a folder's
// files (recursively) under <folder name>/<relative path>, or
// <name>/<relative path> when name is set, both as given (a symbolic link
// is followed and named as written). Hidden names and what is not a
// regular file are skipped with a note. A source inside the memory root,
// or a folder holding it, is refused: root is the root's real path, and
// arg is compared by its own.
//
// For a folder it walked, prefix is "<folder name>/", the start of the
// names of its files, origin its real path (the engine keeps one origin
// per prefix), and whole reports whether every file in it could be
// listed: pruning a folder read in part would delete the entries of the
// files it missed. prefix is "" for a file, and for a folder whose name
// cannot start a source name (a hidden one, the file-system root).
// A file has no origin: the same name from another folder is taken as a
// new version of the file, as a download saved again elsewhere is.
func collect(arg, name, root string, srcs *[]ingestSource, skipped *[]ingestSkip) (prefix, origin string, whole bool, err error) {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return "", "", false, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "", false, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", "", false, err
	}
	switch {
	case inside(real, root):
		return "", "", false, fmt.Errorf("%s is inside the memory root %s: its files are the memory itself", arg, root)
	case fi.IsDir() && inside(root, real):
		return "", "", false, fmt.Errorf("%s holds the memory root %s: ingesting it would copy the memory into itself; give the folders beside the root instead", arg, root)
	case !fi.IsDir() && name != "":
		return "", "", false, fmt.Errorf("--name names a folder's sources; %s is a file, named by its base name", arg)
	case !fi.IsDir():
		*srcs = append(*srcs, ingestSource{real, filepath.Base(abs), fi.Size()})
		return "", "", false, nil
	}
	base := filepath.Base(abs)
	if name != "" {
		base = filepath.FromSlash(name)
	}
	whole = true
	err = filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			*skipped = append(*skipped, ingestSkip{p, err.Error()})
			whole = false
			return nil
		}
		rel, _ := filepath.Rel(real, p)
		shown := filepath.ToSlash(filepath.Join(base, rel))
		switch {
		case p == real:
			return nil
		case strings.HasPrefix(d.Name(), "."):
			*skipped = append(*skipped, ingestSkip{shown, "hidden"})
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			// Symbolic links are not followed: one could lead into the root.
			*skipped = append(*skipped, ingestSkip{shown, "not a regular file"})
			return nil
		}
		info, err := d.Info()
		if err != nil {
			*skipped = append(*skipped, ingestSkip{shown, err.Error()})
			whole = false
			return nil
		}
		*srcs = append(*srcs, ingestSource{p, shown, info.Size()})
		return nil
	})
	if err != nil {
		return "", "", false, err
	}
	prefix = filepath.ToSlash(base) + "/"
	if api.CheckPrefix(prefix) != nil {
		return "", "", false, nil
	}
	return prefix, real, whole, nil
}

// pruneKeep names the sources found on disk that the last call does not
// send (sent holds its names): the prune must leave them alone.
func pruneKeep(srcs []ingestSource, sent []string) []string {
	last := map[string]bool{}
	for _, n := range sent {
		last[n] = true
	}
	keep := []string{}
	for _, s := range srcs {
		if !last[s.name] {
			keep = append(keep, s.name)
		}
	}
	return keep
}

// inside reports whether p is root or below it.
func inside(p, root string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) || p == root
}

// readSource reads a file for the engine, which detects its encoding
// (api.DecodeText). A file too large to send fails here, with the engine's
// wording (skip and failed are nil when the file is to be sent); a binary
// file (api.LooksBinary: a NUL byte in its first 8 KiB, as git decides) is
// skipped.
func readSource(s ingestSource, opts api.IngestOptions) (api.SourceFile, *ingestSkip, *api.IngestFile) {
	fail := func(msg string) (api.SourceFile, *ingestSkip, *api.IngestFile) {
		return api.SourceFile{}, nil, &api.IngestFile{Name: s.name, Format: string(api.FormatOf(s.name)), Status: api.IngestFailed, Message: msg, Applied: []api.Applied{}}
	}
	if limit := opts.MaxSourceBytes; limit > 0 && s.size > int64(limit) {
		return fail(fmt.Sprintf("%v: %d bytes is over the %d-byte limit", api.ErrBadInput, s.size, limit))
	}
	data, err := os.ReadFile(s.path)
	if err != nil {
		return fail(err.Error())
	}
	if api.LooksBinary(data) {
		return api.SourceFile{}, &ingestSkip{s.name, "binary file"}, nil
	}
	return api.SourceFile{Name: s.name, Data: data}, nil, nil
}

// ingestProgress shows an ingest as it goes.
type ingestProgress interface {
	skipped(ingestSkip)
	sending(names []string) // a batch goes to the engine
	done(api.IngestFile)
	removed(api.IngestFile) // a source pruned
	finish()                // the last batch is done
	report(ingestReport)    // the closing text
}

type nopProgress struct{}

func (nopProgress) skipped(ingestSkip)     {}
func (nopProgress) sending([]string)       {}
func (nopProgress) done(api.IngestFile)    {}
func (nopProgress) removed(api.IngestFile) {}
func (nopProgress) finish()                {}
func (nopProgress) report(ingestReport)    {}

// lineProgress prints one plain line per file, for pipes and logs.
type lineProgress struct{ w io.Writer }

func (p *lineProgress) skipped(s ingestSkip) {
	fmt.Fprintf(p.w, "- skipped   %s: %s\n", s.Path, s.Reason)
}
func (p *lineProgress) sending([]string) {}
func (p *lineProgress) finish()          {}
func (p *lineProgress) done(f api.IngestFile) {
	fmt.Fprintln(p.w, fileLine(f))
}
func (p *lineProgress) removed(f api.IngestFile) { p.done(f) }
func (p *lineProgress) report(r ingestReport)    { fmt.Fprintln(p.w, summaryLine(r)) }

// fileLine is one file's outcome: "✓ added     notes/a.md (markdown): 5 entries, 5 added",
// with its warnings ("… — warning: front matter not read …"), or a pruned
// source's: "- removed   notes/b.md (3 entries)".
func fileLine(f api.IngestFile) string {
	if f.Status == api.IngestRemoved {
		return fmt.Sprintf("- %-9s %s (%s)", f.Status, f.Name, plural(f.Deleted, "entry", "entries"))
	}
	mark := map[string]string{api.IngestAdded: "✓", api.IngestUpdated: "✓", api.IngestUnchanged: "=", api.IngestFailed: "✗"}[f.Status]
	line := fmt.Sprintf("%s %-9s %s", mark, f.Status, f.Name)
	if f.Format != "" {
		line += " (" + f.Format + ")"
	}
	if f.Status == api.IngestFailed && f.Failed == 0 {
		return line + ": " + f.Message
	}
	line += ": " + plural(f.Entries, "entry", "entries")
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{f.Added, "added"}, {f.Updated, "updated"}, {f.Deleted, "deleted"}, {f.Failed, "failed"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(parts) > 0 {
		line += ", " + strings.Join(parts, ", ")
	}
	if f.Message != "" {
		line += " — " + f.Message
	}
	for _, w := range f.Warnings {
		line += " — warning: " + w
	}
	return line
}

// warningLine is what the engine left undone for a folder (arg, whose
// real path is origin), with how to go on from the command line.
func warningLine(w api.IngestWarning, arg, origin string) string {
	switch w.Code {
	case api.IngestEmptyPrune:
		return fmt.Sprintf("! not pruned %s: the folder %s is empty, and its %s ingested before stayed (a share not mounted, a sync not done?); if it is meant to be empty, run again with --prune-empty, or delete their entries with arbor rm PATH --reason R",
			w.Prefix, arg, plural(w.Sources, "source", "sources"))
	case api.IngestOtherOrigin:
		if w.Origin == api.AgentOrigin {
			// No folder moved: --moved would hand the agent's documents to
			// this folder, whose prune then deletes them.
			return fmt.Sprintf("! not written %s: this memory holds under %[1]s documents an agent sent to arbor-ingest, which no folder holds: ingest %s under another name (arbor ingest --name NAME %[2]s)",
				w.Prefix, arg)
		}
		return fmt.Sprintf("! not written %s: this memory holds %[1]s from %s, not from %s: ingest %s under another name (arbor ingest --name NAME %s), or, if the folder moved there, run again with --moved",
			w.Prefix, w.Origin, origin, arg, arg)
	}
	return fmt.Sprintf("! %s %s: %s", w.Code, w.Prefix, w.Message)
}

func summaryLine(r ingestReport) string {
	s := r.Summary
	removed := ""
	if s.Removed > 0 {
		removed = fmt.Sprintf("%d removed, ", s.Removed)
	}
	line := fmt.Sprintf("%s (%s%d failed): %d entries added, %d updated, %d deleted, %d unchanged", plural(s.Files, "file", "files"), removed, s.FailedFiles, s.Added, s.Updated, s.Deleted, s.Unchanged)
	if s.Failed > 0 {
		line += fmt.Sprintf(", %d operations failed", s.Failed)
	}
	if len(r.Skipped) > 0 {
		line += fmt.Sprintf("; %d skipped", len(r.Skipped))
	}
	return line
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// barProgress redraws one status line on a terminal, then prints what
// needs attention (failures, removed sources, skipped files) and the
// summary.
type barProgress struct {
	w     io.Writer // the terminal
	out   io.Writer // the report
	total int
	n     int
	shown bool
}

const barWidth = 28

func (p *barProgress) draw(name string) {
	filled := 0
	if p.total > 0 {
		filled = p.n * barWidth / p.total
	}
	bar := strings.Repeat("█", filled) + strings.Repeat("░", barWidth-filled)
	fmt.Fprintf(p.w, "\r\x1b[2K%s %d/%d files  %s", bar, p.n, p.total, oneLine(name, 48))
	p.shown = true
}

func (p *barProgress) skipped(ingestSkip) {}
func (p *barProgress) sending(names []string) {
	p.draw(names[0])
}
func (p *barProgress) done(api.IngestFile) {
	p.n++
	p.draw("")
}
func (p *barProgress) removed(api.IngestFile) {}
func (p *barProgress) finish() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[2K")
	}
}
func (p *barProgress) report(r ingestReport) {
	out := p.out
	for _, f := range r.Files {
		if f.Status == api.IngestFailed || f.Status == api.IngestRemoved {
			fmt.Fprintln(out, fileLine(f))
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(out, "- skipped   %s: %s\n", s.Path, s.Reason)
	}
	fmt.Fprintln(out, summaryLine(r))
}
