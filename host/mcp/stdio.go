package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport is the SDK's newline-delimited JSON transport over in and
// out, guarded so that a line that is not a JSON-RPC message is answered
// with a JSON-RPC error (-32700 parse error, -32600 invalid request) and
// skipped: the SDK's own stdio transport ends the session at the first
// such line. Lines longer than sdk.DefaultMaxLineLength are refused the
// same way.
func StdioTransport(in io.ReadCloser, out io.Writer) sdk.Transport {
	w := &lockedWriter{w: out}
	return &sdk.IOTransport{
		Reader: &guardedInput{in: in, r: bufio.NewReader(in), out: w, max: sdk.DefaultMaxLineLength},
		Writer: w,
	}
}

// lockedWriter makes each Write whole: the SDK writes one message per
// Write, and so does guardedInput.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// guardedInput passes the lines that decode as JSON-RPC messages (and the
// messages of a batch, which the SDK handles itself) and answers the
// others.
type guardedInput struct {
	in      io.Closer
	r       *bufio.Reader
	out     io.Writer
	max     int
	pending []byte
}

var errLineTooLong = errors.New("line too long")

func (g *guardedInput) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		line, err := g.line()
		if errors.Is(err, errLineTooLong) {
			g.refuse(jsonrpc.CodeInvalidRequest, fmt.Sprintf("request larger than %d bytes", g.max))
			continue
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			switch {
			case !json.Valid(t):
				g.refuse(jsonrpc.CodeParseError, "parse error: the line is not JSON")
			case t[0] == '[':
				g.pending = g.batch(t)
			default:
				if _, derr := jsonrpc.DecodeMessage(t); derr != nil {
					g.refuse(jsonrpc.CodeInvalidRequest, "invalid request: "+derr.Error())
				} else {
					g.pending = append(t, '\n')
				}
			}
		}
		if err != nil && len(g.pending) == 0 {
			return 0, err
		}
		if err != nil {
			break
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// batch passes the messages of a JSON-RPC batch on and answers the
// elements that are not messages, one error each, in an array (JSON-RPC
// 2.0, §6); an empty batch is one error. The SDK ends the session at a
// batch holding anything but messages.
func (g *guardedInput) batch(t []byte) []byte {
	var elems []json.RawMessage
	if json.Unmarshal(t, &elems) != nil || len(elems) == 0 {
		g.refuse(jsonrpc.CodeInvalidRequest, "invalid request: an empty batch")
		return nil
	}
	var pass []json.RawMessage
	var errs [][]byte
	for i, e := range elems {
		if _, err := jsonrpc.DecodeMessage(e); err != nil {
			errs = append(errs, errorLine(jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: batch element %d: %v", i+1, err)))
			continue
		}
		pass = append(pass, e)
	}
	if len(errs) > 0 {
		g.out.Write(append(append([]byte{'['}, append(bytes.Join(errs, []byte{','}), ']')...), '\n'))
	}
	if len(pass) == 0 {
		return nil
	}
	b, _ := json.Marshal(pass)
	return append(b, '\n')
}

// line reads one line of at most max bytes; a longer one is read to its
// end and dropped.
func (g *guardedInput) line() ([]byte, error) {
	var line []byte
	for {
		chunk, err := g.r.ReadSlice('\n')
		if len(line)+len(chunk) > g.max {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = g.r.ReadSlice('\n')
			}
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// refuse answers a line that cannot be a request. Its id is unknown, so
// the answer's is null, as JSON-RPC 2.0 asks.
func (g *guardedInput) refuse(code int64, msg string) {
	g.out.Write(append(errorLine(code, msg), '\n'))
}

// errorLine is a JSON-RPC error response with a null id.
func errorLine(code int64, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	return b
}

func (g *guardedInput) Close() error { return g.in.Close() }
