package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/arbormem/arbor/core/api"
)

// ErrNoServer is returned by Probe and Dial when no server listens for
// the root.
var ErrNoServer = errors.New("no server runs for this root")

// ErrStale is returned by Probe and Dial when the socket file is there
// but nothing listens on it: its server was killed. The next server
// replaces it.
var ErrStale = errors.New("the socket file was left by a server that no longer runs")

// MismatchError is returned by Dial when a server answers but serves
// another root, or with another build of the engine.
type MismatchError struct {
	Server Hello
	Why    string
}

func (e *MismatchError) Error() string { return "the server does not match: " + e.Why }

// helloTimeout bounds the handshake: a server answers it without the
// engine, at once, unless it is stopped (SIGSTOP) or wedged.
const helloTimeout = 5 * time.Second

// Client is a connection to the server of one root. It makes one call at
// a time: it is not safe for concurrent use.
type Client struct {
	conn   net.Conn
	r      *bufio.Reader
	hello  Hello
	want   *Hello // what Dial checked, to connect again after an idle close
	nextID int64
	lost   error // set once a call got no answer: the connection is done
}

// Probe connects to the server that listens for root, whatever it
// serves, and returns it with its Hello read.
func Probe(root string) (*Client, error) {
	if !supported {
		return nil, ErrUnsupported
	}
	socket, _ := Paths(root)
	if _, err := os.Lstat(socket); errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoServer
	}
	if !ownSocket(socket) {
		return nil, fmt.Errorf("%s is not a socket of this user's: not used", socket)
	}
	conn, err := net.DialTimeout("unix", socket, helloTimeout)
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist) {
		return nil, ErrStale
	}
	if err != nil {
		return nil, err
	}
	c := &Client{conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}
	conn.SetDeadline(time.Now().Add(helloTimeout))
	raw, err := c.CallMethod(context.Background(), MethodHello, nil)
	if err == nil {
		err = json.Unmarshal(raw, &c.hello)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("serve: hello: %w", err)
	}
	conn.SetDeadline(time.Time{})
	return c, nil
}

// Dial connects to the server of want.Root and checks that it serves it
// with the same build of the engine and the same clock (Expect): a
// *MismatchError when it does not.
func Dial(want Hello) (*Client, error) {
	c, err := Probe(want.Root)
	if err != nil {
		return nil, err
	}
	if why := c.hello.Mismatch(want); why != "" {
		c.Close()
		return nil, &MismatchError{Server: c.hello, Why: why}
	}
	c.want = &want
	return c, nil
}

// Hello is what the server said of itself.
func (c *Client) Hello() Hello { return c.hello }

// Root is the memory root the server serves.
func (c *Client) Root() string { return c.hello.Root }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// CallMethod sends one call of method with params (marshaled to JSON;
// nil sends none) and returns the raw result, or the engine's error as an
// *api.Error, as runtime.Engine.CallMethod does. ctx is checked before the
// call is sent, not during it: the server finishes a call it received
// whatever becomes of its client, so the client waits for the answer. A
// call that gets no answer (the server died) fails with a *LostError and
// is never sent again.
func (c *Client) CallMethod(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if c.lost != nil {
		return nil, c.lost
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("arbor: %s: %w", method, err)
	}
	c.nextID++
	req, err := json.Marshal(struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params,omitempty"`
	}{c.nextID, method, params})
	if err != nil {
		return nil, fmt.Errorf("arbor: %s: encode params: %w", method, err)
	}
	if len(req) > MaxRequest {
		return nil, fmt.Errorf("arbor: %s: the request of %d bytes is over arbor serve's limit of %d; run the command with ARBOR_NO_SERVE=1", method, len(req), MaxRequest)
	}
	if _, err = c.conn.Write(append(req, '\n')); err != nil && c.want != nil {
		// Not all of the line reached the server, which runs only whole
		// lines: it closed the connection (idle, or it stopped) before
		// this call was sent, and it is sent again, once, on a new one.
		return c.redial(ctx, method, params)
	}
	var line []byte
	if err == nil {
		line, err = c.r.ReadBytes('\n')
	}
	if err != nil {
		c.lost = &LostError{Method: method, PID: c.hello.PID, Err: err}
		return nil, c.lost
	}
	var env struct {
		ID     *int64          `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *api.Error      `json:"error"`
	}
	err = json.Unmarshal(line, &env)
	if err == nil && env.ID == nil && env.Error != nil && env.Error.Code == CodeIdle && c.want != nil {
		// The server closed the connection, between requests, without
		// reading this one (a command that waited on its input, as
		// `query -` does): it is sent again, once, on a new connection.
		return c.redial(ctx, method, params)
	}
	if err != nil || env.ID == nil || *env.ID != c.nextID {
		c.lost = &LostError{Method: method, PID: c.hello.PID, Err: fmt.Errorf("an answer that is not to this call: %.200s", line)}
		return nil, c.lost
	}
	if env.Error != nil {
		return nil, env.Error
	}
	return env.Result, nil
}

// redial replaces the connection the server closed for idleness and
// sends the call on the new one.
func (c *Client) redial(ctx context.Context, method string, params any) (json.RawMessage, error) {
	want := c.want
	c.conn.Close()
	fresh, err := Dial(*want)
	if err != nil {
		c.lost = &LostError{Method: method, PID: c.hello.PID, Err: fmt.Errorf("connect again after an idle close: %w", err)}
		return nil, c.lost
	}
	fresh.want = nil // once: a server that closes at once is not chased
	*c = *fresh
	raw, err := c.CallMethod(ctx, method, params)
	c.want = want
	return raw, err
}

// Stop asks the server to stop and waits until it has: its engine closed
// (lifecycle signals and index written) and its socket removed.
func (c *Client) Stop() error {
	if _, err := c.CallMethod(context.Background(), MethodStop, nil); err != nil {
		return err
	}
	// The server closes this connection last.
	if _, err := io.Copy(io.Discard, c.r); err != nil {
		return fmt.Errorf("serve: wait for the server to stop: %w", err)
	}
	return nil
}

// LostError is a call the server did not answer: it died, or the
// connection broke. The call may have been carried out; the client does
// not send it again, so that a write is never applied twice.
type LostError struct {
	Method string
	PID    int
	Err    error
}

func (e *LostError) Error() string {
	msg := fmt.Sprintf("arbor serve (process %d) did not answer %s: %v", e.PID, e.Method, e.Err)
	switch e.Method {
	case "curate", "ingest", "curateFrom", "resume":
		return msg + "; the call was not sent again: its writes were made whole or not at all (the audit log, .arbor/audit.jsonl, lists those made)"
	}
	return msg + "; run the command again"
}

func (e *LostError) Unwrap() error { return e.Err }
