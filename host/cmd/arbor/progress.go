package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/arbormem/arbor/core/api"
)

// phaseProgress draws the engine's progress reports (runtime.WithProgress)
// on one line of a terminal: a tree read and indexed at open (a cold
// build), the operations of a big curate or ingest, their indexing. The
// engine reports only long runs, about once a percent.
type phaseProgress struct {
	w     io.Writer // the terminal
	shown bool
}

var phaseNouns = map[string]string{
	api.PhaseRead:  "reading the tree",
	api.PhaseWrite: "writing",
	api.PhaseIndex: "indexing",
	api.PhaseMerge: "merging the index",
}

var phaseUnits = map[string]string{
	api.PhaseRead:  "files",
	api.PhaseWrite: "operations",
	api.PhaseIndex: "documents",
	api.PhaseMerge: "documents",
}

func (p *phaseProgress) show(pr api.Progress) {
	noun, unit := phaseNouns[pr.Phase], phaseUnits[pr.Phase]
	if noun == "" {
		noun, unit = pr.Phase, "done"
	}
	switch {
	case pr.Total <= 0:
		fmt.Fprintf(p.w, "\r\x1b[2K%s: %d %s", noun, pr.Done, unit)
	case pr.Done >= pr.Total:
		p.clear()
		return
	default:
		filled := min(pr.Done*barWidth/pr.Total, barWidth)
		bar := strings.Repeat("█", filled) + strings.Repeat("░", barWidth-filled)
		fmt.Fprintf(p.w, "\r\x1b[2K%s %s %d/%d %s", bar, noun, pr.Done, pr.Total, unit)
	}
	p.shown = true
}

// clear erases the line, if anything was drawn on it.
func (p *phaseProgress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[2K")
		p.shown = false
	}
}
