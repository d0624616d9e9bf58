package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/arbormem/arbor/host/serve"
)

// serverProc is an `arbor serve` process.
type serverProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
}

// startServer runs `arbor serve` on root, with the clock fixed, and waits
// until it answers; the cleanup stops it if the test has not.
func startServer(t *testing.T, root string) *serverProc {
	t.Helper()
	cmd := exec.Command(binary(t), "--root", root, "--fixed-time", fixedTime, "serve")
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serverProc{cmd: cmd, exited: make(chan struct{})}
	exited := p.exited
	go func() {
		p.err = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		if t.Failed() {
			t.Logf("arbor serve's stderr:\n%s", errOut.String())
		}
	})
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server", func() bool {
		select {
		case <-exited:
			t.Fatalf("arbor serve exited: %v\n%s", cmd.ProcessState, errOut.String())
		default:
		}
		c, err := serve.Dial(serve.Expect(real, fixedTime))
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
	return p
}

// served returns the number of engine calls the server of root has
// answered.
func served(t *testing.T, root string) int64 {
	t.Helper()
	real, _ := filepath.EvalSymlinks(root)
	c, err := serve.Probe(real)
	if err != nil {
		t.Fatalf("probe the server: %v", err)
	}
	defer c.Close()
	return c.Hello().Calls
}

// direct runs the CLI without a server.
func direct(t *testing.T, args ...string) result {
	t.Helper()
	t.Setenv("ARBOR_NO_SERVE", "1")
	defer os.Unsetenv("ARBOR_NO_SERVE")
	return arbor(t, "", args...)
}

var (
	timings = regexp.MustCompile(`\d+(\.\d+)? ms|"tookMs": [0-9.e+-]+`)
	// The persisted index's bytes depend on how many times it was written
	// (a command that opens the engine writes it as it closes, a server
	// when it flushes), not on what it holds, in JSON and in text (which
	// rounds them to a tenth of a unit, still apart across a boundary).
	indexBytes = regexp.MustCompile(`("index": \{\s*"files": \d+,\s*"bytes": )\d+`)
	indexSize  = regexp.MustCompile(`(index +\d+ files · )[\d.]+ [KMGT]?B`)
)

// normalize makes the outputs of two roots comparable: the roots' paths,
// the time each call took and the index's bytes on disk differ.
func normalize(s, root string) string {
	s = timings.ReplaceAllString(strings.ReplaceAll(s, root, "ROOT"), "T")
	s = indexBytes.ReplaceAllString(s, "${1}N")
	return indexSize.ReplaceAllString(s, "${1}N")
}

// Every command prints through the server what it prints without one:
// two copies of the example tree, one served, get the same commands in
// the same order (writes and their effect on later reads included), and
// each command on the served copy is answered by the server.
func TestServeSameOutput(t *testing.T) {
	plain, servedRoot := examplesCopy(t), examplesCopy(t)
	startServer(t, servedRoot)
	commands := [][]string{
		{"search", "invoice", "retry"},
		{"search", "--json", "refund approval"},
		{"query", "how often are failed invoices retried?"},
		{"query", "--json", "--limit", "3", "refund approval limit"},
		{"tree"},
		{"tree", "engineering", "--depth", "1", "--json"},
		{"show", "engineering/billing/invoice_retry_policy.md"},
		{"add", "--path", "engineering/billing", "--title", "Zeppelin invoices", "--narrative", "Invoices for zeppelin moorings are sent monthly.", "--reason", "test"},
		{"add", "--path", "engineering/billing", "--title", "Zeppelin invoices", "--narrative", "again", "--reason", "test"}, // exists: exit 1
		{"search", "zeppelin mooring"},
		{"stats"},
		{"stats", "--json"},
		{"show", "no/such/entry.md"}, // not found: exit 1
	}
	for _, args := range commands {
		want := direct(t, append([]string{"--root", plain, "--fixed-time", fixedTime}, args...)...)
		before := served(t, servedRoot)
		got := arbor(t, "", append([]string{"--root", servedRoot, "--fixed-time", fixedTime}, args...)...)
		if served(t, servedRoot) == before {
			t.Errorf("arbor %s: not answered by the server", strings.Join(args, " "))
		}
		if got.code != want.code {
			t.Errorf("arbor %s: exit %d through the server, %d without\nstderr: %s", strings.Join(args, " "), got.code, want.code, got.stderr)
		}
		if g, w := normalize(got.stdout, servedRoot), normalize(want.stdout, plain); g != w {
			t.Errorf("arbor %s: through the server:\n%s\nwithout:\n%s", strings.Join(args, " "), g, w)
		}
		if g, w := normalize(got.stderr, servedRoot), normalize(want.stderr, plain); g != w {
			t.Errorf("arbor %s: stderr through the server:\n%s\nwithout:\n%s", strings.Join(args, " "), g, w)
		}
	}
}

// A write through the server is on disk for a command that opens the
// engine itself; a write made beside the server (another process, an
// editor) is seen by the next command the server answers.
func TestServeWritesAndEdits(t *testing.T) {
	root := examplesCopy(t)
	startServer(t, root)
	must(t, "", "--root", root, "--fixed-time", fixedTime, "add", "--path", "ops/oncall", "--title", "Pager rota", "--narrative", "The pager rotates every Monday at nine.", "--reason", "test")
	if out := direct(t, "--root", root, "show", "ops/oncall/pager_rota.md"); out.code != 0 || !strings.Contains(out.stdout, "rotates every Monday") {
		t.Fatalf("the write through the server, read directly: exit %d\n%s%s", out.code, out.stdout, out.stderr)
	}

	if out := direct(t, "--root", root, "add", "--path", "ops/oncall", "--title", "Escalation", "--narrative", "Escalate to the harbourmaster after an hour.", "--reason", "test"); out.code != 0 {
		t.Fatalf("direct add: %s", out.stderr)
	}
	const p = "engineering/billing/invoice_retry_policy.md"
	full := filepath.Join(root, filepath.FromSlash(p))
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), "## Narrative\n", "## Narrative\nRetries pause while the quokka census runs.\n", 1)
	if err := os.WriteFile(full, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"harbourmaster": "ops/oncall/escalation.md", "quokka census": p} {
		waitFor(t, q, func() bool {
			before := served(t, root)
			out := must(t, "", "--root", root, "--fixed-time", fixedTime, "search", q)
			return served(t, root) > before && strings.Contains(out, want)
		})
	}
}

// A server that was killed leaves its socket file: commands run the
// engine themselves, doctor says so, and the next server replaces it.
func TestServeKilled(t *testing.T) {
	root := examplesCopy(t)
	want := must(t, "", "--root", root, "--fixed-time", fixedTime, "tree")
	srv := startServer(t, root)
	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(root)
	socket, _ := serve.Paths(real)
	waitFor(t, "the server's death", func() bool {
		_, err := serve.Probe(real)
		return errors.Is(err, serve.ErrStale)
	})
	if got := must(t, "", "--root", root, "--fixed-time", fixedTime, "tree"); got != want {
		t.Errorf("tree after the server was killed:\n%s\nwant:\n%s", got, want)
	}
	if c := doctorCheck(t, root, "server"); c.Status != checkInfo || !strings.Contains(c.Detail, "killed") {
		t.Errorf("doctor with a stale socket: %+v", c)
	}
	if _, err := os.Lstat(socket); err != nil {
		t.Fatalf("the stale socket is gone before the next server: %v", err)
	}
	startServer(t, root)
	before := served(t, root)
	if got := must(t, "", "--root", root, "--fixed-time", fixedTime, "tree"); got != want || served(t, root) == before {
		t.Errorf("tree through the new server (%d calls before):\n%s", before, got)
	}
	if c := doctorCheck(t, root, "server"); c.Status != checkOK {
		t.Errorf("doctor with a server: %+v", c)
	}
}

// A server of another build is not used: the command runs the engine
// itself and sends that server nothing but the handshake; doctor says why.
func TestServeVersionMismatch(t *testing.T) {
	root := examplesCopy(t)
	want := must(t, "", "--root", root, "--fixed-time", fixedTime, "search", "invoice")
	real, _ := filepath.EvalSymlinks(root)
	socket, _ := serve.Paths(real)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	methods := make(chan string, 100)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				sc := bufio.NewScanner(conn)
				for sc.Scan() {
					var req struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
					}
					json.Unmarshal(sc.Bytes(), &req)
					methods <- req.Method
					h := serve.Expect(real, fixedTime)
					h.Module, h.PID = "1-00000000", 4242
					fmt.Fprintf(conn, `{"id":%s,"result":%s}`+"\n", req.ID, mustJSON(h))
				}
			}()
		}
	}()
	if got := must(t, "", "--root", root, "--fixed-time", fixedTime, "search", "invoice"); normalize(got, root) != normalize(want, root) {
		t.Errorf("search with a mismatched server:\n%s\nwant:\n%s", got, want)
	}
	if c := doctorCheck(t, root, "server"); c.Status != checkWarn || !strings.Contains(c.Detail, "process 4242") || !strings.Contains(c.Detail, "another build") {
		t.Errorf("doctor with a mismatched server: %+v", c)
	}
	close(methods)
	for m := range methods {
		if m != serve.MethodHello {
			t.Errorf("the mismatched server was sent %q", m)
		}
	}
}

// --stop stops the server after it has written its state; a second
// server for the same root is refused while one runs.
func TestServeStop(t *testing.T) {
	root := examplesCopy(t)
	srv := startServer(t, root)
	must(t, "", "--root", root, "--fixed-time", fixedTime, "query", "which tokenizer did we pick for Korean")
	second := exec.Command(binary(t), "--root", root, "serve")
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already serves this root") || !strings.Contains(string(out), fmt.Sprint(srv.cmd.Process.Pid)) {
		t.Errorf("a second server: %v\n%s", err, out)
	}
	os.Remove(filepath.Join(root, ".arbor", "state.json"))
	var stopped struct {
		Stopped bool
		PID     int
	}
	if out := must(t, "", "--root", root, "serve", "--stop", "--json"); json.Unmarshal([]byte(out), &stopped) != nil || !stopped.Stopped || stopped.PID != srv.cmd.Process.Pid {
		t.Errorf("serve --stop --json: %q", out)
	}
	// --stop returns once the server has closed its engine, which writes
	// the lifecycle signals of the query above.
	if _, err := os.Stat(filepath.Join(root, ".arbor", "state.json")); err != nil {
		t.Errorf("no lifecycle state written at stop: %v", err)
	}
	<-srv.exited
	if srv.err != nil {
		t.Errorf("the server after --stop: %v", srv.err)
	}
	real, _ := filepath.EvalSymlinks(root)
	if socket, _ := serve.Paths(real); fileOrSocket(socket) {
		t.Errorf("the socket %s is left after --stop", socket)
	}
	if r := arbor(t, "", "--root", root, "serve", "--stop"); r.code != exitError || !strings.Contains(r.stderr, "no server runs") {
		t.Errorf("serve --stop without a server: exit %d, %s", r.code, r.stderr)
	}
}

func fileOrSocket(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// doctorCheck runs doctor on root and returns its check called name.
func doctorCheck(t *testing.T, root, name string) check {
	t.Helper()
	var rep doctorReport
	r := arbor(t, "", "--root", root, "--fixed-time", fixedTime, "doctor", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r.stdout)
	}
	for _, c := range rep.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("doctor has no %s check: %+v", name, rep.Checks)
	return check{}
}

// A root whose socket path would be too long for sun_path is served on a
// short path in the temporary folder.
func TestServeLongRoot(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("deep_folder_", 8))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	must(t, "", "init", long)
	writeFile(t, filepath.Join(long, "ops/oncall/rota.md"), "---\ntitle: Rota\n---\n\n## Narrative\nThe walrus rota starts on Monday.\n")
	socket, lock := serve.Paths(long)
	if len(socket) > 100 || strings.HasPrefix(socket, long) {
		t.Fatalf("socket path for a long root: %s", socket)
	}
	// The server leaves its lock file (serve.Claim.Release says why); in
	// the temporary folder, the test removes it once the server stopped.
	t.Cleanup(func() { os.Remove(lock) })
	startServer(t, long)
	before := served(t, long)
	if out := must(t, "", "--root", long, "--fixed-time", fixedTime, "search", "walrus"); !strings.Contains(out, "ops/oncall/rota.md") || served(t, long) == before {
		t.Errorf("search through the server of a long root:\n%s", out)
	}
}

// The server's socket is this user's alone.
func TestServeSocketMode(t *testing.T) {
	root := examplesCopy(t)
	startServer(t, root)
	real, _ := filepath.EvalSymlinks(root)
	socket, _ := serve.Paths(real)
	fi, err := os.Lstat(socket)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
	}
}

// A query that needs the model is driven by the client, which makes the
// model call with its own configuration, while the server's engine holds
// the call between its pending result and the resume: the answer is the
// one the command gives without a server.
func TestServeQueryWithModel(t *testing.T) {
	plain, servedRoot := llmRoot(t), llmRoot(t)
	startServer(t, servedRoot)
	model(t, "openai-compatible", "tier3.json")
	want := direct(t, "--root", plain, "--fixed-time", fixedTime, "query", llmQuestion)
	if want.code != 0 || !strings.Contains(want.stdout, "tier 3") {
		t.Fatalf("direct query: exit %d\n%s%s", want.code, want.stdout, want.stderr)
	}
	srv := model(t, "openai-compatible", "tier3.json")
	before := served(t, servedRoot)
	got := arbor(t, "", "--root", servedRoot, "--fixed-time", fixedTime, "query", llmQuestion)
	if n := served(t, servedRoot) - before; n != 2 {
		t.Errorf("the server answered %d calls, want 2 (query, resume)", n)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("%d model calls, want 1", len(srv.Requests()))
	}
	if got.code != 0 || normalize(got.stdout, servedRoot) != normalize(want.stdout, plain) {
		t.Errorf("through the server: exit %d\n%s%s\nwithout:\n%s", got.code, got.stdout, got.stderr, want.stdout)
	}
}
