package main

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReport checks that the report keeps the sizes it has no figures for
// as rows that say so, shows a failed host with its error and a host kept
// from an earlier run with that run's date, and writes plots that are
// well-formed SVG.
func TestReport(t *testing.T) {
	differ := 0
	res := &results{Sizes: map[string]*sizeResult{"10000": {
		Entries: 10000, Real: 10000, MiB: 7.3, Run: runInfo{Queries: 100},
		Hosts: map[string]*hostResult{
			"native":     {BuildMs: 4000, BuildCPUMs: 2000, OpenMs: 600, QueryP50: 1.5, QueryP95: 7, PeakRSSMiB: 200},
			"wazero":     {BuildMs: 15000, OpenMs: 2000, QueryP50: 25, QueryP95: 60, LinearMiB: 220, Differ: &differ},
			"node":       {Error: "exit status 1: out of memory"},
			"minisearch": {BuildMs: 2000, QueryP50: 80, QueryP95: 250, PeakRSSMiB: 500, From: "2026-11-26"},
		},
		CLI: &cliResult{Runs: 5, WallMs: 2200, CPUMs: 1600, PeakRSSMiB: 220},
	}}}
	dir := t.TempDir()
	if err := writeReport(filepath.Join(dir, "REPORT.md"), res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"| 10,000 | wazero | 15000 ms |", "100 of 100", "| 10,000 | node | failed: exit status 1: out of memory",
		"| 10,000 | minisearch (run of 2026-11-26) | 2000 ms |", "| 1,000 | not measured", "| 1,000,000 | not measured", "| 10,000 | 2200 ms | 1600 ms | 220 MiB | 5 |", "![Cold build (wall)](build.svg)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"build.svg", "query_p95.svg", "memory.svg", "cli_query.svg"} {
		svg, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		d := xml.NewDecoder(strings.NewReader(string(svg)))
		for {
			if _, err := d.Token(); err != nil {
				if err != io.EOF {
					t.Errorf("%s: %v", f, err)
				}
				break
			}
		}
	}
}

func TestOneLine(t *testing.T) {
	node := "exit status 1: node:internal/modules/run_main:123\n    triggerUncaughtException(\n    ^\n\npage.evaluate: Target page, context or browser has been closed\n    at Object.chromium (/x/hosts.mjs:117:26)\n    at async file:///x/hosts.mjs:171:37 {\n  log: []\n}\n\nNode.js v20.20.2\n"
	if got, want := oneLine(node), "exit status 1: page.evaluate: Target page, context or browser has been closed"; got != want {
		t.Errorf("oneLine = %q, want %q", got, want)
	}
	if got, want := oneLine("exit status 2: a | b"), "exit status 2: a / b"; got != want {
		t.Errorf("oneLine = %q, want %q", got, want)
	}
}
