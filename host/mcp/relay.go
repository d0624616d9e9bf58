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
// Each call's reports go to its own caller (runtime.WithReports), so calls
// running at the same time on the engine's readers do not mix them. The
// engine's warnings and errors also go to stderr, in a call or outside
// one (EngineOptions).
//
// The notifications are sent by a goroutine of the call's own, not by the
// engine's: a client that stops reading its stream would otherwise stall
// the engine, and every other client with it. They queue up to
// relayBuffer; beyond it, while the client does not read, the engine's
// reports are dropped. The call is answered once they are all sent.
type Relay struct {
	stderr  io.Writer
	mu      sync.Mutex
	changes func(paths []string) // the server's announceLater
}

// sink is the caller of one running call.
type sink struct {
	ctx context.Context
	caller
	stderr io.Writer
	mu     sync.Mutex
	ended  bool
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

// sinkKey carries a call's sink in its context, for step.
type sinkKey struct{}

// relayBuffer is how many notifications of one call may wait for its
// client.
const relayBuffer = 256

// send queues a notification of c's call, or drops it when the client has
// let relayBuffer of them wait or the call has ended. Under c.mu.
func (c *sink) send(f func()) {
	if c.ended {
		return
	}
	select {
	case c.out <- f:
	default:
	}
}

// NewRelay returns a relay that also writes the engine's warnings and
// errors to stderr, as the engine does by default.
func NewRelay(stderr io.Writer) *Relay { return &Relay{stderr: stderr} }

// EngineOptions are the options that write the engine's warnings and
// errors outside any client's call to r's stderr, and give the server the
// files the engine's refreshes find changed on disk, to announce them to
// their subscribers.
func (r *Relay) EngineOptions() []runtime.Option {
	return []runtime.Option{
		runtime.WithLogger(func(level int, msg string) { warn(r.stderr, level, msg) }),
		runtime.WithChanges(func(paths []string) {
			r.mu.Lock()
			f := r.changes
			r.mu.Unlock()
			if f != nil {
				f(paths)
			}
		}),
	}
}

// announceWith gives r the server's announcement of changed files. A nil
// relay does nothing.
func (r *Relay) announceWith(f func(paths []string)) {
	if r != nil {
		r.mu.Lock()
		r.changes = f
		r.mu.Unlock()
	}
}

// warn writes a warning or an error as the engine's default logger does.
func warn(w io.Writer, level int, msg string) {
	switch {
	case level == runtime.LevelWarn:
		fmt.Fprintf(w, "arbor: warn: %s\n", msg)
	case level >= runtime.LevelError:
		fmt.Fprintf(w, "arbor: error: %s\n", msg)
	}
}

// begin makes who the receiver of the reports of the call made with the
// returned context, until end, which returns drain: drain waits until the
// call's notifications are sent. end is called in the engine's turn,
// drain after it. A nil relay, or a caller without a session, changes
// nothing.
func (r *Relay) begin(ctx context.Context, who caller) (context.Context, func() (drain func())) {
	if r == nil || who.session == nil {
		return ctx, func() func() { return func() {} }
	}
	c := &sink{ctx: ctx, caller: who, stderr: r.stderr, out: make(chan func(), relayBuffer)}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for f := range c.out {
			f()
		}
	}()
	ctx = context.WithValue(runtime.WithReports(ctx, c.log, c.progress), sinkKey{}, c)
	return ctx, func() func() {
		c.mu.Lock()
		c.ended = true
		close(c.out)
		c.mu.Unlock()
		return func() { <-sent }
	}
}

// mcpLevels maps the engine's levels (runtime.LevelDebug to LevelError)
// to MCP's.
var mcpLevels = [...]sdk.LoggingLevel{"debug", "info", "warning", "error"}

func (c *sink) log(level int, msg string) {
	warn(c.stderr, level, msg)
	if level < 0 || level > runtime.LevelError {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Log drops what is below the session's level; a client that has
	// gone is no reason to fail the call.
	c.send(func() {
		_ = c.session.Log(c.ctx, &sdk.LoggingMessageParams{Level: mcpLevels[level], Logger: "arbor", Data: msg})
	})
}

func (c *sink) progress(p api.Progress) {
	msg := fmt.Sprintf("%s: %d", p.Phase, p.Done)
	if p.Total > 0 {
		msg += fmt.Sprintf(" of %d", p.Total)
	}
	c.advance(p.Phase, p.Done, msg)
}

// step reports a step of work the server does in the call made with ctx
// around the engine's (a sync's fetch, its push) as one unit of progress
// of its own phase, so that the value keeps growing across the steps and
// the engine's phases between them. Without a caller to tell, it does
// nothing.
func step(ctx context.Context, phase, msg string) {
	if c, ok := ctx.Value(sinkKey{}).(*sink); ok {
		c.advance(phase, 1, msg)
	}
}

// advance sends the progress of the call, done in phase, when its caller
// asked for progress and the value grew.
func (c *sink) advance(phase string, done int, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == nil {
		return
	}
	// Another phase, or a new run of the same one (the engine starts each
	// at 0: tidy reads the tree once per pass), adds to what was done.
	if phase != c.phase || done < c.done {
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
}
