package rootlock

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

func lockFile(dir string) string { return filepath.Join(dir, filepath.FromSlash(Path)) }

func acquire(t *testing.T, dir string) *Lock {
	t.Helper()
	l, err := Acquire(context.Background(), dir)
	if err != nil || l == nil {
		t.Fatalf("Acquire: %v, %v", l, err)
	}
	return l
}

// writeOwner plants a lock file as another process would have left it.
func writeOwner(t *testing.T, dir string, o Owner, age time.Duration) {
	t.Helper()
	f := lockFile(dir)
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(o)
	if o.PID == 0 {
		b = nil
	}
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-age)
	if err := os.Chtimes(f, then, then); err != nil {
		t.Fatal(err)
	}
}

func TestExclusive(t *testing.T) {
	dir := t.TempDir()
	l := acquire(t, dir)
	if h, ok, err := Holder(dir); err != nil || !ok || h.PID != os.Getpid() || h.Token == "" {
		t.Fatalf("Holder: %+v %v %v", h, ok, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx, dir); !errors.Is(err, ErrBusy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Acquire while held: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lockFile(dir)); !os.IsNotExist(err) {
		t.Fatalf("lock file left after Release: %v", err)
	}
	acquire(t, dir).Release()
}

// Holders take turns: a read-modify-write of a counter under the lock
// loses no increment.
func TestMutualExclusion(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "n")
	os.WriteFile(counter, []byte("0"), 0o644)
	var wg sync.WaitGroup
	const workers, rounds = 8, 25
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				l, err := Acquire(context.Background(), dir)
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := os.ReadFile(counter)
				n, _ := strconv.Atoi(string(b))
				os.WriteFile(counter, []byte(strconv.Itoa(n+1)), 0o644)
				if err := l.Release(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if b, _ := os.ReadFile(counter); string(b) != strconv.Itoa(workers*rounds) {
		t.Fatalf("counter = %s, want %d", b, workers*rounds)
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestStaleLocks(t *testing.T) {
	host, _ := os.Hostname()
	cases := []struct {
		name  string
		owner Owner
		age   time.Duration
	}{
		{"owner died", Owner{PID: deadPID(t), Host: host, Token: "old"}, 0},
		{"untouched on another host", Owner{PID: os.Getpid(), Host: "elsewhere", Token: "old"}, StaleAfter + time.Minute},
		{"never written", Owner{}, incomplete + time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeOwner(t, dir, c.owner, c.age)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			l, err := Acquire(ctx, dir)
			if err != nil {
				t.Fatalf("a stale lock was not broken: %v", err)
			}
			if h, _, _ := Holder(dir); h.Token != l.owner.Token {
				t.Fatalf("holder after break: %+v", h)
			}
			if _, err := os.Stat(lockFile(dir) + breakSuffix); !os.IsNotExist(err) {
				t.Fatalf("break guard left behind: %v", err)
			}
			l.Release()
		})
	}
}

func TestLiveLocksAreRespected(t *testing.T) {
	host, _ := os.Hostname()
	cases := []struct {
		name  string
		owner Owner
		age   time.Duration
	}{
		{"live process here", Owner{PID: os.Getpid(), Host: host, Token: "x"}, time.Minute},
		{"another host, recently touched", Owner{PID: 1 << 30, Host: "elsewhere", Token: "x"}, time.Minute},
		{"being written", Owner{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeOwner(t, dir, c.owner, c.age)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			if _, err := Acquire(ctx, dir); !errors.Is(err, ErrBusy) {
				t.Fatalf("a live lock was taken: %v", err)
			}
		})
	}
}

// A holder whose lock was broken (it looked abandoned) does not remove
// its successor's lock when it finally releases.
func TestReleaseAfterTakeover(t *testing.T) {
	dir := t.TempDir()
	l := acquire(t, dir)
	writeOwner(t, dir, Owner{PID: os.Getpid(), Host: "other", Token: "successor"}, 0)
	if err := l.Release(); err == nil {
		t.Fatal("Release of a lock taken over should report it")
	}
	if h, _, _ := Holder(dir); h.Token != "successor" {
		t.Fatalf("the successor's lock was removed: %+v", h)
	}
}

// A root this process may not write is served unlocked.
func TestReadOnlyRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores file permissions")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o555)
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	l, err := Acquire(context.Background(), dir)
	if l != nil || err != nil {
		t.Fatalf("Acquire on a read-only root: %v, %v", l, err)
	}
}

// A lock file that cannot be written for want of space is an error of its
// own (ErrNoSpace), the file not left behind; one another process holds is
// waited for as ever, whatever the space.
func TestFullDisk(t *testing.T) {
	dir := t.TempDir()
	writeLockFile = func(*os.File, []byte) (int, error) { return 0, syscall.ENOSPC }
	t.Cleanup(func() { writeLockFile = (*os.File).Write })
	l, err := Acquire(context.Background(), dir)
	if l != nil || !errors.Is(err, ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Acquire on a full disk: %v, %v", l, err)
	}
	if _, err := os.Stat(filepath.Join(dir, Path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock file was left: %v", err)
	}
	writeLockFile = (*os.File).Write
	held, err := Acquire(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	writeLockFile = func(*os.File, []byte) (int, error) { return 0, syscall.EDQUOT }
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx, dir); !errors.Is(err, ErrBusy) {
		t.Fatalf("Acquire of a held lock on a full disk: %v, want busy", err)
	}
}
