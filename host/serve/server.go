package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// Claim is the right to serve one root: the root's server lock is held,
// so no other server starts for it. Serve then creates the socket.
type Claim struct {
	root, socket string
	lock         *os.File
}

// RunningError is returned by NewClaim when another process serves the
// root already.
type RunningError struct {
	PID    int // 0 when the lock file does not say
	Socket string
}

func (e *RunningError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = fmt.Sprintf("process %d", e.PID)
	}
	return fmt.Sprintf("a server already serves this root (%s, on %s); arbor serve --stop stops it", who, e.Socket)
}

// NewClaim takes the server lock of root (absolute, symbolic links
// resolved) without waiting: it fails with a *RunningError when a server
// runs for root already. The lock is released by the kernel when the
// process ends, however it ends, so a killed server never blocks the
// next one.
func NewClaim(root string) (*Claim, error) {
	socket, lockPath := Paths(root)
	if err := os.MkdirAll(filepath.Join(root, api.StateDir), 0o755); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	f, err := lockFile(lockPath)
	if err != nil {
		var re *RunningError
		if errors.As(err, &re) {
			re.Socket = socket
		}
		return nil, err
	}
	return &Claim{root: root, socket: socket, lock: f}, nil
}

// Socket is the path the server listens on.
func (c *Claim) Socket() string { return c.socket }

// Release gives the claim up; Serve does it when it returns. The lock
// file stays: removing it would let a server that opened it a moment
// before lock a file no later server sees.
func (c *Claim) Release() error {
	if c.lock == nil {
		return nil
	}
	err := c.lock.Close()
	c.lock = nil
	return err
}

// Option configures Serve.
type Option func(*server)

// WithFixedTime says the engine was opened with this fixedTime, which
// clients must share (Hello.FixedTime).
func WithFixedTime(t string) Option { return func(s *server) { s.hello.FixedTime = t } }

// WithFlushInterval sets how often the server writes the lifecycle signals
// and index changes that calls accumulate, when calls were made since the
// last time (default 5 minutes; 0: only when it stops).
func WithFlushInterval(d time.Duration) Option { return func(s *server) { s.flushEvery = d } }

// WithIdleTimeout sets how long a connection may wait between requests
// before the server closes it (default 1 minute; 15 minutes while a call
// of the connection waits on a model, whose continuation the engine keeps
// for 10 minutes by default).
func WithIdleTimeout(d time.Duration) Option { return func(s *server) { s.idle = d } }

// WithLog sends the server's diagnostics to w (default os.Stderr).
func WithLog(w io.Writer) Option { return func(s *server) { s.log = w } }

const (
	pendingIdle  = 15 * time.Minute
	writeTimeout = time.Minute
)

type server struct {
	eng        *runtime.Engine
	hello      Hello
	flushEvery time.Duration
	idle       time.Duration
	log        io.Writer

	ln       net.Listener
	wg       sync.WaitGroup // the connections' goroutines
	stopOnce sync.Once
	stopReq  chan struct{}
	calls    atomic.Int64

	mu       sync.Mutex
	conns    map[net.Conn]bool
	stopping bool
	stoppers []net.Conn // the clients that asked to stop, told when it is done
	dirty    bool       // a call since the last flush
}

// Serve serves eng, which must be open on the claimed root, on the
// claim's socket until ctx ends or a client sends serve.stop. It then
// stops accepting connections, lets the calls under way finish, closes
// the engine (which writes its lifecycle signals and index), releases the
// claim and returns the close's error. A stale socket file, left by a
// server that was killed, is replaced.
func Serve(ctx context.Context, c *Claim, eng *runtime.Engine, opts ...Option) error {
	defer c.Release()
	s := &server{
		eng:        eng,
		hello:      Hello{Version: api.Version, ABIVersion: runtime.ABIVersion, Module: runtime.ModuleDigest(), Root: eng.Root(), PID: os.Getpid(), Since: time.Now().UTC().Format(time.RFC3339)},
		flushEvery: 5 * time.Minute,
		idle:       time.Minute,
		log:        os.Stderr,
		stopReq:    make(chan struct{}),
		conns:      map[net.Conn]bool{},
	}
	for _, o := range opts {
		o(s)
	}
	ln, err := listen(c.socket)
	if err != nil {
		eng.Close(context.Background())
		return fmt.Errorf("serve: %w", err)
	}
	s.ln = ln
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		s.accept()
	}()
	stopFlush := s.startFlush()
	select {
	case <-ctx.Done():
	case <-s.stopReq:
	}
	s.mu.Lock()
	s.stopping = true
	ln.Close() // removes the socket file: new clients run the engine themselves
	for conn, busy := range s.conns {
		if !busy {
			conn.SetReadDeadline(time.Unix(1, 0)) // wakes the read of a connection between calls
		}
	}
	s.mu.Unlock()
	<-accepted
	s.wg.Wait()
	stopFlush()
	err = eng.Close(context.Background())
	if err != nil {
		fmt.Fprintf(s.log, "arbor serve: close the engine: %v\n", err)
	}
	for _, conn := range s.stoppers {
		conn.Close()
	}
	return err
}

func (s *server) accept() {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors, most likely: the connections open now
			// will close.
			fmt.Fprintf(s.log, "arbor serve: accept: %v\n", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		s.mu.Lock()
		if s.stopping {
			s.mu.Unlock()
			conn.Close()
			continue
		}
		s.conns[conn] = false
		s.wg.Add(1)
		s.mu.Unlock()
		go s.handle(conn)
	}
}

// errTooLong is a request line longer than MaxRequest.
var errTooLong = fmt.Errorf("request longer than %d bytes", MaxRequest)

// handle serves one connection's requests, one at a time, until the
// client closes it, it stays idle too long, or the server stops. The
// continuations a call of this connection left waiting on a model are
// cancelled when it ends: their client can no longer resume them.
func (s *server) handle(conn net.Conn) {
	keep := false
	pending := map[string]bool{}
	defer func() {
		for cont := range pending {
			s.eng.CallMethod(context.Background(), "cancel", api.CancelParams{Continuation: cont})
		}
		s.mu.Lock()
		delete(s.conns, conn)
		if keep {
			s.stoppers = append(s.stoppers, conn)
		}
		s.mu.Unlock()
		if !keep {
			conn.Close()
		}
		s.wg.Done()
	}()
	r := bufio.NewReaderSize(conn, 64<<10)
	for {
		idle := s.idle
		if len(pending) > 0 {
			idle = max(idle, pendingIdle)
		}
		if !s.between(conn, idle) {
			return
		}
		line, err := readLine(r)
		if errors.Is(err, errTooLong) {
			s.reply(conn, errorLine(nil, api.CodeInvalidRequest, err.Error()+"; the connection is closed"))
			return
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && !s.isStopping() {
			// Said before closing, so that a client whose request crossed
			// this knows the request was not read, and may send it again
			// on a new connection.
			s.reply(conn, errorLine(nil, CodeIdle, fmt.Sprintf("no request for %s: the connection is closed", idle)))
		}
		if err != nil {
			return // the client went away, or stayed idle too long
		}
		if len(line) == 0 {
			continue
		}
		s.mu.Lock()
		s.conns[conn] = true
		s.mu.Unlock()
		out, stop := s.dispatch(line, pending)
		if s.reply(conn, out) != nil {
			return
		}
		if stop {
			keep = true
			s.stopOnce.Do(func() { close(s.stopReq) })
			return
		}
	}
}

// between marks conn as waiting for its next request, with a read
// deadline idle from now; false when the server is stopping.
func (s *server) between(conn net.Conn, idle time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	s.conns[conn] = false
	conn.SetReadDeadline(time.Now().Add(idle))
	return true
}

func (s *server) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// readLine reads one request line without its line ending.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxRequest+2 {
			return nil, errTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return bytes.TrimRight(line, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
}

// dispatch answers one request; stop is set for serve.stop.
func (s *server) dispatch(line []byte, pending map[string]bool) (out []byte, stop bool) {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		if !json.Valid(line) {
			return errorLine(nil, api.CodeInvalidJSON, "the request is not a JSON object"), false
		}
		return errorLine(nil, api.CodeInvalidRequest, err.Error()), false
	}
	switch head.Method {
	case MethodHello:
		h := s.hello
		h.Calls = s.calls.Load()
		return resultLine(head.ID, h), false
	case MethodStop:
		return resultLine(head.ID, map[string]bool{"stopping": true}), true
	case "open", "close":
		return errorLine(head.ID, api.CodeInvalidRequest, fmt.Sprintf("%s: the server opened the memory root and closes it when it stops (arbor serve --stop)", head.Method)), false
	}
	out, err := s.eng.Call(context.Background(), line)
	if err != nil {
		// The module stopped (docs/sandbox.md): the engine restarts it at
		// the next call.
		return errorLine(head.ID, api.CodeInternal, err.Error()), false
	}
	s.calls.Add(1)
	s.mu.Lock()
	s.dirty = true
	s.mu.Unlock()
	switch head.Method {
	case "resume", "cancel":
		var p api.CancelParams
		if json.Unmarshal(head.Params, &p) == nil {
			delete(pending, p.Continuation)
		}
	}
	switch head.Method {
	case "query", "curateFrom", "resume":
		var env struct{ Result api.Pending }
		if json.Unmarshal(out, &env) == nil && env.Result.Status == "pending" {
			pending[env.Result.Continuation] = true
		}
	}
	if bytes.IndexByte(out, '\n') >= 0 {
		var b bytes.Buffer
		if json.Compact(&b, out) == nil {
			out = b.Bytes()
		}
	}
	return out, false
}

func resultLine(id json.RawMessage, v any) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		ID     json.RawMessage `json:"id"`
		Result any             `json:"result"`
	}{id, v})
	return b
}

func errorLine(id json.RawMessage, code, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		ID    json.RawMessage `json:"id"`
		Error *api.Error      `json:"error"`
	}{id, &api.Error{Code: code, Message: msg}})
	return b
}

// reply writes one response line; a client that does not read it within
// writeTimeout loses its connection.
func (s *server) reply(conn net.Conn, out []byte) error {
	conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := conn.Write(append(out, '\n'))
	return err
}

// startFlush writes the engine's lifecycle signals and index every
// flushEvery when calls were made since the last flush, so that a server
// that is killed loses little; it returns its stop.
func (s *server) startFlush() (stop func()) {
	return runtime.Every(s.flushEvery, func() {
		s.mu.Lock()
		dirty := s.dirty
		s.dirty = false
		s.mu.Unlock()
		if !dirty {
			return
		}
		if _, err := s.eng.Flush(context.Background()); err != nil {
			fmt.Fprintf(s.log, "arbor serve: flush: %v\n", err)
			s.mu.Lock()
			s.dirty = true // the next tick, or the close, tries again
			s.mu.Unlock()
		}
	})
}
