package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// bigTree makes a root whose `tree --json` is over 1 MiB: long titles make
// the output large with few entries to index.
func bigTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	long := strings.Repeat("x", 400)
	for topic := range 10 {
		for entry := range 200 {
			writeFile(t, filepath.Join(dir, "domain", fmt.Sprintf("topic%d/entry%d.md", topic, entry)),
				fmt.Sprintf("---\ntitle: Entry %d %s\n---\nBody.\n", entry, long))
		}
	}
	return dir
}

// readWhenFull is a reader slower than any writer, without timing: it
// reads nothing until the pipe is full (the writer then waits for it, or
// gives up if its writes fail) or the writer has exited, then reads to the
// end.
func readWhenFull(t *testing.T, r *os.File, exited <-chan struct{}) []byte {
	t.Helper()
	size, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	for full := false; !full; {
		select {
		case <-exited:
			full = true
		case <-time.After(time.Millisecond):
			queued, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ) // FIONREAD
			if err != nil {
				t.Fatal(err)
			}
			full = queued >= size
		}
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func samePiped(t *testing.T, got []byte, want string) {
	t.Helper()
	if string(got) != want {
		t.Fatalf("piped output: %d bytes, want %d; it ends:\n%s", len(got), len(want), got[max(0, len(got)-300):])
	}
}

// The output of `arbor tree --json 2>&1 | slow-reader` arrives whole. The
// engine module's stderr is the pipe the output goes through; when the
// module could set O_NONBLOCK on it, the CLI's writes failed with EAGAIN
// as soon as the pipe was full, and the output was cut at 64 KiB.
func TestBinaryPipedOutputWhole(t *testing.T) {
	bin := binary(t)
	dir := bigTree(t)
	want := must(t, "", "--root", dir, "tree", "--json")
	if len(want) <= 1<<20 {
		t.Fatalf("tree --json is %d bytes, want over 1 MiB", len(want))
	}

	t.Run("blocking pipe", func(t *testing.T) {
		r, w := blockingPipe(t)
		cmd := exec.Command(bin, "--root", dir, "tree", "--json")
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		exited := make(chan struct{})
		var werr error
		go func() { werr = cmd.Wait(); close(exited) }()
		got := readWhenFull(t, r, exited)
		<-exited
		if werr != nil {
			t.Errorf("arbor tree --json: %v", werr)
		}
		samePiped(t, got, want)
	})

	// A parent may hand over a pipe that is already non-blocking: then the
	// writes wait for the reader instead of failing. exec.Cmd would make
	// the pipe blocking (os.File.Fd does), so the process is started with
	// the raw descriptor.
	t.Run("non-blocking pipe", func(t *testing.T) {
		r, w := blockingPipe(t)
		if err := unix.SetNonblock(int(w.Fd()), true); err != nil {
			t.Fatal(err)
		}
		null, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer null.Close()
		pid, err := syscall.ForkExec(bin, []string{bin, "--root", dir, "tree", "--json"}, &syscall.ProcAttr{
			Env:   os.Environ(),
			Files: []uintptr{null.Fd(), w.Fd(), w.Fd()},
		})
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		exited := make(chan struct{})
		var ws syscall.WaitStatus
		var werr error
		go func() { _, werr = syscall.Wait4(pid, &ws, 0, nil); close(exited) }()
		got := readWhenFull(t, r, exited)
		<-exited
		if werr != nil {
			t.Fatal(werr)
		}
		if !ws.Exited() || ws.ExitStatus() != 0 {
			t.Errorf("arbor tree --json: wait status %v", ws)
		}
		samePiped(t, got, want)
	})
}
