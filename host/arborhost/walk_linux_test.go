package arborhost

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// An open lists every folder of the tree ahead of the module, and what a
// listing leaves to the collector is what makes it stop the world while
// the module runs (walker): the answers of a walk allocate per folder (its
// path), never per file.
func TestWalkAnswersAllocatePerFolder(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates")
	}
	r, dir := newRoot(t)
	const folders, files = 12, 40
	for f := range folders {
		for i := range files {
			mustWrite(t, filepath.Join(dir, fmt.Sprintf("topic%02d", f), fmt.Sprintf("entry-%03d.md", i)), "x")
		}
	}
	walk := func() {
		after := ""
		for {
			out, need, more, err := r.walkChunk(r.answerBuf(4096), "", after, 4096)
			if err != nil || need != 0 {
				t.Fatalf("walk after %q: need %d, %v", after, need, err)
			}
			r.putAnswerBuf(out)
			if more == "" {
				return
			}
			after = more
		}
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // the pools kept between walks
	walk()
	// A path per folder listed or passed through again to resume, and the
	// open of each folder (its name copied for openat): a few per folder
	// (73 here, where a string and a copy of each name made 817).
	if got, most := testing.AllocsPerRun(5, walk), float64(8*folders); got > most {
		t.Errorf("a walk of %d folders of %d files allocated %.0f times, want at most %.0f", folders, files, got, most)
	}
}
