package main

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestPhaseProgress(t *testing.T) {
	var b strings.Builder
	p := &phaseProgress{w: &b}
	p.clear()
	if b.Len() != 0 {
		t.Fatalf("clear before anything drawn wrote %q", b.String())
	}
	p.show(api.Progress{Phase: api.PhaseRead, Done: 3000})
	p.show(api.Progress{Phase: api.PhaseIndex, Done: 100, Total: 400})
	p.show(api.Progress{Phase: api.PhaseIndex, Done: 400, Total: 400})
	want := "\r\x1b[2Kreading the tree: 3000 files" +
		"\r\x1b[2K" + strings.Repeat("█", 7) + strings.Repeat("░", 21) + " indexing 100/400 documents" +
		"\r\x1b[2K"
	if b.String() != want {
		t.Fatalf("drew %q\nwant %q", b.String(), want)
	}
	b.Reset()
	p.clear()
	if b.Len() != 0 {
		t.Fatalf("the last report erased the line; clear wrote %q", b.String())
	}
}
