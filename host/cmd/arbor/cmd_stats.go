package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/serve"
)

var statsCommand = &command{
	name:    "stats",
	summary: "entries per domain, maturity tiers, relations, index size, warnings",
	help: "Counts what the tree holds: entries, context files and relations, the entries\n" +
		"per domain and per lifecycle tier (draft, validated, core), the size of the\n" +
		"persisted index and the audit log, and the files the engine could not use.",
	example:  "arbor stats",
	examples: []string{"arbor stats --json | jq .domains"},
	setup: func(*flag.FlagSet) func(*app, []string) error {
		return func(a *app, _ []string) error {
			return a.withEngine(func(eng engine) error {
				if _, served := eng.(*serve.Client); served {
					// A server writes the index when it flushes, not as
					// each command ends: flush first, so that the sizes
					// measured below are the ones a command that opens
					// the engine itself finds (the last one's close).
					if _, err := eng.CallMethod(a.ctx, "flush", nil); err != nil {
						return err
					}
				}
				raw, err := eng.CallMethod(a.ctx, "stats", nil)
				if err != nil {
					return err
				}
				var res statsReport
				if err := json.Unmarshal(raw, &res.StatsResult); err != nil {
					return fmt.Errorf("stats: decode result: %w", err)
				}
				res.Disk = measureDisk(eng.Root())
				if a.json {
					return printJSON(a.stdout, mustJSON(res))
				}
				printStats(a.stdout, a.p, res)
				return nil
			})
		}
	},
}

// statsReport is the engine's stats and what the host measures on disk.
type statsReport struct {
	api.StatsResult
	Disk disk `json:"disk"`
}

// disk is the size of the derived state under .arbor/.
type disk struct {
	Index      size `json:"index"`      // .arbor/index: the persisted search index
	State      size `json:"state"`      // .arbor/state.json: lifecycle signals
	Audit      size `json:"audit"`      // .arbor/audit.jsonl and its rotated logs: one line per operation
	AuditLines int  `json:"auditLines"` // operations recorded
}

type size struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

func (s size) String() string {
	if s.Files == 0 {
		return "none"
	}
	if s.Files == 1 {
		return bytesHuman(s.Bytes)
	}
	return fmt.Sprintf("%d files · %s", s.Files, bytesHuman(s.Bytes))
}

// measureDisk sizes what lives under root/.arbor; what is missing counts
// as empty.
func measureDisk(root string) disk {
	dir := filepath.Join(root, rootMarker)
	var d disk
	d.Index = folderSize(filepath.Join(dir, "index"))
	if fi, err := os.Stat(filepath.Join(dir, "state.json")); err == nil && fi.Mode().IsRegular() {
		d.State.Files, d.State.Bytes = 1, fi.Size()
	}
	// The current log and the ones rotated out of it (core/internal/curate).
	logs, _ := filepath.Glob(filepath.Join(dir, "audit.*jsonl"))
	for _, name := range logs {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		d.Audit.Files++
		d.Audit.Bytes += int64(len(b))
		d.AuditLines += bytes.Count(b, []byte{'\n'})
	}
	return d
}

// folderSize counts the regular files below dir and their bytes; what
// cannot be read counts as nothing.
func folderSize(dir string) size {
	var s size
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				s.Files++
				s.Bytes += fi.Size()
			}
		}
		return nil
	})
	return s
}

func printStats(w io.Writer, p palette, s statsReport) {
	label := func(l string) string { return p.bold(fmt.Sprintf("%-10s", l)) }
	fmt.Fprintf(w, "%s %d\n%s %d\n%s %d\n", label("entries"), s.Entries, label("contexts"), s.Contexts, label("relations"), s.Relations)
	fmt.Fprintf(w, "%s draft %d · validated %d · core %d\n", label("maturity"), s.Maturity[api.MaturityDraft], s.Maturity[api.MaturityValidated], s.Maturity[api.MaturityCore])
	fmt.Fprintf(w, "%s %s\n", label("index"), s.Disk.Index)
	if s.Disk.Audit.Files == 0 {
		fmt.Fprintf(w, "%s none\n", label("audit"))
	} else {
		fmt.Fprintf(w, "%s %s, %d operations\n", label("audit"), s.Disk.Audit, s.Disk.AuditLines)
	}
	if len(s.Domains) > 0 {
		names := make([]string, 0, len(s.Domains))
		for d := range s.Domains {
			names = append(names, d)
		}
		sort.Strings(names)
		fmt.Fprintln(w, p.bold("domains"))
		t := table{right: map[int]bool{1: true}}
		for _, d := range names {
			t.add(d, fmt.Sprint(s.Domains[d]))
		}
		t.write(w, "  ", func(_, col int, cell string) string {
			if col == 0 {
				return p.cyan(cell)
			}
			return cell
		})
	}
	if len(s.Warnings) > 0 {
		fmt.Fprintln(w, p.yellow(fmt.Sprintf("warnings (%d)", len(s.Warnings))))
		for _, warn := range s.Warnings {
			fmt.Fprintf(w, "  %s: %s\n", warn.Path, warn.Message)
		}
	}
}
