package mcp

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// Jobs run one at a time in order; one cancelled before its turn never
// runs, and one cancelled while it runs is waited for and reported as run.
func TestQueue(t *testing.T) {
	q := newQueue(1)
	served := make(chan struct{})
	go func() { q.serve(); close(served) }()

	var order []int
	first := make(chan struct{})
	release := make(chan struct{})
	ctx1, cancel1 := context.WithCancel(context.Background())
	res1 := make(chan error)
	go func() {
		res1 <- q.do(ctx1, true, false, func(context.Context) {
			close(first)
			<-release
			order = append(order, 1)
		})
	}()
	<-first // job 1 runs and holds the queue

	ctx2, cancel2 := context.WithCancel(context.Background())
	res2 := make(chan error)
	go func() { res2 <- q.do(ctx2, true, false, func(context.Context) { order = append(order, 2) }) }()
	waitQueued(q, 1)
	res3 := make(chan error)
	go func() {
		res3 <- q.do(context.Background(), true, false, func(context.Context) { order = append(order, 3) })
	}()
	waitQueued(q, 2)

	cancel2() // before its turn: skipped
	if err := <-res2; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled queued job: %v", err)
	}
	cancel1() // while it runs: waited for
	close(release)
	if err := <-res1; err != nil {
		t.Errorf("cancelled running job: %v", err)
	}
	if err := <-res3; err != nil {
		t.Error(err)
	}
	q.close()
	<-served
	if len(order) != 2 || order[0] != 1 || order[1] != 3 {
		t.Errorf("ran %v, want [1 3]", order)
	}
	if err := q.do(context.Background(), false, false, func(context.Context) { t.Error("ran after close") }); !errors.Is(err, errStopped) {
		t.Errorf("after close: %v", err)
	}
}

// waitQueued waits until n jobs wait in q.
func waitQueued(q *queue, n int) {
	for {
		q.mu.Lock()
		l := len(q.jobs)
		q.mu.Unlock()
		if l >= n {
			return
		}
		runtime.Gosched()
	}
}
