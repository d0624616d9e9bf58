//go:build unix

package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// blockingPipe returns a pipe in blocking mode, as a shell makes one
// (os.Pipe makes both ends non-blocking for Go's poller).
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	// Held as os.Pipe holds it, so that no process another test starts
	// meanwhile inherits the ends before they are close-on-exec.
	syscall.ForkLock.RLock()
	err := unix.Pipe(p[:])
	if err == nil {
		unix.CloseOnExec(p[0])
		unix.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(p[0]), "pipe-r"), os.NewFile(uintptr(p[1]), "pipe-w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func fdFlags(t *testing.T, f *os.File) int {
	t.Helper()
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return flags
}

// The CLI leaves the flags of the open files it was given as stdin, stdout
// and stderr as it found them, whether the command returns or is stopped
// by a signal it handles. They are shared: a terminal left non-blocking
// breaks the shell and the next command.
func TestBinaryKeepsDescriptorFlags(t *testing.T) {
	bin := binary(t)
	dir := newTree(t)
	type streams struct{ inR, inW, outR, outW, errR, errW *os.File }
	open := func(t *testing.T) streams {
		var s streams
		s.inR, s.inW = blockingPipe(t)
		s.outR, s.outW = blockingPipe(t)
		s.errR, s.errW = blockingPipe(t)
		return s
	}
	flags := func(t *testing.T, s streams) [3]int {
		return [3]int{fdFlags(t, s.inR), fdFlags(t, s.outW), fdFlags(t, s.errW)}
	}
	command := func(s streams, args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"--root", dir}, args...)...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = s.inR, s.outW, s.errW
		return cmd
	}
	same := func(t *testing.T, before, after [3]int) {
		t.Helper()
		for i, name := range []string{"stdin", "stdout", "stderr"} {
			if before[i] != after[i] {
				t.Errorf("%s flags %#x after the CLI ran, %#x before (O_NONBLOCK is %#x)", name, after[i], before[i], unix.O_NONBLOCK)
			}
		}
	}

	t.Run("return", func(t *testing.T) {
		s := open(t)
		s.inW.Close()
		before := flags(t, s)
		err := command(s, "stats").Run()
		after := flags(t, s)
		if err != nil {
			s.errW.Close()
			msg, _ := io.ReadAll(s.errR)
			t.Fatalf("arbor stats: %v\n%s", err, msg)
		}
		same(t, before, after)
	})

	t.Run("SIGTERM", func(t *testing.T) {
		s := open(t)
		before := flags(t, s)
		cmd := command(s, "mcp")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The server says it is serving once the engine runs.
		line, err := bufio.NewReader(s.errR).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "arbor mcp: serving") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("arbor mcp said %q (%v)", line, err)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("arbor mcp after SIGTERM: %v", err)
		}
		same(t, before, flags(t, s))
	})
}
