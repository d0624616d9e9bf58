//go:build unix

package runtime

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// A folder MOVE through the Go host carries what it does not edit by
// fs_rename, unread: a 1.5 GB video (sparse here) and a FIFO named like a
// note move with the folder, where the MOVE refused both (it read each
// file to write it at its new place).
func TestMoveFolderCarriesByRename(t *testing.T) {
	e := newEngine(t, "")
	dir := e.fs.Dir()
	writeFile(t, filepath.Join(dir, "media/clips/clip_notes.md"), "---\ntitle: Clip notes\n---\n\n## Narrative\nThe launch video.\n")
	video := filepath.Join(dir, "media/clips/launch.mp4")
	writeFile(t, video, "")
	if err := os.Truncate(video, 1500<<20); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "media/clips/pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(context.Background(), api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	res, err := e.Curate(context.Background(), api.CurateParams{Operations: []api.Operation{{Type: api.OpMove, Path: "media/clips", To: "archive/clips", Reason: "archive"}}})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Applied[0]; a.Status != api.StatusSuccess {
		t.Fatalf("MOVE: %s %s", a.Status, a.Message)
	}
	if fi, err := os.Stat(filepath.Join(dir, "archive/clips/launch.mp4")); err != nil || fi.Size() != 1500<<20 {
		t.Errorf("the video at its new place: %v, %v", fi, err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "archive/clips/pipe.md")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO at its new place: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "media/clips")); !os.IsNotExist(err) {
		t.Errorf("the old folder: %v", err)
	}
}
