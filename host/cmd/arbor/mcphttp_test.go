package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/host/mcp"
)

// httpServer is `arbor mcp --http` running on a free loopback port.
type httpServer struct {
	cmd    *exec.Cmd
	url    string
	stderr chan string // the lines after the first
}

var servingLine = regexp.MustCompile(`on (http://\S+) \(token: ([^)]*)\)`)

// startHTTP starts `arbor mcp --http 127.0.0.1:0` on root with flags and
// env, and waits for the line that says where it serves.
func startHTTP(t *testing.T, root string, env []string, flags ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"--root", root, "mcp", "--http", "127.0.0.1:0"}, flags...)...)
	cmd.Env = append(os.Environ(), env...)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &httpServer{cmd: cmd, stderr: make(chan string, 64)}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}
	})
	sc := bufio.NewScanner(errPipe)
	if !sc.Scan() {
		t.Fatalf("arbor mcp --http said nothing: %v", sc.Err())
	}
	m := servingLine.FindStringSubmatch(sc.Text())
	if m == nil {
		t.Fatalf("arbor mcp --http: %q", sc.Text())
	}
	s.url = m[1]
	go func() {
		for sc.Scan() {
			s.stderr <- sc.Text()
		}
		close(s.stderr)
	}()
	return s
}

// stop sends SIGTERM and waits for a clean exit.
func (s *httpServer) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("arbor mcp --http ignored SIGTERM")
	}
}

type withToken struct{ token string }

func (w withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+w.token)
	return http.DefaultTransport.RoundTrip(r)
}

// The first start writes a token readable by its owner only, and the next
// start uses it; a client with it is served, one without gets 401. A token
// from the environment replaces the file's, and a token file others can
// read is refused.
func TestMCPHTTPToken(t *testing.T) {
	root := examplesCopy(t)
	s := startHTTP(t, root, nil)
	file := filepath.Join(root, ".arbor", "mcp-token")
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(file)
	token := strings.TrimSpace(string(b))
	if len(token) < 40 {
		t.Fatalf("token %q", token)
	}

	res, err := http.Post(s.url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 401 || !strings.Contains(string(body), ".arbor/mcp-token") {
		t.Errorf("without token: %d %q", res.StatusCode, body)
	}

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: s.url, HTTPClient: &http.Client{Transport: withToken{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := callTool(t, cs, mcp.ToolQuery, map[string]any{"query": "which tokenizer did we pick for Korean"}, nil)
	if !strings.Contains(toolText(out), "korean_tokenizer_findings.md") {
		t.Errorf("query over HTTP: %s", toolText(out))
	}
	cs.Close()
	s.stop(t)
	if b, err := os.ReadFile(filepath.Join(root, ".arbor/state.json")); err != nil || !strings.Contains(string(b), `"accesses": 1`) {
		t.Errorf("state after SIGTERM: %v\n%s", err, b)
	}

	// The next start keeps the file's token; one from the environment wins.
	s = startHTTP(t, root, nil)
	if b2, _ := os.ReadFile(file); string(b2) != string(b) {
		t.Errorf("the token changed: %q, then %q", b, b2)
	}
	s.stop(t)
	s = startHTTP(t, root, []string{"ARBOR_MCP_TOKEN=from-env"})
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+token)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Errorf("the file's token with $ARBOR_MCP_TOKEN set: %d", res.StatusCode)
	}
	s.stop(t)

	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	r := arbor(t, "", "--root", root, "mcp", "--http", "127.0.0.1:0")
	if r.code != exitError || !strings.Contains(r.stderr, "can be read by other users") {
		t.Errorf("a readable token file: exit %d, %q", r.code, r.stderr)
	}
}

// Flags that cannot go together are usage errors, and serving without a
// token off loopback is refused before anything listens.
func TestMCPHTTPFlags(t *testing.T) {
	needEngine(t)
	root := examplesCopy(t)
	for _, c := range []struct {
		flags []string
		code  int
		want  string
	}{
		{[]string{"--token", "x"}, exitUsage, "go with --http"},
		{[]string{"--allow-origin", "https://a.example"}, exitUsage, "go with --http"},
		{[]string{"--http", "127.0.0.1:0", "--no-token", "--token", "x"}, exitUsage, "contradict"},
		{[]string{"--http", "0.0.0.0:0", "--no-token"}, exitUsage, "only a loopback address"},
		{[]string{"--http", "192.0.2.1:7000", "--no-token"}, exitUsage, "only a loopback address"},
		{[]string{"--http", "127.0.0.1:0", "--read-only"}, exitUsage, "writes nothing, not even a token"},
		{[]string{"--http", "127.0.0.1:0", "--readers", "-1"}, exitUsage, "--readers must lie in 1..64"},
	} {
		r := arbor(t, "", append([]string{"--root", root, "mcp"}, c.flags...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("mcp %v: exit %d, stderr %q; want exit %d saying %q", c.flags, r.code, r.stderr, c.code, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".arbor", "mcp-token")); !os.IsNotExist(err) {
		t.Errorf("a refused start left a token file: %v", err)
	}
	for addr, want := range map[string]string{"7331": "127.0.0.1:7331", ":7331": "127.0.0.1:7331", "0.0.0.0:7331": "0.0.0.0:7331", "[::1]:7331": "[::1]:7331"} {
		if got := httpAddr(addr); got != want {
			t.Errorf("httpAddr(%q) = %q, want %q", addr, got, want)
		}
	}
}

// With --readers, two clients each see the other's write at their next
// call, and the readers' accesses are persisted at exit.
func TestMCPHTTPReaders(t *testing.T) {
	root := examplesCopy(t)
	s := startHTTP(t, root, nil, "--no-token", "--readers", "3")
	connect := func() *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: s.url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	a, b := connect(), connect()
	for i := range 3 {
		word := fmt.Sprintf("quokka%dword", i)
		callTool(t, a, mcp.ToolCurate, map[string]any{"operations": []map[string]any{{"type": "UPSERT", "path": "notes/shared", "title": "Shared",
			"content": map[string]any{"narrative": "The word is " + word + "."}, "reason": "test"}}}, nil)
		for range 3 {
			if out := callTool(t, b, mcp.ToolSearch, map[string]any{"query": word}, nil); !strings.Contains(toolText(out), "notes/shared/shared.md") {
				t.Fatalf("b does not find a's write %d: %s", i, toolText(out))
			}
		}
	}
	callTool(t, b, mcp.ToolQuery, map[string]any{"query": "which tokenizer did we pick for Korean"}, nil)
	a.Close()
	b.Close()
	s.stop(t)
	if b, err := os.ReadFile(filepath.Join(root, ".arbor/state.json")); err != nil || !strings.Contains(string(b), `"accesses": 1`) {
		t.Errorf("state after SIGTERM: %v\n%s", err, b)
	}
}
