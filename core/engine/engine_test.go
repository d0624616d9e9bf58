package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

const billingEntry = `---
title: Invoice Retry Policy
summary: failed invoices are retried three times, then escalated
tags: [billing]
keywords: [invoice, retry]
createdAt: 2026-01-10T09:00:00Z
updatedAt: 2026-01-12T09:00:00Z
---

## Narrative
### Rules
Failed invoices are retried three times at 24 hour intervals, then escalated to the billing lead.
`

const linkingEntry = `---
title: Dunning Emails
related: [engineering/billing/invoice_retry_policy.md]
---

## Narrative
Dunning emails go out after each failed retry.
`

func newSession(t *testing.T, files map[string]string) (*Session, *host.MemFS) {
	t.Helper()
	fs := host.NewMemFS()
	for p, c := range files {
		if err := fs.WriteFile(p, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	return NewSession(fs, nil), fs
}

// call sends one request and returns the decoded result or error object.
func call(t *testing.T, s *Session, method string, params any) (map[string]any, map[string]any) {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"id": 1, "method": method, "params": params})
	var resp struct {
		ID     any            `json:"id"`
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.Unmarshal(s.Call(req), &resp); err != nil {
		t.Fatalf("%s: response is not JSON: %v", method, err)
	}
	return resp.Result, resp.Error
}

func mustOpen(t *testing.T, s *Session) map[string]any {
	t.Helper()
	res, errObj := call(t, s, "open", map[string]any{"fixedTime": "2026-03-01T00:00:00Z"})
	if errObj != nil {
		t.Fatalf("open: %v", errObj)
	}
	return res
}

func TestProtocolErrors(t *testing.T) {
	s, _ := newSession(t, nil)
	cases := []struct {
		name, req, code string
	}{
		{"not json", `{"id":1,`, api.CodeInvalidJSON},
		{"not an object", `[1,2]`, api.CodeInvalidJSON},
		{"invalid utf-8", "{\"id\":1,\"method\":\"\xff\"}", api.CodeInvalidJSON},
		{"unknown method", `{"id":1,"method":"explode"}`, api.CodeUnknownMethod},
		{"before open", `{"id":1,"method":"search","params":{"query":"x"}}`, api.CodeNotOpen},
		{"bad open params", `{"id":1,"method":"open","params":{"fixedTime":"yesterday"}}`, api.CodeInvalidParams},
		{"wrong param type", `{"id":1,"method":"open","params":{"maxFileBytes":"big"}}`, api.CodeInvalidParams},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var resp struct {
				Error *api.Error `json:"error"`
			}
			if err := json.Unmarshal(s.Call([]byte(c.req)), &resp); err != nil {
				t.Fatal(err)
			}
			if resp.Error == nil || resp.Error.Code != c.code {
				t.Fatalf("error = %+v, want code %s", resp.Error, c.code)
			}
			if resp.Error.Message == "" {
				t.Fatal("error without a message")
			}
		})
	}
}

func TestOpenReportsBrokenFilesAndKeepsThem(t *testing.T) {
	broken := "---\ntitle: [unclosed\n---\nbody\n"
	s, fs := newSession(t, map[string]string{
		"engineering/billing/invoice_retry_policy.md": billingEntry,
		"engineering/billing/broken.md":               broken,
		"engineering/billing/latin1.md":               "caf\xe9",
		".obsidian/workspace.md":                      "# not knowledge",
	})
	res := mustOpen(t, s)
	if res["entries"].(float64) != 1 {
		t.Fatalf("entries = %v, want 1", res["entries"])
	}
	warnings := res["warnings"].([]any)
	if len(warnings) != 2 {
		t.Fatalf("warnings = %v, want the two bad files", warnings)
	}
	for _, w := range warnings {
		p := w.(map[string]any)["path"].(string)
		if p != "engineering/billing/broken.md" && p != "engineering/billing/latin1.md" {
			t.Fatalf("unexpected warning for %s", p)
		}
	}
	// ADD over the broken file is refused and the file is untouched.
	cur, _ := call(t, s, "curate", map[string]any{"operations": []any{map[string]any{
		"type": "ADD", "path": "engineering/billing/broken.md", "title": "Broken", "reason": "test"}}})
	if cur["summary"].(map[string]any)["failed"].(float64) != 1 {
		t.Fatalf("ADD over a broken file: %v", cur)
	}
	if b, _ := fs.ReadFile("engineering/billing/broken.md"); string(b) != broken {
		t.Fatal("broken file was rewritten")
	}
	_, errObj := call(t, s, "read", map[string]any{"path": "engineering/billing/broken.md"})
	if errObj == nil || errObj["code"] != api.CodeMalformed || !strings.Contains(errObj["message"].(string), "cannot be parsed") {
		t.Fatalf("read broken: %v", errObj)
	}
	_, errObj = call(t, s, "read", map[string]any{"path": "engineering/billing"})
	if errObj == nil || errObj["code"] != api.CodeNotFound || !strings.Contains(errObj["message"].(string), "is a folder") {
		t.Fatalf("read a folder: %v", errObj)
	}
}

func TestQueryTiers(t *testing.T) {
	s, _ := newSession(t, map[string]string{
		"engineering/billing/invoice_retry_policy.md": billingEntry,
		"engineering/billing/dunning_emails.md":       linkingEntry,
	})
	mustOpen(t, s)
	first, errObj := call(t, s, "query", map[string]any{"query": "invoice retry policy"})
	if errObj != nil {
		t.Fatal(errObj)
	}
	if first["tier"].(float64) != api.TierDirect || first["tierName"] != "direct" {
		t.Fatalf("first query: tier %v %v (%v)", first["tier"], first["tierName"], first["reason"])
	}
	top := first["results"].([]any)[0].(map[string]any)
	if top["path"] != "engineering/billing/invoice_retry_policy.md" {
		t.Fatalf("top result %v", top["path"])
	}
	again, _ := call(t, s, "query", map[string]any{"query": "  Invoice RETRY policy? "})
	if again["tier"].(float64) != api.TierExactCache {
		t.Fatalf("repeat query: tier %v, want the exact cache", again["tier"])
	}
	// Any write invalidates the cache.
	call(t, s, "curate", map[string]any{"operations": []any{map[string]any{
		"type": "ADD", "path": "engineering/billing", "title": "Card Updates", "reason": "test",
		"content": map[string]any{"narrative": "Customers update cards in the portal."}}}})
	after, _ := call(t, s, "query", map[string]any{"query": "invoice retry policy"})
	if after["tier"].(float64) == api.TierExactCache {
		t.Fatal("cache served an answer from before a write")
	}
	ood, _ := call(t, s, "query", map[string]any{"query": "capital of Peru"})
	if ood["outOfDomain"] != true {
		t.Fatalf("unrelated query: %v", ood)
	}
	// A significant word found nowhere, with only a weak match for the rest.
	tangent, _ := call(t, s, "query", map[string]any{"query": "penguin colonies go out"})
	if tangent["outOfDomain"] != true || !strings.Contains(tangent["reason"].(string), "[penguin coloni] occur in no entry") {
		t.Fatalf("query with an unknown significant term: %v", tangent)
	}
	_, errObj = call(t, s, "query", map[string]any{"query": "?!"})
	if errObj == nil || errObj["code"] != api.CodeInvalidParams {
		t.Fatalf("query without words: %v", errObj)
	}
	_, errObj = call(t, s, "search", map[string]any{"query": "x", "limit": 1000})
	if errObj == nil || errObj["code"] != api.CodeInvalidParams {
		t.Fatalf("limit 1000: %v", errObj)
	}
	// A query is at most api.MaxQueryBytes: longer ones are refused, not cut.
	long := strings.Repeat("invoice retry policy ", api.MaxQueryBytes/21-1) + "retries"
	long += strings.Repeat(" ", api.MaxQueryBytes-len(long))
	for _, method := range []string{"search", "query"} {
		if r, errObj := call(t, s, method, map[string]any{"query": long}); errObj != nil || len(r["results"].([]any)) == 0 {
			t.Errorf("%s of %d bytes: %v %v", method, len(long), r, errObj)
		}
		_, errObj = call(t, s, method, map[string]any{"query": long + "x"})
		if errObj == nil || errObj["code"] != api.CodeInvalidParams || errObj["message"] != "query is 4097 bytes, over the 4096-byte limit: ask with fewer words" {
			t.Errorf("%s of %d bytes: %v", method, len(long)+1, errObj)
		}
	}
}

func TestReadTreeStats(t *testing.T) {
	s, _ := newSession(t, map[string]string{
		"engineering/billing/invoice_retry_policy.md": billingEntry,
		"engineering/billing/dunning_emails.md":       linkingEntry,
		"engineering/context.md":                      "# Engineering\n",
	})
	mustOpen(t, s)
	r, errObj := call(t, s, "read", map[string]any{"path": "engineering/billing/invoice_retry_policy.md"})
	if errObj != nil {
		t.Fatal(errObj)
	}
	if bl := r["backlinks"].([]any); len(bl) != 1 || bl[0] != "engineering/billing/dunning_emails.md" {
		t.Fatalf("backlinks = %v", bl)
	}
	if r["createdAt"] != "2026-01-10T09:00:00Z" {
		t.Fatalf("createdAt = %v", r["createdAt"])
	}
	_, errObj = call(t, s, "read", map[string]any{"path": "../etc/passwd"})
	if errObj == nil || errObj["code"] != api.CodeInvalidPath {
		t.Fatalf("traversal: %v", errObj)
	}
	_, errObj = call(t, s, "read", map[string]any{"path": "engineering/nope.md"})
	if errObj == nil || errObj["code"] != api.CodeNotFound {
		t.Fatalf("missing: %v", errObj)
	}
	tr, _ := call(t, s, "tree", map[string]any{})
	eng := tr["children"].([]any)[0].(map[string]any)
	if eng["name"] != "engineering" || eng["kind"] != "domain" || eng["title"] != "Engineering" {
		t.Fatalf("tree: %v", eng)
	}
	billing := eng["children"].([]any)[0].(map[string]any)
	if billing["kind"] != "topic" || len(billing["children"].([]any)) != 2 {
		t.Fatalf("tree topic: %v", billing)
	}
	shallow, _ := call(t, s, "tree", map[string]any{"depth": 1})
	if _, has := shallow["children"].([]any)[0].(map[string]any)["children"]; has {
		t.Fatal("depth 1 kept grandchildren")
	}
	st, _ := call(t, s, "stats", nil)
	if st["entries"].(float64) != 2 || st["relations"].(float64) != 1 || st["domains"].(map[string]any)["engineering"].(float64) != 2 {
		t.Fatalf("stats: %v", st)
	}
	if _, errObj := call(t, s, "close", nil); errObj != nil {
		t.Fatal(errObj)
	}
	if _, errObj := call(t, s, "stats", nil); errObj == nil || errObj["code"] != api.CodeNotOpen {
		t.Fatalf("after close: %v", errObj)
	}
}

// One curate call is indexed as one batch; the last change of a path wins.
func TestCurateIndexesTheBatch(t *testing.T) {
	s, _ := newSession(t, map[string]string{"engineering/billing/invoice_retry_policy.md": billingEntry})
	mustOpen(t, s)
	op := func(typ, path, title, narrative string) map[string]any {
		return map[string]any{"type": typ, "path": path, "title": title, "reason": "test",
			"content": map[string]any{"narrative": narrative}}
	}
	res, _ := call(t, s, "curate", map[string]any{"operations": []any{
		op("ADD", "ops/pager", "Pager Rotation", "The pager rotates weekly on Mondays."),
		op("ADD", "ops/kiosk", "Kiosk Reboot", "The lobby kiosk reboots nightly."),
		op("UPSERT", "ops/pager", "Pager Rotation", "Escalation goes to the secondary after ten minutes."),
		map[string]any{"type": "DELETE", "path": "ops/kiosk/kiosk_reboot.md", "reason": "test"},
		map[string]any{"type": "DELETE", "path": "engineering/billing/invoice_retry_policy.md", "reason": "test"},
	}})
	if res["summary"].(map[string]any)["failed"].(float64) != 0 {
		t.Fatalf("curate: %v", res)
	}
	count := func(q string) int {
		r, errObj := call(t, s, "search", map[string]any{"query": q})
		if errObj != nil {
			t.Fatal(errObj)
		}
		n := 0
		for _, h := range r["results"].([]any) {
			if h.(map[string]any)["kind"] == "entry" {
				n++
			}
		}
		return n
	}
	for q, want := range map[string]int{"pager weekly": 1, "secondary escalation": 1, "kiosk": 0, "invoices": 0} {
		if got := count(q); got != want {
			t.Errorf("search %q: %d results, want %d", q, got, want)
		}
	}
}
