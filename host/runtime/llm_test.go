package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
)

// fakeModel is a scripted Completer: it answers each call with the next
// function of its script and keeps the requests it got.
type fakeModel struct {
	mu     sync.Mutex
	t      *testing.T
	script []func(ctx context.Context, req api.LLMRequest) (api.LLMResponse, error)
	reqs   []api.LLMRequest
}

func (m *fakeModel) Complete(ctx context.Context, req api.LLMRequest) (api.LLMResponse, error) {
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	if n >= len(m.script) {
		m.t.Errorf("model call %d: only %d scripted", n+1, len(m.script))
		return api.LLMResponse{}, errors.New("unscripted call")
	}
	return m.script[n](ctx, req)
}

func says(content string, calls ...api.ToolCall) func(context.Context, api.LLMRequest) (api.LLMResponse, error) {
	return func(context.Context, api.LLMRequest) (api.LLMResponse, error) {
		return api.LLMResponse{Content: content, ToolCalls: calls, Usage: api.Usage{InputTokens: 300, OutputTokens: 40}, Model: "scripted"}, nil
	}
}

func tool(name, args string) api.ToolCall { return api.ToolCall{ID: name, Name: name, Arguments: args} }

// llmRoot is a root where "failed retry escalation" has no direct answer.
func llmRoot(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "engineering/billing/invoice_retry_policy.md"), retryEntry)
	writeFile(t, filepath.Join(dir, "operations/oncall/escalation.md"), "---\ntitle: On-call escalation\nsummary: the billing lead is paged after the third failed invoice retry\n---\n\n## Narrative\nWhen an invoice fails its third retry, the on-call engineer pages the billing lead.\n")
	writeFile(t, filepath.Join(dir, "engineering/payments/card_retries.md"), "---\ntitle: Card retries\nsummary: failed card payments are retried after an hour and a day\nrelated: [engineering/billing/invoice_retry_policy.md]\n---\n\n## Narrative\nFailed card payments are retried after one hour, then one day.\n")
	return dir
}

const question = "failed retry escalation"

func openLLM(t *testing.T, dir string, p api.OpenParams) *Engine {
	t.Helper()
	e := newEngine(t, dir)
	if p.FixedTime == "" {
		p.FixedTime = fixedTime
	}
	if _, err := e.Open(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestQueryLLMTier3(t *testing.T) {
	e := openLLM(t, llmRoot(t), api.OpenParams{})
	ctx := context.Background()
	plain, err := e.Query(ctx, api.SearchParams{Query: question})
	if err != nil || !plain.NeedsLLM || plain.LLM != nil {
		t.Fatalf("without a model the query must stop at tier 2: %+v %v", plain, err)
	}
	m := &fakeModel{t: t, script: []func(context.Context, api.LLMRequest) (api.LLMResponse, error){
		says("## Summary\nThe billing lead is paged after the third failed retry.\n## Details\n(operations/oncall/escalation.md)\n## Sources\n- operations/oncall/escalation.md\n## Gaps\nnone"),
	}}
	res, err := e.QueryLLM(ctx, api.QueryParams{SearchParams: api.SearchParams{Query: question}}, m)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tier != api.TierLLM || res.TierName != "llm" || fmt.Sprint(res.Sources) != "[operations/oncall/escalation.md]" {
		t.Fatalf("want a tier-3 answer, got %+v", res)
	}
	if len(m.reqs) != 1 || m.reqs[0].MaxTokens != 1024 || m.reqs[0].Temperature != 0.3 {
		t.Fatalf("requests %+v", m.reqs)
	}
	if res.LLM == nil || len(res.LLM.Steps) != 1 || res.LLM.Steps[0].Model != "scripted" || res.LLM.InputTokens != 300 || res.LLM.Steps[0].LatencyMs <= 0 {
		t.Fatalf("trace %+v", res.LLM)
	}
}

func TestQueryLLMTier4ReleasesTheLock(t *testing.T) {
	e := openLLM(t, llmRoot(t), api.OpenParams{})
	ctx := context.Background()
	// Inside a model call, other calls must be served: the driver does not
	// hold the engine's lock while the model works (a held lock would
	// deadlock here, caught by the timeout).
	searchDuring := func(ctx context.Context, req api.LLMRequest) (api.LLMResponse, error) {
		done := make(chan error, 1)
		go func() {
			_, err := e.Search(ctx, api.SearchParams{Query: "card"})
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				return api.LLMResponse{}, err
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a search during a model call did not return: the engine lock is held")
		}
		return says("", tool("read_entry", `{"path":"engineering/payments/card_retries.md"}`), tool("follow_relations", `{"path":"engineering/payments/card_retries.md"}`))(ctx, req)
	}
	m := &fakeModel{t: t, script: []func(context.Context, api.LLMRequest) (api.LLMResponse, error){
		says("NOT COVERED"),
		says("", tool("search_knowledge", `{"query":"card retries","limit":3}`)),
		searchDuring,
		says("", tool("read_entry", `{"path": 12}`)),
		says("## Summary\nCards are retried after an hour, then a day.\n## Sources\n- engineering/payments/card_retries.md\n- engineering/billing/invoice_retry_policy.md"),
	}}
	res, err := e.QueryLLM(ctx, api.QueryParams{SearchParams: api.SearchParams{Query: question}}, m)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tier != api.TierAgentic || fmt.Sprint(res.Sources) != "[engineering/payments/card_retries.md engineering/billing/invoice_retry_policy.md]" {
		t.Fatalf("want a tier-4 answer, got %+v", res)
	}
	if len(m.reqs) != 5 || len(m.reqs[1].Tools) != 4 || m.reqs[1].MaxTokens != 2048 {
		t.Fatalf("%d requests", len(m.reqs))
	}
	last := m.reqs[4].Messages[len(m.reqs[4].Messages)-1]
	if last.Role != api.RoleTool || !strings.HasPrefix(last.Content, "error: arguments are not valid") {
		t.Fatalf("a malformed call must be answered with an error: %+v", last)
	}
}

func TestQueryLLMErrorsReachTheEngine(t *testing.T) {
	e := openLLM(t, llmRoot(t), api.OpenParams{})
	for _, tc := range []struct {
		err  error
		code string
	}{
		{&api.LLMError{Code: api.LLMRateLimit, Message: "429 after 4 tries"}, "rate_limit: 429 after 4 tries"},
		{fmt.Errorf("openai: %w", &api.LLMError{Code: api.LLMAuth, Message: "key refused"}), "auth: key refused"},
		{fmt.Errorf("post: %w", context.DeadlineExceeded), "timeout: post: context deadline exceeded"},
		{errors.New("connection refused"), "http: connection refused"},
	} {
		m := &fakeModel{t: t, script: []func(context.Context, api.LLMRequest) (api.LLMResponse, error){
			func(context.Context, api.LLMRequest) (api.LLMResponse, error) { return api.LLMResponse{}, tc.err },
		}}
		res, err := e.QueryLLM(context.Background(), api.QueryParams{SearchParams: api.SearchParams{Query: question}}, m)
		if err != nil {
			t.Fatal(err)
		}
		if !res.NeedsLLM || !strings.Contains(res.Reason, "the model call failed ("+tc.code+")") || res.LLM.Steps[0].Error != tc.code {
			t.Fatalf("%v: got %+v", tc.err, res)
		}
	}
}

func TestQueryLLMBudget(t *testing.T) {
	e := openLLM(t, llmRoot(t), api.OpenParams{LLM: &api.LLMOptions{TokenBudget: 1000}})
	loop := says("", tool("read_entry", `{"path":"operations/oncall/escalation.md"}`))
	m := &fakeModel{t: t, script: []func(context.Context, api.LLMRequest) (api.LLMResponse, error){says("NOT COVERED"), loop, loop}}
	res, err := e.QueryLLM(context.Background(), api.QueryParams{SearchParams: api.SearchParams{Query: question}}, m)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Incomplete || !strings.Contains(res.Reason, "token budget is spent (1020 of 1000 tokens used)") || fmt.Sprint(res.Sources) != "[operations/oncall/escalation.md]" {
		t.Fatalf("got %+v", res)
	}
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		if !strings.HasPrefix(rel, ".arbor/index") {
			out[rel] = string(b)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func curateArgs(ops ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{"operations": ops})
	return string(b)
}

func TestCurateFromRetryThroughTheDriver(t *testing.T) {
	dir := llmRoot(t)
	e := openLLM(t, dir, api.OpenParams{})
	bad := map[string]any{"type": "MERGE", "path": "engineering/payments/card_retry.md", "mergeTarget": "engineering/billing/invoice_retry_policy.md", "reason": "one retry policy"}
	good := map[string]any{"type": "ADD", "path": "finance/refunds", "title": "Refund approval", "summary": "refunds over 500 EUR need a second approval",
		"content": map[string]any{"narrative": "Refunds over 500 EUR need a second approval from finance."}, "reason": "standup"}
	m := &fakeModel{t: t, script: []func(context.Context, api.LLMRequest) (api.LLMResponse, error){
		says("", api.ToolCall{ID: "1", Name: "curate", Arguments: curateArgs(bad, good)}),
		func(ctx context.Context, req api.LLMRequest) (api.LLMResponse, error) {
			fb := req.Messages[len(req.Messages)-1].Content
			if !strings.Contains(fb, `"status":"failed"`) || !strings.Contains(fb, "card_retry.md") {
				t.Errorf("the model did not see the failure: %s", fb)
			}
			fixed := map[string]any{"type": "MERGE", "path": "engineering/payments/card_retries.md", "mergeTarget": "engineering/billing/invoice_retry_policy.md", "reason": "one retry policy"}
			return says("", api.ToolCall{ID: "2", Name: "curate", Arguments: curateArgs(fixed)})(ctx, req)
		},
		says("Merged the card retries into the retry policy and stored the refund rule."),
	}}
	res, err := e.CurateFrom(context.Background(), api.CurateFromParams{Files: []api.SourceFile{{Name: "standup.txt", Content: "Refunds over 500 EUR need a second approval from finance. Card retries follow the invoice retry policy now."}}}, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 3 || res.Attempts[0].Status != "failed" || res.Summary.Added != 1 || res.Summary.Merged != 1 || res.Summary.Failed != 0 {
		t.Fatalf("result %+v", res)
	}
	disk := snapshot(t, dir)
	if _, ok := disk["engineering/payments/card_retries.md"]; ok {
		t.Fatal("the merged source is still on disk")
	}
	if !strings.Contains(disk["finance/refunds/refund_approval.md"], "second approval") || !strings.Contains(disk["engineering/billing/invoice_retry_policy.md"], "one hour") {
		t.Fatal("the operations did not reach the disk")
	}
}

func TestCurateFromCancelledByContext(t *testing.T) {
	dir := llmRoot(t)
	var mu sync.Mutex
	var lines []string
	e := newEngine(t, dir, WithLogger(func(level int, msg string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, msg)
	}))
	if _, err := e.Open(context.Background(), api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	add := map[string]any{"type": "ADD", "path": "finance/refunds", "title": "Refund approval", "content": map[string]any{"narrative": "Refunds over 500 EUR need a second approval."}, "reason": "standup"}
	m := &fakeModel{t: t, script: []func(context.Context, api.LLMRequest) (api.LLMResponse, error){
		says("", api.ToolCall{ID: "1", Name: "curate", Arguments: curateArgs(add)}),
		func(ctx context.Context, req api.LLMRequest) (api.LLMResponse, error) {
			if fb := req.Messages[len(req.Messages)-1].Content; !strings.Contains(fb, `"added":1`) {
				t.Errorf("the ADD was not applied to the staged tree: %s", fb)
			}
			cancel() // the user gives up while the model works
			<-ctx.Done()
			return api.LLMResponse{}, ctx.Err()
		},
	}}
	_, err := e.CurateFrom(ctx, api.CurateFromParams{Files: []api.SourceFile{{Name: "n.txt", Content: "Refunds over 500 EUR need a second approval."}}}, m)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if after := snapshot(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a cancelled curation changed the tree: %d files before, %d after", len(before), len(after))
	}
	if st, err := e.Stats(context.Background()); err != nil || st.Entries != 3 {
		t.Fatalf("stats after the cancel: %+v %v", st, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(lines, "\n"), "llm: curateFrom step 1 (curate): 300 tokens in, 40 out, ") {
		t.Fatalf("the model call was not logged; log:\n%s", strings.Join(lines, "\n"))
	}
	if !strings.Contains(strings.Join(lines, "\n"), "llm: curateFrom cancelled at step 2") {
		t.Fatalf("the engine was not told to cancel; log:\n%s", strings.Join(lines, "\n"))
	}
}

func TestContinuationExpiresOnTheEngineClock(t *testing.T) {
	e := newEngine(t, llmRoot(t))
	ctx := context.Background()
	if _, err := e.Open(ctx, api.OpenParams{LLM: &api.LLMOptions{ContinuationSeconds: 0.05}}); err != nil {
		t.Fatal(err)
	}
	raw, err := e.CallMethod(ctx, "query", api.QueryParams{SearchParams: api.SearchParams{Query: question}, LLM: true})
	if err != nil {
		t.Fatal(err)
	}
	var p api.Pending
	if err := json.Unmarshal(raw, &p); err != nil || p.Status != "pending" || p.Step != 1 {
		t.Fatalf("want a pending step 1: %s", raw)
	}
	time.Sleep(200 * time.Millisecond) // past the 50 ms the continuation may wait
	_, err = e.CallMethod(ctx, "resume", api.ResumeParams{Continuation: p.Continuation, Response: &api.LLMResponse{Content: "NOT COVERED"}})
	if !isCode(err, api.CodeExpired) {
		t.Fatalf("resume after expiry: %v, want %s", err, api.CodeExpired)
	}
}

func TestQueryLLMCancelledByACompleterThatIgnoresCtx(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	e := newEngine(t, llmRoot(t), WithLogger(func(level int, msg string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, msg)
	}))
	if _, err := e.Open(context.Background(), api.OpenParams{FixedTime: fixedTime}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	model := CompleterFunc(func(context.Context, api.LLMRequest) (api.LLMResponse, error) {
		cancel()
		return api.LLMResponse{Content: "NOT COVERED"}, nil // answers anyway
	})
	if _, err := e.QueryLLM(ctx, api.QueryParams{SearchParams: api.SearchParams{Query: question}}, model); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(lines, "\n"), "llm: query cancelled at step 1") {
		t.Fatalf("the continuation was not cancelled; log:\n%s", strings.Join(lines, "\n"))
	}
}
