package main

// Syncs killed (-mode sync): two roots of one team share a bare
// repository. Each round a person edits both (a note of their own per
// root, a line appended to a log both roots keep, now and then a note of
// theirs deleted) while an agent adds an entry to one, then both roots
// sync at once and one or both syncs are killed with SIGKILL at a random
// moment. The roots then sync again, one after the other (A, B, A), as
// the next commands would, and the runner checks what the team would
// find:
//
//   - stuck: a sync after the kills that fails;
//   - diverged: the two roots' files differ once synced in turn;
//   - lost: a note, log line or entry someone saved that is in neither
//     root (a conflict copy counts);
//   - torn: a note whose text is not what was saved;
//   - resurrected: a deleted note back;
//   - damaged: `git fsck` finding a root's repository or the remote
//     broken (when git is installed);
//   - unclean: `git status` showing changes in a root synced in turn.

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// syncResult counts what the rounds of syncs did and found.
type syncResult struct {
	Rounds, Syncs, Kills, Adds        int
	Saves, Deletes, Lines             int
	ConflictCopies                    int
	Stuck, Diverged, Lost, Torn       int
	Resurrected, Damaged, Unclean     int
	Fsck                              bool // git was there to check the repositories
	Problems                          []string
	Elapsed                           time.Duration
	JS                                bool // root b syncs from Node (-js)
	sync                              []func(args ...string) *exec.Cmd
	notes                             map[string]syncNote // path → what was saved there
	lines, entries                    []string            // markers of log lines and added entries
	killedEarly, killedLate, finished int                 // syncs killed before 300 ms, after, not killed
	addsFailed                        int                 // agents' adds that failed (the root busy)
}

type syncNote struct {
	text    string
	deleted bool
}

func (r *syncResult) failed() bool {
	return r.Stuck+r.Diverged+r.Lost+r.Torn+r.Resurrected+r.Damaged+r.Unclean > 0
}

func (r *syncResult) problem(format string, args ...any) {
	if len(r.Problems) < 50 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

func runSync(n int, bin string, seed int64, keep, js bool) (*syncResult, error) {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s: %w (run ./build.sh first)", bin, err)
	}
	dir, err := os.MkdirTemp("", "arbor-faults-sync-")
	if err != nil {
		return nil, err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "roots:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	remote := filepath.Join(dir, "team.git")
	if _, err := git.PlainInitWithOptions(remote, &git.PlainInitOptions{Bare: true, InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}}); err != nil {
		return nil, err
	}
	roots := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	res := &syncResult{notes: map[string]syncNote{}, JS: js}
	res.sync = []func(args ...string) *exec.Cmd{
		func(args ...string) *exec.Cmd { return syncCmd(bin, roots[0], args...) },
		func(args ...string) *exec.Cmd { return syncCmd(bin, roots[1], args...) },
	}
	url := remote
	if js {
		// Root b syncs from Node (isomorphic-git), which speaks HTTP
		// only: the remote is served by git's http-backend.
		if out, err := exec.Command("git", "-C", remote, "config", "http.receivepack", "true").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("git config: %v\n%s", err, out)
		}
		base, stop, err := serveRemote(dir)
		if err != nil {
			return nil, err
		}
		defer stop()
		url = base + "/team.git"
		res.sync[1] = func(args ...string) *exec.Cmd {
			a := []string{filepath.Join(here(), "jsync.mjs"), roots[1]}
			if len(args) == 2 && args[0] == "--remote" {
				a = append(a, args[1])
			}
			return exec.Command("node", a...)
		}
	}
	_, gitErr := exec.LookPath("git")
	res.Fsck = gitErr == nil
	for i, root := range roots {
		if out, err := exec.Command(bin, "init", root).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("init: %v\n%s", err, out)
		}
		if i == 0 {
			if err := res.save(root, "notes/shared/log.md", "---\ntitle: Team log\n---\n\n## Narrative\nWhat the team did, a line each.\n"); err != nil {
				return nil, err
			}
		}
		if out, err := res.sync[i]("--remote", url).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("first sync of %s: %v\n%s", root, err, out)
		}
	}
	rng := rand.New(rand.NewSource(seed))
	start := time.Now()
	for round := 0; round < n; round++ {
		if err := res.round(rng, bin, roots, round); err != nil {
			return nil, fmt.Errorf("round %d: %w", round, err)
		}
		res.check(roots, remote, round)
		res.Rounds++
		if (round+1)%10 == 0 {
			fmt.Fprintf(os.Stderr, "faults: %d rounds, %d syncs, %d kills; stuck %d, diverged %d, lost %d, torn %d, resurrected %d, damaged %d, unclean %d\n",
				round+1, res.Syncs, res.Kills, res.Stuck, res.Diverged, res.Lost, res.Torn, res.Resurrected, res.Damaged, res.Unclean)
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// syncCmd is `arbor sync` of root, never through a resident engine.
func syncCmd(bin, root string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, append([]string{"--root", root, "sync"}, args...)...)
	cmd.Env = append(os.Environ(), "ARBOR_NO_SERVE=1")
	return cmd
}

// save writes a note the way an editor does (a temporary file, then a
// rename) and remembers it.
func (r *syncResult) save(root, p, text string) error {
	full := filepath.Join(root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	tmp := full + ".tmp~"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, full)
}

// round edits both roots, syncs them at once, kills, then syncs them in
// turn.
func (r *syncResult) round(rng *rand.Rand, bin string, roots []string, round int) error {
	for i, root := range roots {
		side := "ab"[i : i+1]
		p := fmt.Sprintf("notes/edits/%s_%03d.md", side, round)
		text := fmt.Sprintf("---\ntitle: Edit %s %d\n---\n\n## Narrative\nsync-note-%s-%d was written here.\n", side, round, side, round)
		if err := r.save(root, p, text); err != nil {
			return err
		}
		r.notes[p] = syncNote{text: text}
		r.Saves++
		// A line appended to the log both roots keep: the two sides'
		// lines meet in the merge.
		line := fmt.Sprintf("sync-line-%s-%d", side, round)
		log := filepath.Join(root, "notes", "shared", "log.md")
		if b, err := os.ReadFile(log); err == nil {
			if err := r.save(root, "notes/shared/log.md", string(b)+line+" was logged.\n"); err != nil {
				return err
			}
			r.lines = append(r.lines, line)
			r.Lines++
		}
		if rng.Intn(4) == 0 {
			// A note of this side's, synced before, deleted.
			var mine []string
			for q, n := range r.notes {
				if !n.deleted && strings.HasPrefix(q, "notes/edits/"+side+"_") && q != p {
					mine = append(mine, q)
				}
			}
			if len(mine) > 0 {
				sort.Strings(mine)
				q := mine[rng.Intn(len(mine))]
				if err := os.Remove(filepath.Join(root, filepath.FromSlash(q))); err == nil {
					r.notes[q] = syncNote{text: r.notes[q].text, deleted: true}
					r.Deletes++
				}
			}
		}
	}
	var procs []*exec.Cmd
	var done []chan struct{}
	start := func(cmd *exec.Cmd) error {
		if err := cmd.Start(); err != nil {
			return err
		}
		ch := make(chan struct{})
		go func() { cmd.Wait(); close(ch) }()
		procs, done = append(procs, cmd), append(done, ch)
		return nil
	}
	// An agent adds an entry to a root while the syncs run: it waits for
	// the root's lock, or slips in between a sync's commit and its merge.
	added := ""
	if rng.Intn(2) == 0 {
		added = fmt.Sprintf("sync-entry-%d", round)
		add := exec.Command(bin, "--root", roots[rng.Intn(2)], "add", "--path", "team/agents", "--title", fmt.Sprintf("Agent note %d", round),
			"--narrative", added+" was added by an agent.", "--reason", added)
		add.Env = append(os.Environ(), "ARBOR_NO_SERVE=1")
		if err := start(add); err != nil {
			return err
		}
	}
	syncs := len(procs)
	for i := range roots {
		if err := start(r.sync[i]()); err != nil {
			return err
		}
		r.Syncs++
	}
	victims := map[int]bool{syncs + rng.Intn(2): true}
	if rng.Intn(3) == 0 {
		victims = map[int]bool{syncs: true, syncs + 1: true}
	}
	// Most syncs of these small roots take a few hundred milliseconds;
	// one from Node starts a second or so later (the module compiles).
	delay := time.Duration(rng.Intn(400)) * time.Millisecond
	if rng.Intn(4) == 0 || r.JS && victims[syncs+1] {
		delay = time.Duration(rng.Intn(1500)) * time.Millisecond
	}
	if r.JS && victims[syncs+1] {
		delay += 700 * time.Millisecond
	}
	time.Sleep(delay)
	for i, p := range procs {
		if !victims[i] {
			continue
		}
		select {
		case <-done[i]:
			r.finished++
		default:
			if p.Process.Signal(syscall.SIGKILL) == nil {
				r.Kills++
				if delay < 300*time.Millisecond {
					r.killedEarly++
				} else {
					r.killedLate++
				}
			}
		}
	}
	for i, p := range procs {
		<-done[i]
		if added != "" && i == 0 {
			if p.ProcessState.Success() {
				r.entries = append(r.entries, added)
				r.Adds++
			} else {
				r.addsFailed++
			}
		}
	}
	// The next commands: each root syncs in turn, A, B, A.
	for _, i := range []int{0, 1, 0} {
		root := roots[i]
		var stderr bytes.Buffer
		cmd := r.sync[i]()
		cmd.Stderr = &stderr
		r.Syncs++
		if err := cmd.Run(); err != nil {
			r.Stuck++
			r.problem("round %d: the sync of %s after the kills failed: %v: %s", round, filepath.Base(root), err, strings.TrimSpace(stderr.String()))
			// Once more, as a person would retry.
			again := r.sync[i]()
			if out, err := again.CombinedOutput(); err != nil {
				return fmt.Errorf("the sync of %s fails again: %v\n%s", root, err, out)
			}
		}
	}
	return nil
}

// check compares the roots once synced in turn.
func (r *syncResult) check(roots []string, remote string, round int) {
	a, b := markdownFiles(roots[0]), markdownFiles(roots[1])
	for p, text := range a {
		if b[p] != text {
			r.Diverged++
			r.problem("round %d: %s differs between the roots once synced (a: %d bytes, b: %d)", round, p, len(text), len(b[p]))
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			r.Diverged++
			r.problem("round %d: %s is in b alone once synced", round, p)
		}
	}
	copies := 0
	for p := range a {
		if strings.Contains(p, "conflict") {
			copies++
		}
	}
	r.ConflictCopies = copies
	all := func(marker string) bool {
		for _, text := range a {
			if strings.Contains(text, marker) {
				return true
			}
		}
		return false
	}
	for p, n := range r.notes {
		got, ok := a[p]
		switch {
		case n.deleted && ok:
			r.Resurrected++
			r.problem("round %d: %s was deleted and is back", round, p)
		case !n.deleted && !ok:
			r.Lost++
			r.problem("round %d: the note %s is gone", round, p)
		case !n.deleted && got != n.text:
			r.Torn++
			r.problem("round %d: %s is not the text saved: %q", round, p, got)
		}
	}
	for _, m := range append(append([]string{}, r.lines...), r.entries...) {
		if !all(m) {
			r.Lost++
			r.problem("round %d: %q is in no file", round, m)
		}
	}
	if !r.Fsck {
		return
	}
	for _, repo := range append([]string{remote}, roots...) {
		out, err := exec.Command("git", "-C", repo, "fsck", "--no-progress", "--no-dangling").CombinedOutput()
		if err != nil {
			r.Damaged++
			r.problem("round %d: git fsck of %s: %v: %s", round, filepath.Base(repo), err, strings.TrimSpace(string(out)))
		}
	}
	// Synced in turn, each root's files are its last commit: git sees
	// nothing to commit (an index a kill left behind would show changes).
	for _, root := range roots {
		out, err := exec.Command("git", "-C", root, "status", "--porcelain").CombinedOutput()
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			r.Unclean++
			r.problem("round %d: git status of %s once synced: %v: %s", round, filepath.Base(root), err, strings.TrimSpace(string(out)))
		}
	}
}

func (r *syncResult) markdown(n int, seed int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Fault injection: SIGKILL during `arbor sync`\n\n`go run ./tests/faults -mode sync -n %d -seed %d%s` (%s, %s). ", n, seed, map[bool]string{true: " -js"}[r.JS], r.Elapsed.Round(time.Second), time.Now().UTC().Format("2006-01-02"))
	if r.JS {
		b.WriteString("Root b syncs from Node (the JS package, isomorphic-git; the remote served by git's http-backend), root a with the CLI (go-git). ")
	}
	b.WriteString("Two roots share a bare repository. Each round a person saves a note in each root (a temporary file, then a rename), appends a line to a log both keep, and now and then deletes a note of theirs; half the time an agent adds an entry to one root; then both roots sync at once and one or both syncs are killed with SIGKILL after 0–400 ms (a quarter of the time 0–1500 ms; a sync from Node 0.7–2.2 s, as it starts about a second later). The roots then sync in turn (A, B, A), and must hold the same files, every note, line and entry saved, no deleted note, and repositories `git fsck` finds whole and `git status` clean.\n\n")
	b.WriteString("| what | count |\n| --- | ---: |\n")
	row := func(what string, v any) { fmt.Fprintf(&b, "| %s | %v |\n", what, v) }
	row("rounds", r.Rounds)
	row("syncs run", r.Syncs)
	row("SIGKILLs delivered (to a sync still running)", r.Kills)
	row("… within 300 ms of the start / later", fmt.Sprintf("%d / %d", r.killedEarly, r.killedLate))
	row("syncs picked to be killed that had already finished", r.finished)
	row("notes saved / deleted", fmt.Sprintf("%d / %d", r.Saves, r.Deletes))
	row("log lines appended", r.Lines)
	row("entries added by an agent during the syncs (failed: the root busy)", fmt.Sprintf("%d (%d)", r.Adds, r.addsFailed))
	row("conflict copies in the tree at the end", r.ConflictCopies)
	row("repositories checked by `git fsck`", map[bool]string{true: "yes", false: "no (git not installed)"}[r.Fsck])
	row("**stuck** (a sync after the kills failed)", r.Stuck)
	row("**diverged** (the roots' files differ once synced in turn)", r.Diverged)
	row("**lost** (a note, line or entry in no file)", r.Lost)
	row("**torn** (a note not as saved)", r.Torn)
	row("**resurrected** (a deleted note back)", r.Resurrected)
	row("**damaged** (`git fsck` fails)", r.Damaged)
	row("**unclean** (`git status` shows changes once synced in turn)", r.Unclean)
	if len(r.Problems) > 0 {
		b.WriteString("\nProblems:\n\n")
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return b.String()
}

// here is the folder of this file, where the runner's Node scripts are.
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// serveRemote serves the bare repositories of dir over HTTP
// (gitserve.mjs) and returns its base URL and how to stop it.
func serveRemote(dir string) (string, func(), error) {
	cmd := exec.Command("node", filepath.Join(here(), "gitserve.mjs"), dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { stdin.Close(); cmd.Wait() }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("gitserve.mjs: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}
