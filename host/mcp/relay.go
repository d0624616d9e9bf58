package mcp

import (
	"context"
	"fmt"
	"io"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// Relay carries what the engine reports during a call to the client that
// made it: log lines as notifications/message (at or above the level the
// client set with logging/setLevel, none before it set one), and progress
// as notifications/progress when the request carried a progress token.
// The engine reports to the options it was created with, before any
// server exists, so the Relay is made first, its EngineOptions given to
// runtime.New and the Relay itself to New (WithRelay). Calls run one at a
// time, so the relay has one caller at a time.
//
// The notifications are sent by a goroutine of the call's own, not by the
// engine's: a client that stops reading its stream would otherwise stall
// the engine, and every other client with it. They queue up to
// relayBuffer; beyond it, while the client does not read, the engine's
// reports are dropped. The call is answered once they are all sent.
type Relay struct {
	stderr io.Writer
	mu     sync.Mutex
	cur    *sink
}

// sink is the caller of the running call.
type sink struct {
	ctx context.Context
	caller
	// MCP progress must grow with every notification, while the engine
	// counts each phase (write, then index) from zero: progress is the
	// sum of the earlier phases' counts and the current one's.
	phase string
	base  int // the earlier phases' counts
	done  int // the current phase's
	sent  float64
	any   bool // a notification was sent
	out   chan func()
}

// relayBuffer is how many notifications of one call may wait for its
// client.
const relayBuffer = 256

// send queues a notification of c's call, or drops it when the client has
// let relayBuffer of them wait.
func (c *sink) send(f func()) {
	select {
	case c.out <- f:
	default:
	}
}

// NewRelay returns a relay that also writes the engine's warnings and
// errors to stderr, as the engine does by default.
func NewRelay(stderr io.Writer) *Relay { return &Relay{stderr: stderr} }

// EngineOptions are the options that give the engine's log lines and
// progress reports to r.
func (r *Relay) EngineOptions() []runtime.Option {
	return []runtime.Option{runtime.WithLogger(r.log), runtime.WithProgress(r.progress)}
}

// begin makes who the caller until end, which returns drain: drain
// waits until the call's notifications are sent. end is called in the
// engine's turn, drain after it. A nil relay does nothing.
func (r *Relay) begin(ctx context.Context, who caller) (end func() (drain func())) {
	if r == nil || who.session == nil {
		return func() func() { return func() {} }
	}
	c := &sink{ctx: ctx, caller: who, out: make(chan func(), relayBuffer)}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for f := range c.out {
			f()
		}
	}()
	r.mu.Lock()
	r.cur = c
	r.mu.Unlock()
	return func() func() {
		r.mu.Lock()
		r.cur = nil
		close(c.out)
		r.mu.Unlock()
		return func() { <-sent }
	}
}

// withCall runs f with the running call's sink, if there is one, under
// the relay's lock: end cannot close the sink's queue under f.
func (r *Relay) withCall(f func(c *sink)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		f(r.cur)
	}
}

// mcpLevels maps the engine's levels (runtime.LevelDebug to LevelError)
// to MCP's.
var mcpLevels = [...]sdk.LoggingLevel{"debug", "info", "warning", "error"}

func (r *Relay) log(level int, msg string) {
	switch {
	case level == runtime.LevelWarn:
		fmt.Fprintf(r.stderr, "arbor: warn: %s\n", msg) // as the engine's default logger writes it
	case level >= runtime.LevelError:
		fmt.Fprintf(r.stderr, "arbor: error: %s\n", msg)
	}
	if level < 0 || level > runtime.LevelError {
		return
	}
	r.withCall(func(c *sink) {
		// Log drops what is below the session's level; a client that has
		// gone is no reason to fail the call.
		c.send(func() {
			_ = c.session.Log(c.ctx, &sdk.LoggingMessageParams{Level: mcpLevels[level], Logger: "arbor", Data: msg})
		})
	})
}

func (r *Relay) progress(p api.Progress) {
	msg := fmt.Sprintf("%s: %d", p.Phase, p.Done)
	if p.Total > 0 {
		msg += fmt.Sprintf(" of %d", p.Total)
	}
	r.advance(p.Phase, p.Done, msg)
}

// step reports a step of work the server does in a call around the
// engine's (a sync's fetch, its push) as one unit of progress of its own
// phase, so that the value keeps growing across the steps and the
// engine's phases between them. A nil relay does nothing.
func (r *Relay) step(phase, msg string) {
	if r != nil {
		r.advance(phase, 1, msg)
	}
}

// advance sends the progress of the running call, done in phase, when its
// caller asked for progress and the value grew.
func (r *Relay) advance(phase string, done int, msg string) {
	r.withCall(func(c *sink) {
		if c.token == nil {
			return
		}
		if phase != c.phase {
			c.base += c.done
			c.phase, c.done = phase, 0
		}
		c.done = max(c.done, done)
		value := float64(c.base + c.done)
		if c.any && value <= c.sent {
			return
		}
		c.sent, c.any = value, true
		params := &sdk.ProgressNotificationParams{ProgressToken: c.token, Progress: value, Message: msg}
		c.send(func() { _ = c.session.NotifyProgress(c.ctx, params) })
	})
}
