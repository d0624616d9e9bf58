package engine_test

import (
	"fmt"
	"log"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/core/host"
)

// Open a memory natively, curate an entry and ask about it. Here the
// memory root is a folder in memory; a host passes its own host.FS (the Go
// host's is host/arborhost.RootFS, one folder on disk).
func ExampleOpen() {
	eng, opened, err := engine.Open(engine.Options{
		FS:    host.NewMemFS(),
		Clock: host.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	fmt.Println("opened", opened.Entries, "entries")

	res := eng.Curate(api.CurateParams{Operations: []api.Operation{{
		Type:  api.OpAdd,
		Path:  "engineering/billing",
		Title: "Invoice retry policy",
		Content: api.Content{
			Narrative: &api.Narrative{Text: "Failed invoices are retried three times, then escalated to support."},
			Tags:      []string{"billing"},
		},
		Reason: "agreed in the billing sync",
	}}})
	fmt.Println(res.Applied[0].Status, res.Applied[0].Path)

	answer, err := eng.Query(api.SearchParams{Query: "how often are invoices retried?"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer.Tier, answer.TierName, answer.Results[0].Path)
	// Output:
	// opened 0 entries
	// success engineering/billing/invoice_retry_policy.md
	// 2 direct engineering/billing/invoice_retry_policy.md
}

// A Session speaks the JSON protocol of docs/ABI.md §3, as the wasm module
// does for every host: one request in, one response out.
func ExampleSession_Call() {
	s := engine.NewSession(host.NewMemFS(), nil)
	for _, req := range []string{
		`{"id":1,"method":"open","params":{"fixedTime":"2026-03-01T09:00:00Z"}}`,
		`{"id":2,"method":"curate","params":{"operations":[{"type":"ADD","path":"personal/preferences","title":"Coffee","content":"Oat milk flat white, no sugar.","reason":"asked twice"}]}}`,
		`{"id":3,"method":"read","params":{"path":"../etc/passwd"}}`,
		`{"id":4,"method":"close"}`,
	} {
		fmt.Println(string(s.Call([]byte(req))))
	}
	// Output:
	// {"id":1,"result":{"entries":0,"contexts":0,"warnings":[],"index":{"reused":0,"indexed":0,"removed":0}}}
	// {"id":2,"result":{"applied":[{"type":"ADD","path":"personal/preferences/coffee.md","status":"success","message":"added","version":"9f5f1352aa6c6f9d"}],"summary":{"added":1,"updated":0,"merged":0,"deleted":0,"moved":0,"failed":0}}}
	// {"id":3,"error":{"code":"invalid_path","message":"invalid path \"../etc/passwd\": \"..\" is not allowed"}}
	// {"id":4,"result":{}}
}
