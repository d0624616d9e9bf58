// Package rootlock is the cross-process lock on a memory root: every
// process that writes a root (the arbor CLI, an MCP server, a Node
// program using the JS package) takes it around each engine call, so that
// one call's reads and writes are never interleaved with another
// process's (docs/design.md, "Many processes, one root").
//
// The lock is the file .arbor/lock, created exclusively (O_CREATE|O_EXCL)
// and holding its owner: {"pid","host","since","token"}. It is not
// flock(2): Node has no flock without a native addon, and the Go and
// Node hosts must honour one lock. What flock gives for free, recovery
// after a crash, is done here: a lock whose owner is a process of this
// machine that no longer runs is stale, and so is one whose file has not
// been touched for StaleAfter (an owner on another machine that died).
// A live owner touches the file every StaleAfter/4 while it holds it.
// Breaking a stale lock is itself serialized by .arbor/lock.break, so two
// waiters that find the same stale lock cannot remove each other's fresh
// one.
package rootlock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Path is the lock file, relative to the memory root.
const Path = ".arbor/lock"

// breakSuffix names the file that serializes the breaking of a stale lock.
const breakSuffix = ".break"

// StaleAfter is how long a lock file may go untouched before any process
// may take it as abandoned. Owners touch it four times as often.
const StaleAfter = 2 * time.Minute

// DefaultWait is how long Acquire waits for another process's lock
// when ctx has no deadline.
const DefaultWait = 2 * time.Minute

// incomplete is how old a lock file with no readable owner must be before
// it counts as stale: its creator died between creating and writing it.
const incomplete = 5 * time.Second

// ErrBusy is wrapped by Acquire when the root stayed locked by another
// process for the whole wait.
var ErrBusy = errors.New("the memory root is busy")

// ErrNoSpace is wrapped by Acquire when the lock file cannot be written
// for want of space (a full disk or quota) and no other process holds
// the lock. Unlike a root that refuses writes, this one is not served
// unlocked here: space may come back during the call, and a write made
// then would be a write without the lock. A caller that can refuse every
// write itself (arborhost.RootFS) serves the call for reading.
var ErrNoSpace = errors.New("no space left to write the lock file")

// Owner is what a lock file records of the process holding it.
type Owner struct {
	PID   int    `json:"pid"`
	Host  string `json:"host"`
	Since string `json:"since"` // RFC 3339
	Token string `json:"token"` // random: tells this holder's file from a later one
}

// Lock is a held lock on one root.
type Lock struct {
	file  string
	owner Owner
	stop  chan struct{}
	done  chan struct{}
}

// Acquire takes the lock of the memory root dir, waiting while another
// live process holds it, until ctx ends or, without a deadline,
// DefaultWait has passed. A root where the lock file cannot be created
// because the file system refuses writes (read-only, permission denied)
// is served unlocked: nil Lock and nil error, since this process cannot
// write there either. One where it cannot be written for want of space
// is an error wrapping ErrNoSpace.
func Acquire(ctx context.Context, dir string) (*Lock, error) {
	return AcquireFile(ctx, dir, Path)
}

// AcquireFile takes a lock of the same kind as Acquire's, on the file rel
// (slash-separated, relative to dir) instead of the root's lock: a lock
// that serializes one kind of work (a sync's git state) without keeping
// engines from the tree meanwhile.
func AcquireFile(ctx context.Context, dir, rel string) (*Lock, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultWait)
		defer cancel()
	}
	file := filepath.Join(dir, filepath.FromSlash(rel))
	host, _ := os.Hostname()
	owner := Owner{PID: os.Getpid(), Host: host, Token: token()}
	delay := time.Millisecond
	for {
		owner.Since = time.Now().UTC().Format(time.RFC3339Nano)
		err := create(file, owner)
		if err == nil {
			l := &Lock{file: file, owner: owner, stop: make(chan struct{}), done: make(chan struct{})}
			go l.touch()
			return l, nil
		}
		if readOnly(err) {
			return nil, nil
		}
		if noSpace(err) {
			return nil, fmt.Errorf("rootlock: create %s: %w: %w", file, ErrNoSpace, err)
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("rootlock: create %s: %w", file, err)
		}
		held, stale := inspect(file, host)
		if stale && breakStale(file, held) {
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("rootlock: %w: %s is held by %s (waited: %w)", ErrBusy, file, held.describe(), ctx.Err())
		case <-time.After(delay):
		}
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}

// Release removes the lock file if it is still this holder's: a lock
// broken as stale and taken by another process is left to its new owner.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	close(l.stop)
	<-l.done
	held, err := read(l.file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("rootlock: release %s: %w", l.file, err)
	}
	if held.Token != l.owner.Token {
		return fmt.Errorf("rootlock: release %s: the lock was taken over by %s", l.file, held.describe())
	}
	if err := os.Remove(l.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rootlock: release %s: %w", l.file, err)
	}
	return nil
}

// touch keeps the lock file's modification time fresh while it is held,
// so that a long call is never mistaken for an abandoned lock.
func (l *Lock) touch() {
	defer close(l.done)
	t := time.NewTicker(StaleAfter / 4)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case now := <-t.C:
			os.Chtimes(l.file, now, now)
		}
	}
}

// writeLockFile writes the owner into a new lock file; a test swaps it for a
// disk that is full.
var writeLockFile = (*os.File).Write

// create makes the lock file exclusively and writes owner into it,
// creating .arbor/ when the root has none yet.
func create(file string, owner Owner) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(owner)
	_, werr := writeLockFile(f, b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(file)
		return err
	}
	return nil
}

// inspect reads the lock file and says whether it is stale: its owner is
// a process of this host that is gone, it was not touched for StaleAfter,
// or it never got an owner written and is older than incomplete.
func inspect(file, host string) (Owner, bool) {
	fi, err := os.Stat(file)
	if err != nil {
		return Owner{}, false // gone already: the next create will tell
	}
	age := time.Since(fi.ModTime())
	held, err := read(file)
	switch {
	case err != nil || held.PID <= 0:
		return held, age > incomplete
	case age > StaleAfter:
		return held, true
	case held.Host == host && !alive(held.PID):
		return held, true
	}
	return held, false
}

// breakStale removes the stale lock file judged to hold was, unless it
// changed since: the check and the removal happen under lock.break, so
// that a second waiter cannot remove the fresh lock the first one made.
// It returns false when another process is breaking it: wait, then look
// again.
func breakStale(file string, was Owner) bool {
	guard := file + breakSuffix
	g, err := os.OpenFile(guard, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		// Another process is breaking it. A guard left by a process that
		// died in these few lines is removed once it is old.
		if fi, serr := os.Stat(guard); serr == nil && time.Since(fi.ModTime()) > incomplete {
			os.Remove(guard)
		}
		return false
	}
	g.Close()
	defer os.Remove(guard)
	// Unless someone took it in between, or it is gone, it goes.
	if now, err := read(file); !(err == nil && now.Token != was.Token) && !errors.Is(err, fs.ErrNotExist) {
		os.Remove(file)
	}
	return true
}

// read parses the lock file.
func read(file string) (Owner, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Owner{}, err
	}
	var o Owner
	if err := json.Unmarshal(b, &o); err != nil {
		return Owner{}, fmt.Errorf("rootlock: %s: %w", file, err)
	}
	return o, nil
}

// Holder reports who holds the lock of the root dir, if anyone: for
// `arbor doctor`.
func Holder(dir string) (Owner, bool, error) {
	o, err := read(filepath.Join(dir, filepath.FromSlash(Path)))
	if errors.Is(err, fs.ErrNotExist) {
		return Owner{}, false, nil
	}
	return o, err == nil, err
}

func (o Owner) describe() string {
	if o.PID <= 0 {
		return "a process that has not written its name yet"
	}
	return fmt.Sprintf("pid %d on %s since %s", o.PID, o.Host, o.Since)
}

// readOnly reports errors that mean this process may not write the root.
func readOnly(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// noSpace reports errors that mean the disk or the quota is full.
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

func token() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
