package mcp

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// errStopped answers a job pushed after the server began to shut down.
var errStopped = errors.New("the Arbor MCP server is shutting down")

// job is one engine call waiting for its turn.
type job struct {
	ctx     context.Context
	run     func(ctx context.Context)
	read    bool // may run beside other reads
	done    chan struct{}
	started bool // under queue.mu
}

// queue starts engine calls first in first out: a write alone, once the
// calls started before it have ended, and reads up to readers at once (the
// engine's readers, runtime.Engine.AddReaders; one at a time without
// them, the engine being single-threaded, docs/ABI.md §5). The order gives
// agents read-your-writes: with the ordered transport below, a curate sent
// before a query is applied before that query starts, even when the client
// does not wait for the first answer, and the engine's readers reflect a
// write before their next call. A job is one engine call, so a host that
// adds LLM tiers can wait for the model outside the queue and let reads
// pass.
type queue struct {
	mu      sync.Mutex
	wake    *sync.Cond
	jobs    []*job
	closed  bool
	readers int // reads that may run at once
	running int // jobs started and not ended
	// mostReads is the most reads seen running at once (for tests).
	mostReads int
	// arrived is called when a job is queued; the ordered transport uses it
	// to let the next message in.
	arrived func()
}

func newQueue(readers int) *queue {
	q := &queue{arrived: func() {}, readers: max(readers, 1)}
	q.wake = sync.NewCond(&q.mu)
	return q
}

// do queues run and waits until it ran. A job whose ctx ends before its
// turn is skipped and do returns ctx's error; one that has started runs on
// (run gets ctx without its cancel) and is waited for: a curate stopped
// halfway would have written some of its files and not others, and any
// stopped call costs the next one a restart of the engine. do then
// reports it as run. A job for a tool call says so (call), so that its
// arrival lets the ordered transport read on; a read may run beside other
// reads.
func (q *queue) do(ctx context.Context, call, read bool, run func(ctx context.Context)) error {
	j := &job{ctx: ctx, run: run, read: read, done: make(chan struct{})}
	q.mu.Lock()
	arrived := q.arrived
	if q.closed {
		q.mu.Unlock()
		if call {
			arrived()
		}
		return errStopped
	}
	q.jobs = append(q.jobs, j)
	q.wake.Broadcast()
	q.mu.Unlock()
	if call {
		arrived()
	}
	select {
	case <-j.done:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	started := j.started
	q.mu.Unlock()
	if started {
		<-j.done
		return nil
	}
	return ctx.Err() // serve skips it: its ctx has ended
}

// serve starts the jobs in order until close, then returns once the jobs
// queued before close have run.
func (q *queue) serve() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for len(q.jobs) == 0 && !q.closed {
			q.wake.Wait()
		}
		if len(q.jobs) == 0 {
			for q.running > 0 {
				q.wake.Wait()
			}
			return
		}
		j := q.jobs[0]
		// A write waits for every call before it to end; a read for a
		// free reader.
		for (!j.read && q.running > 0) || (j.read && q.running >= q.readers) {
			q.wake.Wait()
		}
		q.jobs[0] = nil
		q.jobs = q.jobs[1:]
		j.started = j.ctx.Err() == nil
		if !j.started {
			close(j.done) // skipped: its ctx has ended
			continue
		}
		q.running++
		if j.read {
			q.mostReads = max(q.mostReads, q.running)
			go q.run(j)
			continue
		}
		q.mu.Unlock()
		q.run(j)
		q.mu.Lock()
	}
}

// run runs a started job. A started call is not cancelled with its
// request (see do): only the engine's own deadline
// (runtime.WithCallTimeout) stops it.
func (q *queue) run(j *job) {
	j.run(context.WithoutCancel(j.ctx))
	close(j.done)
	q.mu.Lock()
	q.running--
	q.wake.Broadcast()
	q.mu.Unlock()
}

// close stops taking jobs; serve drains the ones already queued.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.wake.Broadcast()
	q.mu.Unlock()
}

// ordered wraps a transport so that tool calls join the queue in the order
// they arrive on the wire. The SDK handles each call on its own goroutine,
// so two calls read back to back could otherwise reach the queue in either
// order. After reading a tools/call request the connection reads nothing
// more until that call has joined the queue or been answered (a call the
// SDK refuses before it reaches a tool never joins) — a pause of
// microseconds.
//
// It also lets a client end its input right after its last request (as
// `printf … | arbor mcp` does): at end of input the connection answers the
// calls it has read before it reports the end, where the SDK would cancel
// them.
type ordered struct {
	sdk.Transport
	q *queue
}

func (t ordered) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &orderedConn{Connection: conn, gate: make(chan struct{}, 1), closing: make(chan struct{}), inflight: map[jsonrpc.ID]bool{}, listens: map[jsonrpc.ID]bool{}}
	c.idle = sync.NewCond(&c.mu)
	c.gate <- struct{}{}
	t.q.mu.Lock()
	t.q.arrived = c.open
	t.q.mu.Unlock()
	return c, nil
}

type orderedConn struct {
	sdk.Connection
	// gate holds the one token that allows a Read. A tools/call request
	// keeps it; the call's arrival in the queue (or its answer) puts it back.
	gate      chan struct{}
	closing   chan struct{}
	closeOnce sync.Once
	mu        sync.Mutex
	closed    bool
	holding   bool       // a tools/call keeps the token
	pending   jsonrpc.ID // that call
	inflight  map[jsonrpc.ID]bool
	idle      *sync.Cond          // inflight emptied, or closed
	listens   map[jsonrpc.ID]bool // subscriptions/listen calls not yet answered
}

const (
	methodCallTool = "tools/call"
	methodListen   = "subscriptions/listen"
)

func (c *orderedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-c.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closing:
		return nil, io.EOF
	}
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.mu.Lock()
		for len(c.inflight) > 0 && !c.closed {
			c.idle.Wait()
		}
		c.mu.Unlock()
		c.gate <- struct{}{}
		return nil, err
	}
	req, ok := msg.(*jsonrpc.Request)
	// A subscriptions/listen call (protocol 2026-07-28) is answered only
	// when its stream ends: it is no call to wait for at end of input.
	if ok && req.IsCall() && req.Method == methodListen {
		c.mu.Lock()
		c.listens[req.ID] = true
		c.mu.Unlock()
	} else if ok && req.IsCall() {
		c.mu.Lock()
		c.inflight[req.ID] = true
		keep := req.Method == methodCallTool
		if keep {
			c.holding, c.pending = true, req.ID
		}
		c.mu.Unlock()
		if keep {
			return msg, nil
		}
	}
	c.gate <- struct{}{}
	return msg, nil
}

// open puts the token back: the call keeping it reached the queue.
func (c *orderedConn) open() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holding {
		c.holding = false
		c.gate <- struct{}{}
	}
}

// Write notes answered calls, and puts the token back when the call
// keeping it is answered without reaching the queue (an unknown tool,
// arguments the schema refuses).
//
// A listen stream is answered when it ends, which is when its client
// cancels it, often as it closes the connection: an answer that cannot be
// written then is no failure of the session.
func (c *orderedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if res, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if c.listens[res.ID] {
			delete(c.listens, res.ID)
			err = nil
		}
		if c.holding && res.ID == c.pending {
			c.holding = false
			c.gate <- struct{}{}
		}
		delete(c.inflight, res.ID)
		if len(c.inflight) == 0 {
			c.idle.Broadcast()
		}
		c.mu.Unlock()
	}
	return err
}

func (c *orderedConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.idle.Broadcast()
		c.mu.Unlock()
		close(c.closing)
	})
	return c.Connection.Close()
}
