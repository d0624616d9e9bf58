package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// Reads start together up to the number of readers; a write starts once
// the calls before it have ended, and the reads after it once it has.
func TestQueueReadsTogetherWritesAlone(t *testing.T) {
	q := newQueue(2)
	served := make(chan struct{})
	go func() { q.serve(); close(served) }()
	var mu sync.Mutex
	var events []string
	note := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	started := make(chan string, 4)
	release := map[string]chan struct{}{"r1": make(chan struct{}), "r2": make(chan struct{}), "w3": make(chan struct{}), "r4": make(chan struct{})}
	job := func(name string) func(context.Context) {
		return func(context.Context) {
			note(name + " starts")
			started <- name
			<-release[name]
			note(name + " ends")
		}
	}
	results := make(chan error, 4)
	go func() { results <- q.do(context.Background(), true, true, job("r1")) }()
	go func() { results <- q.do(context.Background(), true, true, job("r2")) }()
	// Two reads run at once.
	got := map[string]bool{<-started: true, <-started: true}
	if !got["r1"] || !got["r2"] {
		t.Fatalf("started %v, want r1 and r2 together", got)
	}
	go func() { results <- q.do(context.Background(), true, false, job("w3")) }()
	waitQueued(q, 1)
	go func() { results <- q.do(context.Background(), true, true, job("r4")) }()
	waitQueued(q, 2)
	close(release["r1"])
	close(release["r2"])
	if s := <-started; s != "w3" {
		t.Fatalf("%s started after the reads, want the write", s)
	}
	close(release["w3"])
	if s := <-started; s != "r4" {
		t.Fatalf("%s started after the write, want r4", s)
	}
	close(release["r4"])
	for range 4 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	q.close()
	<-served
	mu.Lock()
	defer mu.Unlock()
	w3 := strings.Join(events, ", ")
	for _, before := range []string{"r1 ends", "r2 ends"} {
		if strings.Index(w3, before) > strings.Index(w3, "w3 starts") {
			t.Fatalf("events %s: the write started before %s", w3, before)
		}
	}
	if strings.Index(w3, "w3 ends") > strings.Index(w3, "r4 starts") {
		t.Fatalf("events %s: r4 started before the write ended", w3)
	}
	if q.mostReads != 2 {
		t.Fatalf("most reads at once %d, want 2", q.mostReads)
	}
}

// Two agents on one server with readers: every write of one is in the
// very next read of the other, whichever reader answers it, every time.
func TestHTTPReadersSeeEveryWrite(t *testing.T) {
	const readers = 3
	url := serveHTTPReaders(t, t.TempDir(), HTTPOptions{Token: testToken}, readers, nil, runtime.WithWatch(0))
	a := connectHTTP(t, url, nil)
	b := connectHTTP(t, url, nil)
	for i := range 15 {
		word := fmt.Sprintf("okapi%dmarker", i)
		res := call(t, a, ToolCurate, map[string]any{"operations": []map[string]any{{
			"type": "UPSERT", "path": "notes/shared", "title": "Shared note", "content": map[string]any{"narrative": "Today's word is " + word + "."}, "reason": "test"}}})
		if res.IsError {
			t.Fatalf("curate %d: %+v", i, res.Content)
		}
		// As many reads as readers: each reader answers one.
		for k := range readers {
			var found api.SearchResult
			decode(t, call(t, b, ToolSearch, map[string]any{"query": word}), &found)
			if len(found.Results) == 0 || found.Results[0].Path != "notes/shared/shared_note.md" {
				t.Fatalf("write %d, read %d: b does not find a's write: %+v", i, k+1, found)
			}
		}
		var read api.ReadResult
		decode(t, call(t, b, ToolRead, map[string]any{"path": "notes/shared/shared_note.md"}), &read)
		if !strings.Contains(read.Markdown, word) {
			t.Fatalf("write %d: b reads the old entry:\n%s", i, read.Markdown)
		}
	}
}

// Reads of several agents run at the same time: each read's turn is held
// until as many reads as readers are in theirs, which one engine call at a
// time could never reach.
func TestHTTPReadsOverlap(t *testing.T) {
	const readers = 3
	var mu sync.Mutex
	inside, most := 0, 0
	all := make(chan struct{})
	// Once they all were in, hold lets every read pass.
	hold := func() {
		mu.Lock()
		inside++
		most = max(most, inside)
		if inside == readers {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(time.Minute): // they do not overlap: the test fails below
		}
	}
	url := serveHTTPReaders(t, t.TempDir(), HTTPOptions{Token: testToken}, readers, func(s *Server) { s.readHook = hold })
	var wg sync.WaitGroup
	for i := range readers {
		cs := connectHTTP(t, url, nil)
		wg.Go(func() {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolSearch, Arguments: map[string]any{"query": fmt.Sprintf("anything %d", i)}})
			if err != nil || res.IsError {
				t.Errorf("search %d: %v %+v", i, err, res)
			}
		})
	}
	wg.Wait()
	if most != readers {
		t.Fatalf("%d reads in their turn at once at most, want %d", most, readers)
	}
}
