package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// The guard passes JSON-RPC messages and batches through untouched and
// answers everything else on the output, line by line.
func TestGuardedInput(t *testing.T) {
	valid := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	batch := `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`
	long := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 100) + `"}}`
	in := strings.Join([]string{"garbage", valid, "", "   ", `{"id":3}`, long, batch, `{"jsonrpc":"2.0","id":4,"method":"ping"}`}, "\n")
	var out bytes.Buffer
	g := &guardedInput{in: io.NopCloser(nil), r: bufio.NewReaderSize(strings.NewReader(in), 16), out: &lockedWriter{w: &out}, max: 64}
	passed, err := io.ReadAll(g)
	if err != nil {
		t.Fatal(err)
	}
	want := valid + "\n" + batch + "\n" + `{"jsonrpc":"2.0","id":4,"method":"ping"}` + "\n"
	if string(passed) != want {
		t.Errorf("passed:\n%s\nwant:\n%s", passed, want)
	}
	refused := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(refused) != 3 || !strings.Contains(refused[0], `"code":-32700`) || !strings.Contains(refused[1], `"code":-32600`) ||
		!strings.Contains(refused[2], "larger than 64 bytes") || !strings.Contains(refused[0], `"id":null`) {
		t.Errorf("refused:\n%s", out.String())
	}
}

// stdioServer runs a server on a fresh root over StdioTransport and
// returns the client's end: send writes one line, answered waits for the
// response to an id. The client has initialized the session.
func stdioServer(t testing.TB) (send func(line string), answered func(id int) bool) {
	t.Helper()
	ctx := context.Background()
	eng, err := runtime.New(ctx, t.TempDir(), runtime.WithCacheDir(""))
	if errors.Is(err, runtime.ErrNoModule) {
		t.Skip("host/runtime/arbor.wasm is the empty placeholder: run ./build.sh wasm")
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Open(ctx, api.OpenParams{}); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- New(eng).Run(ctx, StdioTransport(inR, outW)) }()
	ids := make(chan int, 1024)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var msgs []struct {
				ID *int `json:"id"`
			}
			line := sc.Bytes()
			if len(line) > 0 && line[0] != '[' {
				line = append(append([]byte{'['}, line...), ']')
			}
			if json.Unmarshal(line, &msgs) != nil {
				continue
			}
			for _, m := range msgs {
				if m.ID != nil {
					ids <- *m.ID
				}
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		outW.Close()
		eng.Close(ctx)
	})
	send = func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	answered = func(id int) bool {
		timeout := time.After(10 * time.Second)
		for {
			select {
			case got := <-ids:
				if got == id {
					return true
				}
			case <-timeout:
				return false
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if !answered(0) {
		t.Fatal("no answer to initialize")
	}
	return send, answered
}

// The server answers the next request after any line a client or a broken
// pipe can send.
func TestServerSurvivesBadLines(t *testing.T) {
	send, answered := stdioServer(t)
	bad := []string{
		"garbage", "{", "[]", "[1]", `["x"]`, `[{"foo":1}]`, "[[]]", `[{"jsonrpc":"2.0","id":90,"method":"ping"},5]`,
		"null", `"a string"`, "42", "true", "{}", `{"jsonrpc":"2.0"}`, `{"jsonrpc":"1.0","id":91,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, `{"jsonrpc":"2.0","id":92,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","id":93,"method":"tools/call","params":{"name":"arbor-read","arguments":{"path":"../etc/passwd"}}}`,
		`{"jsonrpc":"2.0","id":94,"method":"tools/call","params":{"name":"arbor-curate","arguments":{"operations":"nope"}}}`,
		"\xff\xfe not UTF-8", `{"jsonrpc":"2.0","id":95,"method":"ping","params":{"x":"` + "\xff" + `"}}`,
		"bin\x00ary\x01\x02", "\x1b[2J", strings.Repeat("x", 10<<20), `{"pad":"` + strings.Repeat("y", 17<<20) + `"}`,
	}
	for i, line := range bad {
		send(line)
		id := 1000 + i
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
		if !answered(id) {
			t.Fatalf("no answer after bad line %d (%.40q)", i+1, line)
		}
	}
}

// The stdio loop survives any line: after it, a ping is answered.
func FuzzStdioLine(f *testing.F) {
	for _, seed := range []string{"garbage", "[]", "[1]", `[{"foo":1}]`, `{"jsonrpc":"2.0","id":7,"method":"ping"}`, "\xff", "\x00"} {
		f.Add(seed)
	}
	send, answered := stdioServer(f)
	id := 2000
	f.Fuzz(func(t *testing.T, line string) {
		id++
		send(strings.ReplaceAll(line, "\n", " "))
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
		if !answered(id) {
			t.Fatalf("no answer after %q", line)
		}
	})
}
