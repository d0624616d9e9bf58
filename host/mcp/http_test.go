package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

const testToken = "s3cret-token"

// serveHTTP opens an engine on root and serves it over HTTP on a free
// loopback port; it returns the endpoint's URL. The end of the test stops
// the server and checks that Serve ended cleanly.
func serveHTTP(t *testing.T, root string, o HTTPOptions, engineOpts ...runtime.Option) string {
	t.Helper()
	return serveHTTPReaders(t, root, o, 0, nil, engineOpts...)
}

// serveHTTPReaders is serveHTTP with an engine of readers readers (none
// below 2), whose server setup may change before it serves.
func serveHTTPReaders(t *testing.T, root string, o HTTPOptions, readers int, setup func(*Server), engineOpts ...runtime.Option) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	relay := NewRelay(io.Discard)
	eng, err := runtime.New(ctx, root, append(append([]runtime.Option{runtime.WithCacheDir("")}, relay.EngineOptions()...), engineOpts...)...)
	if errors.Is(err, runtime.ErrNoModule) {
		t.Skip("host/runtime/arbor.wasm is the empty placeholder: run ./build.sh wasm")
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Open(ctx, api.OpenParams{}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if readers > 1 {
		if err := eng.AddReaders(ctx, readers); err != nil {
			t.Fatal(err)
		}
	}
	srv := New(eng, WithRelay(relay))
	if setup != nil {
		setup(srv)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		eng.Close(context.Background())
	})
	return "http://" + ln.Addr().String() + Endpoint
}

// bearer adds a token to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP connects an SDK client to url with the test token.
func connectHTTP(t *testing.T, url string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer(testToken)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// post sends one initialize request with the given headers and returns the
// status and body.
func post(t *testing.T, url string, header http.Header, body string) (int, string) {
	t.Helper()
	if body == "" {
		body = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	if h := header.Get("Host"); h != "" {
		req.Host = h
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Requests without the token, or with another, are refused with 401 and a
// message that says what to send; the token lets them in.
func TestHTTPToken(t *testing.T) {
	url := serveHTTP(t, t.TempDir(), HTTPOptions{Token: testToken, TokenHint: "the token is in .arbor/mcp-token"})
	for _, c := range []struct {
		name, auth string
		status     int
		says       string
	}{
		{"no token", "", 401, "needs the header Authorization: Bearer <token>; the token is in .arbor/mcp-token"},
		{"another token", "Bearer nope", 401, "not this Arbor server's"},
		{"not bearer", "Basic " + testToken, 401, "needs the header"},
		{"the token", "Bearer " + testToken, 200, `"serverInfo"`},
	} {
		h := http.Header{}
		if c.auth != "" {
			h.Set("Authorization", c.auth)
		}
		status, body := post(t, url, h, "")
		if status != c.status || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.name, status, body, c.status, c.says)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("WWW-Authenticate"); got != `Bearer realm="arbor"` {
		t.Errorf("WWW-Authenticate %q", got)
	}
}

// DNS rebinding and cross-site requests: a Host that is a name other than
// localhost or an allowed one, and a browser Origin that is neither
// loopback nor allowed, are refused with 403 before the token is even
// looked at.
func TestHTTPHostAndOrigin(t *testing.T) {
	url := serveHTTP(t, t.TempDir(), HTTPOptions{Token: testToken,
		AllowedOrigins: []string{"https://app.example.com"}, AllowedHosts: []string{"memory.lan"}})
	port := url[strings.LastIndex(url, ":")+1 : strings.LastIndex(url, "/")]
	for _, c := range []struct {
		name, host, origin string
		status             int
	}{
		{"rebound name", "evil.example.com:" + port, "", 403},
		{"rebound name, no port", "evil.example.com", "", 403},
		{"foreign origin", "", "http://evil.example.com", 403},
		{"null origin", "", "null", 403},
		{"origin on another scheme", "", "file:///tmp/x.html", 403},
		{"localhost", "localhost:" + port, "", 200},
		{"IPv6 loopback", "[::1]:" + port, "", 200},
		{"loopback origin", "", "http://localhost:5173", 200},
		{"allowed origin", "", "https://app.example.com", 200},
		{"allowed host", "memory.lan:" + port, "", 200},
	} {
		h := http.Header{"Authorization": {"Bearer " + testToken}}
		if c.host != "" {
			h.Set("Host", c.host)
		}
		if c.origin != "" {
			h.Set("Origin", c.origin)
		}
		status, body := post(t, url, h, "")
		if status != c.status {
			t.Errorf("%s: %d %q, want %d", c.name, status, body, c.status)
		}
		if status == 403 && !strings.Contains(body, "Forbidden: ") {
			t.Errorf("%s: 403 without saying why: %q", c.name, body)
		}
	}
	// Even without a token the refusal is 403: the check comes first.
	if status, _ := post(t, url, http.Header{"Origin": {"http://evil.example.com"}}, ""); status != 403 {
		t.Errorf("foreign origin without token: %d, want 403", status)
	}
}

// A body larger than the limit is refused with 413; one within it passes.
func TestHTTPBodyLimit(t *testing.T) {
	url := serveHTTP(t, t.TempDir(), HTTPOptions{Token: testToken, MaxBodyBytes: 64 << 10})
	h := http.Header{"Authorization": {"Bearer " + testToken}}
	pad := func(n int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` +
			strings.Repeat("x", n) + `","version":"1"}}}`
	}
	if status, body := post(t, url, h, pad(100<<10)); status != http.StatusRequestEntityTooLarge {
		t.Errorf("100 KiB body: %d %q, want 413", status, body)
	}
	if status, body := post(t, url, h, pad(30<<10)); status != 200 {
		t.Errorf("30 KiB body: %d %q, want 200", status, body)
	}
}

// addrListener is a listener that says it listens on addr.
type addrListener struct {
	net.Listener
	addr net.Addr
}

func (l addrListener) Addr() net.Addr { return l.addr }

// Serving without a token is refused off loopback, before anything is
// served.
func TestServeWithoutTokenOnlyOnLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := &Server{}
	public := addrListener{ln, &net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 80}}
	err = s.Serve(context.Background(), public, HTTPOptions{})
	if err == nil || !strings.Contains(err.Error(), "only a loopback address may go without one") {
		t.Fatalf("Serve without token on 192.0.2.10: %v", err)
	}
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "[::1]:1": true, "localhost:1": true, "127.8.0.1:1": true,
		"0.0.0.0:1": false, "[::]:1": false, "192.0.2.10:1": false, "example.com:1": false} {
		if IsLoopback(addr) != want {
			t.Errorf("IsLoopback(%s) = %v", addr, !want)
		}
	}
}

// Two clients of one server: each sees the other's writes at once, and a
// client subscribed to an entry hears of a change made by the other or by
// a person's editor, and of nothing once it has unsubscribed.
func TestHTTPClientsShareOneMemory(t *testing.T) {
	root := t.TempDir()
	url := serveHTTP(t, root, HTTPOptions{Token: testToken}, runtime.WithWatch(0))
	updated := make(chan string, 16)
	a := connectHTTP(t, url, nil)
	b := connectHTTP(t, url, &sdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
		updated <- r.Params.URI
	}})
	const entry = "engineering/billing/invoice_retry_policy.md"
	const personal = "engineering/billing/notes_from_the_sync.md"
	uri, personalURI := EntryURI(entry), EntryURI(personal)
	for _, u := range []string{uri, personalURI} {
		if err := b.Subscribe(context.Background(), &sdk.SubscribeParams{URI: u}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(what, want string) {
		t.Helper()
		for {
			select {
			case got := <-updated:
				if got == want {
					return
				}
				// Another subscribed entry, announced again by the watch.
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: no notifications/resources/updated for %s", what, want)
			}
		}
	}

	// A person writes a note in an editor: only the server's watch of the
	// root can tell b, and a reads it at once.
	file := filepath.Join(root, filepath.FromSlash(personal))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	note := "---\ntitle: Notes from the sync\n---\n\nFinance reviews failed invoices weekly.\n"
	// Saved whole, as most editors save (a temporary file renamed): a
	// file written in place may be read, and announced, while it is
	// still empty, and a would rightly read it so.
	tmp := filepath.Join(t.TempDir(), "note.md")
	if err := os.WriteFile(tmp, []byte(note), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	waitFor("a person's new note", personalURI)
	var read api.ReadResult
	decode(t, call(t, a, ToolRead, map[string]any{"path": personal}), &read)
	if !strings.Contains(read.Markdown, "reviews failed invoices weekly") {
		t.Fatalf("a does not see the person's note:\n%s", read.Markdown)
	}

	// a curates: b is told and reads the write at once.
	res := call(t, a, ToolCurate, map[string]any{"operations": []map[string]any{{
		"type": "UPSERT", "path": "engineering/billing", "title": "Invoice retry policy",
		"summary": "four retries", "content": map[string]any{"narrative": "Failed invoices are retried four times."}, "reason": "test"}}})
	if res.IsError {
		t.Fatalf("curate: %+v", res.Content)
	}
	waitFor("curate by the other client", uri)
	decode(t, call(t, b, ToolRead, map[string]any{"path": entry}), &read)
	if !strings.Contains(read.Markdown, "retried four times") {
		t.Fatalf("b does not see a's write:\n%s", read.Markdown)
	}
	rr, err := b.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "retried four times") || rr.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("resources/read: %v %+v", err, rr)
	}

	// After an unsubscribe nothing more comes for the entry. Notifications
	// reach b on one stream in the order they were sent, so a change to
	// another subscribed entry (the sentinel) marks a point in that order:
	// what came before the first sentinel may have been sent before the
	// unsubscribe; between the two sentinels, around the delete, nothing
	// may come for the entry.
	// Each sentinel is its own entry: one may be announced twice.
	sentinel := func(n int) string { return EntryURI(fmt.Sprintf("engineering/billing/sentinel_%d.md", n)) }
	for n := 1; n <= 2; n++ {
		if err := b.Subscribe(context.Background(), &sdk.SubscribeParams{URI: sentinel(n)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Unsubscribe(context.Background(), &sdk.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	mark := func(n int) []string {
		t.Helper()
		res := call(t, a, ToolCurate, map[string]any{"operations": []map[string]any{{"type": "ADD", "path": "engineering/billing", "title": fmt.Sprintf("Sentinel %d", n),
			"content": map[string]any{"narrative": "a mark"}, "reason": "test"}}})
		if res.IsError {
			t.Fatalf("sentinel: %+v", res.Content)
		}
		var before []string
		for {
			select {
			case got := <-updated:
				switch got {
				case sentinel(n):
					return before
				case sentinel(1), sentinel(2):
					continue
				}
				before = append(before, got)
			case <-time.After(30 * time.Second):
				t.Fatal("no notification for the sentinel")
			}
		}
	}
	mark(1)
	res = call(t, a, ToolCurate, map[string]any{"operations": []map[string]any{{"type": "DELETE", "path": entry, "reason": "test"}}})
	if res.IsError {
		t.Fatalf("delete: %+v", res.Content)
	}
	if got := mark(2); len(got) > 0 {
		t.Errorf("notified of %v after unsubscribing", got)
	}
	list, err := b.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Resources {
		if r.URI == uri {
			t.Errorf("deleted entry still listed")
		}
	}
}

// Many clients at once: every call is answered, and each client reads
// what it wrote.
func TestHTTPConcurrentClients(t *testing.T) {
	url := serveHTTP(t, t.TempDir(), HTTPOptions{Token: testToken})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := connectHTTP(t, url, nil)
			title := fmt.Sprintf("Note number %d", i)
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolCurate, Arguments: map[string]any{"operations": []map[string]any{{
				"type": "ADD", "path": "notes/concurrent", "title": title, "content": map[string]any{"narrative": fmt.Sprintf("marker%d", i)}, "reason": "test"}}}})
			if err != nil || res.IsError {
				errs <- fmt.Errorf("client %d curate: %v %+v", i, err, res)
				return
			}
			res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolSearch, Arguments: map[string]any{"query": fmt.Sprintf("marker%d", i)}})
			if err != nil || res.IsError {
				errs <- fmt.Errorf("client %d search: %v %+v", i, err, res)
				return
			}
			if !strings.Contains(res.Content[0].(*sdk.TextContent).Text, fmt.Sprintf("note_number_%d.md", i)) {
				errs <- fmt.Errorf("client %d does not find its entry: %s", i, res.Content[0].(*sdk.TextContent).Text)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
