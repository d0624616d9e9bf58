package conformance

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/core/host"
)

// FuzzCall sends arbitrary requests, one per line of the input, to a
// session opened on the fixture's tree. Whatever the bytes, every response
// must be one JSON object holding the request's outcome, no request may
// reach an engine bug (the "internal" code, which is how Session.Call
// reports a panic), and a request answered with an error must leave the
// tree's files as they were (docs/ABI.md §3).
func FuzzCall(f *testing.F) {
	fx, err := LoadFixture("testdata/fixture.json")
	if err != nil {
		f.Fatal(err)
	}
	reqs := fx.Requests()
	for _, r := range reqs[1:] {
		f.Add(r)
	}
	// A few sequences, so that the fuzzer starts from stateful paths.
	f.Add(bytes.Join(reqs[1:4], []byte("\n")))
	f.Add([]byte(`{"id":1,"method":"curate","params":{"operations":[{"type":"DELETE","path":"engineering/billing/invoice_retry_policy.md","reason":"x"}]}}` + "\n" +
		`{"id":2,"method":"query","params":{"query":"invoice retry"}}`))
	f.Add([]byte(`{"id":1,"method":"read","params":{"path":"../etc/passwd"}}`))
	f.Add([]byte(`{"id":1,"method":"tree","params":{"path":"engineering","depth":-1}}`))

	start := opener(f, fx)
	f.Fuzz(func(t *testing.T, in []byte) {
		fs, s := start(t)
		for i, req := range bytes.SplitN(in, []byte("\n"), 4) {
			before := treeFiles(fs)
			resp := s.Call(req)
			var r struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(resp, &r); err != nil {
				t.Fatalf("request %d %q: response is not JSON: %v\n%s", i, req, err, resp)
			}
			if (r.Error == nil) == (r.Result == nil) {
				t.Fatalf("request %d %q: response must hold exactly one of result and error: %s", i, req, resp)
			}
			if r.Error == nil {
				continue
			}
			if r.Error.Code == api.CodeInternal || r.Error.Code == "" || r.Error.Message == "" {
				t.Fatalf("request %d %q: %s", i, req, resp)
			}
			if after := treeFiles(fs); !maps.EqualFunc(before, after, bytes.Equal) {
				t.Fatalf("request %d %q failed (%s) but changed the tree", i, req, resp)
			}
		}
	})
}

// opener opens the fixture's tree once and keeps the files the open wrote
// (the persisted index); the function it returns opens a session on a
// fresh copy of them, which opens without re-indexing.
func opener(f *testing.F, fx Fixture) func(*testing.T) (*host.MemFS, *engine.Session) {
	open := fx.Requests()[0]
	opened := func(tb testing.TB, fs *host.MemFS) *engine.Session {
		s := engine.NewSession(fs, nil)
		if resp := s.Call(open); bytes.Contains(resp, []byte(`"error"`)) {
			tb.Fatalf("open: %s", resp)
		}
		return s
	}
	base := memTree(f, fx.Tree)
	opened(f, base).Call([]byte(`{"id":0,"method":"close"}`))
	files := base.Files()
	return func(t *testing.T) (*host.MemFS, *engine.Session) {
		fs := host.NewMemFS()
		for p, b := range files {
			if err := fs.WriteFile(p, b); err != nil {
				t.Fatal(err)
			}
		}
		s := opened(t, fs)
		// An open session keeps its index's background goroutines, and
		// with them every copy of the tree: close each one.
		t.Cleanup(func() { s.Call([]byte(`{"id":0,"method":"close"}`)) })
		return fs, s
	}
}

// treeFiles is the tree's own files: everything but the engine's folder,
// which an error may still touch (an access count, an index segment).
func treeFiles(fs *host.MemFS) map[string][]byte {
	out := fs.Files()
	for p := range out {
		if strings.HasPrefix(p, ".arbor/") {
			delete(out, p)
		}
	}
	return out
}

// FuzzCurate builds well-formed curate calls from arbitrary strings, so
// that the fuzzer explores operations rather than JSON syntax: one
// operation on the fixture's tree, then a read of the path it reports and a
// query. A failed operation must leave the tree's files as they were, a
// successful one must leave the entry it wrote (or merged into) readable,
// the tree must reopen as the session held it, and nothing may reach an
// engine bug.
func FuzzCurate(f *testing.F) {
	f.Add(uint8(0), "engineering/billing", "Card Expiry", "Fourteen days before a card expires.", "", "card expiry")
	f.Add(uint8(1), "engineering/billing/invoice_retry_policy.md", "Invoice Retry", "Retried four times.", "", "invoice retry")
	f.Add(uint8(2), "personal/travel", "Lisbon Restaurants", "Try the bifana.", "", "bifana")
	f.Add(uint8(3), "engineering/billing/invoice_retry_policy.md", "", "", "engineering/billing/currency_rounding.md", "dunning")
	f.Add(uint8(4), "engineering/billing/invoice_retry_policy.md", "", "", "", "retry")
	f.Add(uint8(5), "engineering/billing/invoice_retry_policy.md", "", "", "operations/billing", "retry")
	f.Add(uint8(5), "engineering/auth", "", "", "engineering/security", "session")
	f.Add(uint8(5), "engineering", "", "", "engineering/billing", "retry")
	f.Add(uint8(0), "../outside", "x", "y", "", "x")
	f.Add(uint8(0), "a/b/c/d/e/f", "Deep", "Über café — 価値観 가치관이", "", "가치관")

	fx, err := LoadFixture("testdata/fixture.json")
	if err != nil {
		f.Fatal(err)
	}
	start := opener(f, fx)
	types := []string{"ADD", "UPDATE", "UPSERT", "MERGE", "DELETE", "MOVE"}

	f.Fuzz(func(t *testing.T, kind uint8, p, title, text, target, query string) {
		fs, s := start(t)
		op := map[string]any{"type": types[int(kind)%len(types)], "path": p, "reason": "fuzz"}
		if title != "" {
			op["title"] = title
		}
		if text != "" {
			op["content"] = map[string]any{"narrative": map[string]any{"text": text}}
		}
		if target != "" && op["type"] == "MOVE" {
			op["to"] = target
		} else if target != "" {
			op["mergeTarget"] = target
		}
		before := treeFiles(fs)
		var cur struct {
			Applied []struct {
				Type, Path, Status, Message, To string
			}
		}
		call(t, s, "curate", map[string]any{"operations": []any{op}}, &cur)
		if len(cur.Applied) != 1 {
			t.Fatalf("curate %v: %d outcomes", op, len(cur.Applied))
		}
		a := cur.Applied[0]
		if a.Status != "success" {
			if a.Message == "" {
				t.Errorf("curate %v failed without a message", op)
			}
			if after := treeFiles(fs); !maps.EqualFunc(before, after, bytes.Equal) {
				t.Fatalf("curate %v failed (%s) but changed the tree", op, a.Message)
			}
		} else if kept := keptPath(a.Type, a.Path, target, a.To); kept != "" {
			var read struct{ Path string }
			call(t, s, "read", map[string]any{"path": kept}, &read)
			if read.Path != kept {
				t.Errorf("curate %v: read %q gave %q", op, kept, read.Path)
			}
		}
		call(t, s, "query", map[string]any{"query": query}, nil)

		// What the operation wrote must read back as the session held it.
		var live, reread api.StatsResult
		call(t, s, "stats", nil, &live)
		call(t, s, "close", nil, nil)
		s = engine.NewSession(fs, nil)
		defer s.Call([]byte(`{"id":0,"method":"close"}`))
		call(t, s, "open", json.RawMessage(fx.Open), nil)
		call(t, s, "stats", nil, &reread)
		if live.Entries != reread.Entries || live.Contexts != reread.Contexts || live.Relations != reread.Relations || len(live.Warnings) != len(reread.Warnings) {
			t.Fatalf("curate %v: the tree reopens as %d entries, %d contexts, %d relations, warnings %v; the session held %d, %d, %d, %v",
				op, reread.Entries, reread.Contexts, reread.Relations, reread.Warnings, live.Entries, live.Contexts, live.Relations, live.Warnings)
		}
	})
}

// keptPath is the entry a successful operation leaves to read: a MERGE
// folds its path into the target, a MOVE of an entry puts it at to, a
// DELETE (or a MOVE of a folder) leaves none.
func keptPath(typ, p, target, to string) string {
	switch typ {
	case "DELETE":
		return ""
	case "MERGE":
		return target
	case "MOVE":
		if strings.HasSuffix(to, ".md") {
			return to
		}
		return ""
	}
	return p
}

// call sends one well-formed request, fails the test on an error response
// other than a user error, and decodes the result into out.
func call(t *testing.T, s *engine.Session, method string, params, out any) {
	t.Helper()
	req, err := json.Marshal(map[string]any{"id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct{ Code, Message string }
	}
	resp := s.Call(req)
	if err := json.Unmarshal(resp, &r); err != nil {
		t.Fatalf("%s: response is not JSON: %v", req, err)
	}
	if r.Error != nil {
		if r.Error.Code == api.CodeInternal || r.Error.Message == "" {
			t.Fatalf("%s: %s", req, resp)
		}
		return
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			t.Fatalf("%s: result %s: %v", req, r.Result, err)
		}
	}
}
