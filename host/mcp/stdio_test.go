package mcp

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
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
