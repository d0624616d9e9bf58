package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/curate"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/core/ingest"
	"github.com/arbormem/arbor/host/runtime"
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
	help: "Splits files into entries without an LLM and writes them through curate: markdown by\n" +
		"heading, plain text by paragraph, JSON/JSONL by record, CSV/TSV by row, .eml messages,\n" +
		".ics events, Go/JS/TS/Python by top-level symbol, chat transcripts (LoCoMo,\n" +
		"LongMemEval, {role, content} lists) by turn or session. Folders are read recursively;\n" +
		"hidden and binary files, and the memory root itself, are skipped with a note. A file\n" +
		"in a folder is named <folder>/<path inside it>, a file given alone by its base name:\n" +
		"the name is the source's identity. Re-ingesting an unchanged file writes nothing; a\n" +
		"changed one updates only the entries whose pieces changed (docs/ABI.md §4.11).\n" +
		"Shows a progress bar on a terminal, one line per file otherwise. Exits 1 if a file failed.",
	example: "arbor ingest ~/notes mail/2026-01-13.eml",
	minArgs: 1,
	maxArgs: -1,
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		var opts ingest.Options
		contextTurns := fs.Int("context-turns", 2, "chats between people: preceding turns kept in each turn's entry")
		fs.StringVar(&opts.Domain, "domain", "", "put every entry under this `DOMAIN` instead of the derived one")
		fs.IntVar(&opts.MaxSourceBytes, "max-size", ingest.DefaultMaxSourceBytes, "refuse files larger than this many `BYTES`")
		return func(a *app, args []string) error {
			if *contextTurns < 0 {
				return usageErr("ingest: --context-turns must be 0 or more")
			}
			opts.ContextTurns = contextTurns
			return a.ingest(args, opts)
		}
	},
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
// over every batch, plus what was skipped.
type ingestReport struct {
	Files   []engine.IngestFile  `json:"files"`
	Skipped []ingestSkip         `json:"skipped"`
	Summary engine.IngestSummary `json:"summary"`
}

func (a *app) ingest(args []string, opts ingest.Options) error {
	root, err := a.findRoot()
	if err != nil {
		return err
	}
	var srcs []ingestSource
	rep := ingestReport{Files: []engine.IngestFile{}, Skipped: []ingestSkip{}}
	for _, arg := range args {
		if err := collect(arg, root, &srcs, &rep.Skipped); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
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
	err = a.withEngine(func(eng *runtime.Engine) error {
		var batch []ingest.File
		var names []string
		size := 0
		send := func() error {
			if len(batch) == 0 {
				return nil
			}
			prog.sending(names)
			res, err := eng.Ingest(a.ctx, engine.IngestParams{Files: batch, Options: opts})
			if err != nil {
				return err
			}
			for _, f := range res.Files {
				rep.Files = append(rep.Files, f)
				prog.done(f)
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
			if len(batch) > 0 && (len(batch) >= ingestBatchFiles || size+len(f.Content) > ingestBatchBytes) {
				if err := send(); err != nil {
					return err
				}
			}
			batch, names, size = append(batch, f), append(names, f.Name), size+len(f.Content)
		}
		return send()
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
		if f.Status == ingest.StatusFailed {
			s.FailedFiles++
		}
	}
	if a.json {
		if err := printJSON(a.stdout, mustJSON(rep)); err != nil {
			return err
		}
	} else {
		prog.report(rep)
	}
	if n := rep.Summary.FailedFiles; n > 0 {
		return fmt.Errorf("%d of %d files failed", n, rep.Summary.Files)
	}
	return nil
}

// collect adds the files at arg: a file under its base name, a folder's
// files (recursively) under <folder name>/<relative path>. Hidden names,
// anything inside the memory root, and what is not a regular file are
// skipped with a note.
func collect(arg, root string, srcs *[]ingestSource, skipped *[]ingestSkip) error {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		if inside(abs, root) {
			*skipped = append(*skipped, ingestSkip{arg, "inside the memory root"})
			return nil
		}
		*srcs = append(*srcs, ingestSource{abs, filepath.Base(abs), fi.Size()})
		return nil
	}
	base := filepath.Base(abs)
	return filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			*skipped = append(*skipped, ingestSkip{p, err.Error()})
			return nil
		}
		rel, _ := filepath.Rel(abs, p)
		shown := filepath.ToSlash(filepath.Join(base, rel))
		switch {
		case p == abs:
			if inside(abs, root) {
				*skipped = append(*skipped, ingestSkip{arg, "inside the memory root"})
				return fs.SkipDir
			}
			return nil
		case strings.HasPrefix(d.Name(), "."):
			*skipped = append(*skipped, ingestSkip{shown, "hidden"})
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		case d.IsDir() && p == root:
			*skipped = append(*skipped, ingestSkip{shown, "the memory root"})
			return fs.SkipDir
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			*skipped = append(*skipped, ingestSkip{shown, "not a regular file"})
			return nil
		}
		info, err := d.Info()
		if err != nil {
			*skipped = append(*skipped, ingestSkip{shown, err.Error()})
			return nil
		}
		*srcs = append(*srcs, ingestSource{p, shown, info.Size()})
		return nil
	})
}

// inside reports whether p is root or below it.
func inside(p, root string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) || p == root
}

// readSource reads a file for the engine. A file too large to send or not
// UTF-8 text fails here, with the engine's wording (skip and failed are
// nil when the file is to be sent); a binary file (a NUL byte in its first
// 8 KiB, as git decides) is skipped.
func readSource(s ingestSource, opts ingest.Options) (ingest.File, *ingestSkip, *engine.IngestFile) {
	fail := func(msg string) (ingest.File, *ingestSkip, *engine.IngestFile) {
		return ingest.File{}, nil, &engine.IngestFile{Name: s.name, Format: string(ingest.FormatOf(s.name)), Status: ingest.StatusFailed, Message: msg, Applied: []curate.Applied{}}
	}
	if limit := opts.MaxSourceBytes; limit > 0 && s.size > int64(limit) {
		return fail(fmt.Sprintf("%v: %d bytes is over the %d-byte limit", ingest.ErrBadInput, s.size, limit))
	}
	data, err := os.ReadFile(s.path)
	if err != nil {
		return fail(err.Error())
	}
	if bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0 {
		return ingest.File{}, &ingestSkip{s.name, "binary file"}, nil
	}
	f := ingest.File{Name: s.name, Content: string(data)}
	if !utf8.Valid(data) {
		// JSON would carry the bytes as U+FFFD: let the splitter say where.
		_, _, err := ingest.Split(f, opts)
		return fail(err.Error())
	}
	return f, nil, nil
}

// ingestProgress shows an ingest as it goes.
type ingestProgress interface {
	skipped(ingestSkip)
	sending(names []string) // a batch goes to the engine
	done(engine.IngestFile)
	finish()             // the last batch is done
	report(ingestReport) // the closing text
}

type nopProgress struct{}

func (nopProgress) skipped(ingestSkip)     {}
func (nopProgress) sending([]string)       {}
func (nopProgress) done(engine.IngestFile) {}
func (nopProgress) finish()                {}
func (nopProgress) report(ingestReport)    {}

// lineProgress prints one plain line per file, for pipes and logs.
type lineProgress struct{ w io.Writer }

func (p *lineProgress) skipped(s ingestSkip) {
	fmt.Fprintf(p.w, "- skipped   %s: %s\n", s.Path, s.Reason)
}
func (p *lineProgress) sending([]string) {}
func (p *lineProgress) finish()          {}
func (p *lineProgress) done(f engine.IngestFile) {
	fmt.Fprintln(p.w, fileLine(f))
}
func (p *lineProgress) report(r ingestReport) { fmt.Fprintln(p.w, summaryLine(r)) }

// fileLine is one file's outcome: "✓ added     notes/a.md (markdown): 5 entries, 5 added".
func fileLine(f engine.IngestFile) string {
	mark := map[string]string{ingest.StatusAdded: "✓", ingest.StatusUpdated: "✓", ingest.StatusUnchanged: "=", ingest.StatusFailed: "✗"}[f.Status]
	line := fmt.Sprintf("%s %-9s %s", mark, f.Status, f.Name)
	if f.Format != "" {
		line += " (" + f.Format + ")"
	}
	if f.Status == ingest.StatusFailed && f.Failed == 0 {
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
	return line
}

func summaryLine(r ingestReport) string {
	s := r.Summary
	line := fmt.Sprintf("%s (%d failed): %d entries added, %d updated, %d deleted, %d unchanged", plural(s.Files, "file", "files"), s.FailedFiles, s.Added, s.Updated, s.Deleted, s.Unchanged)
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
// needs attention (failures, skipped files) and the summary.
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
func (p *barProgress) done(engine.IngestFile) {
	p.n++
	p.draw("")
}
func (p *barProgress) finish() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[2K")
	}
}
func (p *barProgress) report(r ingestReport) {
	out := p.out
	for _, f := range r.Files {
		if f.Status == ingest.StatusFailed {
			fmt.Fprintln(out, fileLine(f))
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(out, "- skipped   %s: %s\n", s.Path, s.Reason)
	}
	fmt.Fprintln(out, summaryLine(r))
}
