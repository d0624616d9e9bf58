package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// serveRoot opens an engine on a copy of the example tree and serves it;
// the cleanup stops the server and checks that it stopped cleanly.
func serveRoot(t *testing.T, opts ...Option) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("../../examples/notes")); err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)
	ctx, cancel := context.WithCancel(context.Background())
	eng, err := runtime.New(ctx, root, runtime.WithWatch(0))
	if errors.Is(err, runtime.ErrNoModule) {
		t.Skip("host/runtime/arbor.wasm is the empty placeholder: run ./build.sh wasm")
	}
	if err != nil {
		t.Fatal(err)
	}
	// One call at a time may wait on a model: TestPendingCancelledWithItsClient
	// sees by it whether one is left waiting.
	if _, err := eng.Open(ctx, api.OpenParams{LLM: &api.LLMOptions{MaxContinuations: 1}}); err != nil {
		t.Fatal(err)
	}
	claim, err := NewClaim(root)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, claim, eng, append([]Option{WithLog(testLog{t})}, opts...)...) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := Dial(Expect(root, ""))
		if err == nil {
			c.Close()
			return root
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server does not answer: %v", err)
		}
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// raw sends lines on one connection and returns one answer per line.
func raw(t *testing.T, root string, lines ...string) []string {
	t.Helper()
	socket, _ := Paths(root)
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	var out []string
	for _, l := range lines {
		if _, err := conn.Write([]byte(l + "\n")); err != nil {
			t.Fatal(err)
		}
		ans, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		out = append(out, strings.TrimSuffix(ans, "\n"))
	}
	return out
}

// The protocol: the engine's envelope, id echoed, open and close
// refused, bad lines answered with the ABI's codes, and the connection
// still usable after each.
func TestProtocol(t *testing.T) {
	root := serveRoot(t)
	got := raw(t, root,
		`{"id":"a","method":"search","params":{"query":"invoice retry","limit":1}}`,
		`{"id":2,"method":"open","params":{}}`,
		`{"id":3,"method":"close"}`,
		`not json`,
		`{"id":4,"method":42}`,
		`{"id":5,"method":"nope"}`,
		`{"id":6,"method":"serve.hello"}`,
	)
	var search struct {
		ID     string           `json:"id"`
		Result api.SearchResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(got[0]), &search); err != nil || search.ID != "a" || len(search.Result.Results) != 1 {
		t.Errorf("search: %v %s", err, got[0])
	}
	for i, code := range map[int]string{1: api.CodeInvalidRequest, 2: api.CodeInvalidRequest, 3: api.CodeInvalidJSON, 4: api.CodeInvalidRequest, 5: api.CodeUnknownMethod} {
		var env struct{ Error *api.Error }
		if err := json.Unmarshal([]byte(got[i]), &env); err != nil || env.Error == nil || env.Error.Code != code {
			t.Errorf("line %d: %s, want code %s", i, got[i], code)
		}
	}
	var hello struct{ Result Hello }
	if err := json.Unmarshal([]byte(got[6]), &hello); err != nil || hello.Result.Mismatch(Expect(root, "")) != "" || hello.Result.PID != os.Getpid() || hello.Result.Calls != 2 {
		t.Errorf("hello: %s", got[6])
	}
}

// A request longer than MaxRequest is refused before it is read whole,
// and its connection closed.
func TestRequestTooLong(t *testing.T) {
	root := serveRoot(t)
	socket, _ := Paths(root)
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		chunk := []byte(`{"id":1,"method":"search","params":{"query":"` + strings.Repeat("x", 1<<20))
		for sent := 0; sent <= MaxRequest; sent += len(chunk) {
			if _, err := conn.Write(chunk); err != nil {
				return // the server closed the connection
			}
		}
		conn.Write([]byte(`"}}` + "\n"))
	}()
	r := bufio.NewReader(conn)
	ans, err := r.ReadString('\n')
	if err != nil || !strings.Contains(ans, api.CodeInvalidRequest) || !strings.Contains(ans, "longer than") {
		t.Fatalf("answer %q, %v", ans, err)
	}
	if _, err := r.ReadString('\n'); err == nil {
		t.Error("the connection stays open after a request too long")
	}
}

// A client that goes away while its call waits on a model leaves no
// continuation behind: the server cancels it. The engine lets one call
// wait at a time, so the next client's call waits too only once the first
// one's was cancelled.
func TestPendingCancelledWithItsClient(t *testing.T) {
	root := serveRoot(t)
	const query = `{"id":1,"method":"query","params":{"query":"failed retry escalation","llm":true}}`
	var env struct {
		Result api.Pending
		Error  *api.Error
	}
	if err := json.Unmarshal([]byte(raw(t, root, query)[0]), &env); err != nil || env.Result.Status != "pending" {
		t.Fatalf("query with llm: %+v, %v", env, err)
	}
	// The server sees the connection end a moment after raw closed it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		env.Result, env.Error = api.Pending{}, nil
		if err := json.Unmarshal([]byte(raw(t, root, query)[0]), &env); err != nil {
			t.Fatal(err)
		}
		if env.Result.Status == "pending" {
			return
		}
		if env.Error == nil || env.Error.Code != api.CodeTooManyPending {
			t.Fatalf("the second query: %+v", env)
		}
		if time.Now().After(deadline) {
			t.Fatal("the first client's call still waits after it left")
		}
	}
}

// A call the server does not answer fails with a *LostError and is not
// sent again: the next call fails the same way without reaching it.
func TestLostCallNotRetried(t *testing.T) {
	root := t.TempDir()
	socket, _ := Paths(root)
	if err := os.MkdirAll(filepath.Dir(socket), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := listen(socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	received := make(chan string, 10)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		hello, _ := r.ReadString('\n')
		received <- hello
		h := Expect(root, "")
		h.PID = 99
		b, _ := json.Marshal(map[string]any{"id": 1, "result": h})
		conn.Write(append(b, '\n'))
		req, _ := r.ReadString('\n') // the curate: read, then the server "dies"
		received <- req
	}()
	c, err := Dial(Expect(root, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.CallMethod(context.Background(), "curate", map[string]any{"operations": []any{}})
	var lost *LostError
	if !errors.As(err, &lost) || lost.Method != "curate" || !strings.Contains(err.Error(), "process 99") || !strings.Contains(err.Error(), "not sent again") {
		t.Fatalf("curate to a server that died: %v", err)
	}
	if _, err2 := c.CallMethod(context.Background(), "search", nil); !errors.As(err2, &lost) || lost.Method != "curate" {
		t.Errorf("the next call: %v", err2)
	}
	<-received
	if req := <-received; !strings.Contains(req, `"method":"curate"`) {
		t.Errorf("the server received %q", req)
	}
	select {
	case extra := <-received:
		t.Errorf("sent again: %q", extra)
	default:
	}
}

// A root whose .arbor/serve.sock would not fit in sun_path gets a short
// path in the temporary folder, the same for every process.
func TestPathsLongRoot(t *testing.T) {
	short := "/home/me/notes"
	if s, l := Paths(short); s != "/home/me/notes/.arbor/serve.sock" || l != "/home/me/notes/.arbor/serve.lock" {
		t.Errorf("short root: %s %s", s, l)
	}
	long := "/home/me/" + strings.Repeat("a_long_folder_name/", 6)
	s1, l1 := Paths(long)
	s2, _ := Paths(long)
	other, _ := Paths(long + "x")
	if len(s1) > maxSocketPath || strings.HasPrefix(s1, long) || s1 != s2 || s1 == other || !strings.HasSuffix(l1, ".lock") {
		t.Errorf("long root: %s %s (other %s)", s1, l1, other)
	}
}

// A connection the server closed for idleness says so first; the
// client's next call goes out again on a new connection, once, since the
// server never read it.
func TestIdleCloseRedials(t *testing.T) {
	root := serveRoot(t, WithIdleTimeout(20*time.Millisecond))
	socket, _ := Paths(root)
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	notice, err := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if err != nil || !strings.Contains(notice, `"id":null`) || !strings.Contains(notice, `"code":"idle"`) {
		t.Fatalf("an idle connection: %q, %v", notice, err)
	}

	c, err := Dial(Expect(root, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := c.Hello().Calls
	time.Sleep(100 * time.Millisecond) // past the idle timeout: the server closes the connection
	raw, err := c.CallMethod(context.Background(), "search", api.SearchParams{Query: "invoice retry", Limit: 1})
	var res api.SearchResult
	if err != nil || json.Unmarshal(raw, &res) != nil || len(res.Results) != 1 {
		t.Fatalf("the call after an idle close: %v %s", err, raw)
	}
	if c.Hello().Calls != first {
		t.Errorf("the server answered %d calls before the new connection, want %d", c.Hello().Calls, first)
	}
}
