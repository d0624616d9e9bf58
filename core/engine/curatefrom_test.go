package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/prompt"
)

const notes = `Standup 2026-02-27
- The payments team moved card retries to the new scheduler; retries now run every 6 hours, at most 4 times.
- Refunds over 500 EUR need a second approval from finance.
`

func curateCall(id string, ops ...map[string]any) api.ToolCall {
	b, _ := json.Marshal(map[string]any{"operations": ops})
	return api.ToolCall{ID: id, Name: prompt.ToolCurate, Arguments: string(b)}
}

func files(fs map[string][]byte) map[string]string {
	out := map[string]string{}
	for p, b := range fs {
		out[p] = string(b)
	}
	return out
}

func TestCurateFromFailedOperationAndRetry(t *testing.T) {
	s, fs := llmSession(t, nil)
	refunds := map[string]any{"type": "ADD", "path": "finance/refunds", "title": "Refund approval",
		"summary": "refunds over 500 EUR need a second approval",
		"content": map[string]any{"facts": []any{map[string]any{"subject": "refunds", "statement": "over 500 EUR need a second approval from finance"}}},
		"reason":  "standup 2026-02-27"}
	badUpdate := map[string]any{"type": "UPDATE", "path": "engineering/payments/card_retry.md", "title": "Card Payment Retries",
		"content": map[string]any{"narrative": "Retries run every 6 hours, at most 4 times, on the new scheduler."}, "reason": "standup 2026-02-27"}
	fixed := maps.Clone(badUpdate)
	fixed["path"] = "engineering/payments/card_retries.md"
	res, reqs := drive(t, s, "curateFrom", map[string]any{"files": []any{map[string]any{"name": "standup.md", "content": notes}}, "instruction": "keep decisions"}, script(t,
		reply("", curateCall("1", refunds, badUpdate)),
		reply("", call1("2", "search_knowledge", `{"query":"card retries"}`), call1("3", "read_entry", `{"path":"finance/refunds/refund_approval.md"}`)),
		reply("", curateCall("4", fixed)),
		reply("Stored the refund approval rule and updated the card retry schedule."),
	))
	r := reqs[0]
	if r.MaxTokens != prompt.CurateMaxTokens || r.Temperature != prompt.CurateTemperature || r.Tools[0].Name != prompt.ToolCurate {
		t.Fatalf("curate request: %d tokens, temperature %v, tools %v", r.MaxTokens, r.Temperature, r.Tools)
	}
	if u := r.Messages[1].Content; !strings.Contains(u, "Instruction: keep decisions") || !strings.Contains(u, "=== file: standup.md ===") {
		t.Fatalf("user message:\n%s", u)
	}
	// The model sees each operation's result.
	fb := reqs[1].Messages[len(reqs[1].Messages)-1]
	var first struct {
		Applied []map[string]any `json:"applied"`
		Summary map[string]any   `json:"summary"`
	}
	if err := json.Unmarshal([]byte(fb.Content), &first); err != nil || len(first.Applied) != 2 {
		t.Fatalf("curate feedback %q: %v", fb.Content, err)
	}
	if first.Applied[0]["status"] != "success" || first.Applied[1]["status"] != "failed" || !strings.Contains(first.Applied[1]["message"].(string), "card_retry.md") {
		t.Fatalf("feedback: %v", first.Applied)
	}
	// During the loop the staged entry is readable by the model, not on disk.
	if got := reqs[2].Messages[len(reqs[2].Messages)-1].Content; !strings.Contains(got, "second approval") {
		t.Fatalf("read_entry of a staged entry: %q", got)
	}
	var out api.CurateFromResult
	b, _ := json.Marshal(res)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Attempts) != 3 || out.Attempts[1].Status != "failed" || out.Attempts[2].Turn != 3 || out.Attempts[2].Status != "success" {
		t.Fatalf("attempts %+v", out.Attempts)
	}
	if len(out.Applied) != 2 || out.Summary.Added != 1 || out.Summary.Updated != 1 || out.Summary.Failed != 0 {
		t.Fatalf("applied %+v summary %+v", out.Applied, out.Summary)
	}
	if out.Message != "Stored the refund approval rule and updated the card retry schedule." || !strings.Contains(out.Reason, "3 operations proposed, 1 failed or refused in the loop, 2 written") {
		t.Fatalf("message %q reason %q", out.Message, out.Reason)
	}
	if len(out.LLM.Steps) != 4 || out.LLM.Steps[0].Purpose != "curate" {
		t.Fatalf("trace %+v", out.LLM)
	}
	disk := files(fs.Files())
	if !strings.Contains(disk["finance/refunds/refund_approval.md"], "second approval") || !strings.Contains(disk["engineering/payments/card_retries.md"], "every 6 hours") {
		t.Fatal("the operations did not reach the tree")
	}
	if _, ok := disk["finance/refunds/context.md"]; !ok {
		t.Fatal("the new topic has no context.md")
	}
	if audit := disk[".arbor/audit.jsonl"]; strings.Count(audit, "\n") != 2 {
		t.Fatalf("the audit log must hold the two operations written, once each:\n%s", audit)
	}
	if q, _ := call(t, s, "search", map[string]any{"query": "second approval"}); q["total"].(float64) != 1 {
		t.Fatalf("the index does not know the new entry: %v", q)
	}
}

func TestCurateFromCancelLeavesTreeUnchanged(t *testing.T) {
	s, fs := llmSession(t, nil)
	before := files(fs.Files())
	res, errObj := call(t, s, "curateFrom", map[string]any{"files": []any{map[string]any{"name": "standup.md", "content": notes}}})
	if errObj != nil {
		t.Fatal(errObj)
	}
	p, _ := pendingOf(t, res)
	add := map[string]any{"type": "ADD", "path": "finance/refunds", "title": "Refund approval", "content": map[string]any{"narrative": "Refunds over 500 EUR need a second approval."}, "reason": "standup"}
	del := map[string]any{"type": "DELETE", "path": "engineering/billing/invoice_retry_policy.md", "reason": "superseded"}
	res, errObj = call(t, s, "resume", api.ResumeParams{Continuation: p.Continuation, Response: &api.LLMResponse{ToolCalls: []api.ToolCall{curateCall("1", add, del)}}})
	if errObj != nil {
		t.Fatal(errObj)
	}
	p, ok := pendingOf(t, res)
	if !ok || !strings.Contains(p.LLM.Messages[len(p.LLM.Messages)-1].Content, `"deleted":1`) {
		t.Fatalf("want the next step with both operations applied to the staged tree: %v", res)
	}
	if _, errObj := call(t, s, "cancel", api.CancelParams{Continuation: p.Continuation}); errObj != nil {
		t.Fatal(errObj)
	}
	after := files(fs.Files())
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("cancel changed the tree:\nbefore %v\nafter %v", keys(before), keys(after))
	}
	if r, _ := call(t, s, "read", map[string]any{"path": "engineering/billing/invoice_retry_policy.md"}); r == nil {
		t.Fatal("the entry the cancelled curation deleted is gone from the engine")
	}
	if r, _ := call(t, s, "search", map[string]any{"query": "refund approval"}); r["total"].(float64) != 0 {
		t.Fatalf("the cancelled entry is searchable: %v", r)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestCurateFromRefusesCopiedExample(t *testing.T) {
	s, fs := llmSession(t, nil)
	var example map[string]any
	if err := json.Unmarshal([]byte(prompt.ExampleJSON), &example); err != nil {
		t.Fatal(err)
	}
	// A subtler copy: the model's own title, the example's facts.
	paraphrase := map[string]any{"type": "ADD", "path": "ops/watering", "title": "Irrigation",
		"content": map[string]any{"narrative": "Tomatoes in greenhouse B are watered at 06:10 and 18:40 each day."}, "reason": "notes"}
	real := map[string]any{"type": "ADD", "path": "finance/refunds", "title": "Refund approval",
		"content": map[string]any{"narrative": "Refunds over 500 EUR need a second approval from finance."}, "reason": "standup"}
	res, reqs := drive(t, s, "curateFrom", map[string]any{"files": []any{map[string]any{"name": "standup.md", "content": notes}}}, script(t,
		reply("", curateCall("1", example, paraphrase)),
		reply("", curateCall("2", real)),
		reply("done"),
	))
	if !strings.Contains(reqs[0].Messages[0].Content, "Greenhouse B watering schedule") {
		t.Fatal("the system prompt does not show the example")
	}
	fb := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	if strings.Count(fb, "refused: it repeats the invented example") != 2 || !strings.Contains(fb, `"failed":2`) {
		t.Fatalf("both copies must be refused with feedback: %s", fb)
	}
	var out api.CurateFromResult
	b, _ := json.Marshal(res)
	json.Unmarshal(b, &out)
	if len(out.Applied) != 1 || out.Applied[0].Path != "finance/refunds/refund_approval.md" || !out.Attempts[0].Refused || !out.Attempts[1].Refused {
		t.Fatalf("result %+v", out)
	}
	for p, c := range files(fs.Files()) {
		if strings.Contains(strings.ToLower(c), "greenhouse") {
			t.Fatalf("%s holds the example", p)
		}
	}
}

func TestCopiedExampleAllowsMaterialThatSaysIt(t *testing.T) {
	op := map[string]any{"title": "Greenhouse B watering schedule", "content": map[string]any{"narrative": "Tomatoes in greenhouse B are watered at 06:10 and 18:40."}}
	if _, copied := prompt.CopiedExample("Greenhouse B watering schedule", op, notes); !copied {
		t.Fatal("a copy of the example from unrelated material was not caught")
	}
	garden := "Greenhouse B watering schedule: tomatoes in greenhouse B are watered at 06:10 and 18:40, agreed on Monday."
	if phrase, copied := prompt.CopiedExample("Greenhouse B watering schedule", op, garden); copied {
		t.Fatalf("material that says it was refused (%q)", phrase)
	}
	unrelated := map[string]any{"content": map[string]any{"narrative": "The drip valve in the north field is closed on rainy days."}}
	if phrase, copied := prompt.CopiedExample("Field valves", unrelated, notes); copied {
		t.Fatalf("one shared phrase is not a copy (%q)", phrase)
	}
}

func TestCurateFromCompaction(t *testing.T) {
	para := strings.Repeat("The scheduler runs retries every six hours and logs each attempt with its decline code. ", 90)
	var fl []any
	for i := range 3 {
		fl = append(fl, map[string]any{"name": fmt.Sprintf("log%d.txt", i), "content": para})
	}
	t.Run("summary used", func(t *testing.T) {
		s, _ := llmSession(t, nil)
		res, reqs := drive(t, s, "curateFrom", map[string]any{"files": fl}, script(t,
			reply("Retries run every six hours; each attempt is logged with its decline code."),
			reply("nothing worth storing beyond what exists"),
		))
		if reqs[0].MaxTokens != 5000 || !strings.Contains(reqs[0].Messages[0].Content, "at most 3000 words") {
			t.Fatalf("pass 1: max_tokens %d, system %q", reqs[0].MaxTokens, reqs[0].Messages[0].Content)
		}
		if u := reqs[1].Messages[1].Content; !strings.HasSuffix(u, "Retries run every six hours; each attempt is logged with its decline code.") {
			t.Fatalf("the curate step does not work from the summary:\n%s", u)
		}
		c := res["compaction"].(map[string]any)
		if c["pass"].(float64) != 1 || c["inputChars"].(float64) <= api.CompactAbove {
			t.Fatalf("compaction %v", c)
		}
		if !strings.Contains(res["reason"].(string), "the model proposed no operation") {
			t.Fatalf("reason %q", res["reason"])
		}
	})
	t.Run("pass 3 after a long summary and an error", func(t *testing.T) {
		s, _ := llmSession(t, nil)
		long := strings.Repeat("still far too long ", 2000)
		res, reqs := drive(t, s, "curateFrom", map[string]any{"files": fl}, script(t,
			reply(long),
			func(_ int, req api.LLMRequest) (*api.LLMResponse, *api.LLMError) {
				if req.MaxTokens != 3000 || !strings.Contains(req.Messages[0].Content, "Compress hard") {
					t.Errorf("pass 2: max_tokens %d, system %q", req.MaxTokens, req.Messages[0].Content)
				}
				return nil, &api.LLMError{Code: api.LLMHTTP, Message: "502 bad gateway"}
			},
			reply("done"),
		))
		u := reqs[2].Messages[1].Content
		if !strings.Contains(u, "[… material cut here:") || utf8.RuneCountInString(u) > api.CompactAbove+200 {
			t.Fatalf("pass 3 output: %d characters, tail %q", utf8.RuneCountInString(u), u[len(u)-80:])
		}
		c := res["compaction"].(map[string]any)
		if c["pass"].(float64) != 3 || len(c["notes"].([]any)) != 2 || !strings.Contains(fmt.Sprint(c["notes"]), "pass 2 failed: http: 502 bad gateway") {
			t.Fatalf("compaction %v", c)
		}
	})
}

func TestCurateFromPreprocessing(t *testing.T) {
	s, _ := llmSession(t, nil)
	six := make([]any, 6)
	for i := range six {
		six[i] = map[string]any{"name": fmt.Sprintf("f%d.txt", i), "content": "x"}
	}
	for name, params := range map[string]map[string]any{
		"no files":    {"files": []any{}},
		"six files":   {"files": six},
		"too long":    {"files": []any{map[string]any{"name": "big.txt", "content": strings.Repeat("a", api.MaxSourceChars+1)}}},
		"empty file":  {"files": []any{map[string]any{"name": "e.txt", "content": " \n"}}},
		"bad budget":  {"files": []any{map[string]any{"name": "a.txt", "content": "a"}}, "tokenBudget": -5},
		"files typed": {"files": "notes.txt"},
	} {
		if _, errObj := call(t, s, "curateFrom", params); errObj == nil || errObj["code"] != api.CodeInvalidParams {
			t.Errorf("%s: got %v, want invalid_params", name, errObj)
		}
	}
	code := strings.Repeat("x := 1\n", 2500)
	res, reqs := drive(t, s, "curateFrom", map[string]any{"files": []any{map[string]any{"name": "main.go", "content": code}}}, script(t, reply("nothing to store")))
	if n := res["files"].([]any)[0].(map[string]any)["droppedLines"].(float64); n != 500 {
		t.Fatalf("droppedLines %v, want 500", n)
	}
	if u := reqs[0].Messages[1].Content; strings.Count(u, "x := 1") != api.MaxCodeLines || !strings.Contains(u, "[… 500 more lines not shown]") {
		t.Fatalf("code not cut at %d lines", api.MaxCodeLines)
	}
}

func TestCurateFromMalformedCurateCalls(t *testing.T) {
	s, fs := llmSession(t, nil)
	before := len(fs.Files())
	_, reqs := drive(t, s, "curateFrom", map[string]any{"files": []any{map[string]any{"name": "n.txt", "content": notes}}}, script(t,
		reply("", api.ToolCall{ID: "1", Name: "curate", Arguments: `{"operations": [`},
			api.ToolCall{ID: "2", Name: "curate", Arguments: `{"operations": []}`},
			api.ToolCall{ID: "3", Name: "curate", Arguments: `{"operations": [{"type": "ADD", "path": 7}]}`},
			api.ToolCall{ID: "4", Name: "curate", Arguments: `{"operations": [{"type": "ADD", "path": "finance/refunds", "title": "Refunds"}]}`},
			api.ToolCall{ID: "5", Name: "follow_relations", Arguments: `{"path":"x.md"}`}),
		reply("gave up"),
	))
	msgs := reqs[1].Messages
	got := msgs[len(msgs)-5:]
	want := []string{"error: arguments are not valid", "error: operations is required", "operation is not valid", "reason", `error: unknown tool "follow_relations"`}
	for i, m := range got {
		if !strings.Contains(m.Content, want[i]) {
			t.Errorf("answer %d: %q, want %q", i+1, m.Content, want[i])
		}
	}
	if len(fs.Files()) != before {
		t.Fatal("failed operations changed the tree")
	}
}

func TestCurateFromEndsEarlyWithWhatSucceeded(t *testing.T) {
	op := func(title string) map[string]any {
		return map[string]any{"type": "UPSERT", "path": "finance/refunds", "title": title, "content": map[string]any{"narrative": "Refunds over 500 EUR need a second approval."}, "reason": "standup"}
	}
	t.Run("iterations", func(t *testing.T) {
		s, fs := llmSession(t, nil)
		res, _ := drive(t, s, "curateFrom", map[string]any{"files": []any{map[string]any{"name": "n.txt", "content": notes}}, "maxIterations": 2}, script(t,
			reply("", curateCall("1", op("Refund approval"))),
			reply("", curateCall("2", op("Refund limits"))),
		))
		if !strings.Contains(res["reason"].(string), "stopped: the iteration limit (2 model calls) was reached") || res["summary"].(map[string]any)["added"].(float64) != 2 {
			t.Fatalf("got %v", res)
		}
		if _, ok := fs.Files()["finance/refunds/refund_limits.md"]; !ok {
			t.Fatal("the staged operations were not written")
		}
	})
	t.Run("model error", func(t *testing.T) {
		s, fs := llmSession(t, nil)
		res, _ := drive(t, s, "curateFrom", map[string]any{"files": []any{map[string]any{"name": "n.txt", "content": notes}}}, script(t,
			reply("", curateCall("1", op("Refund approval"))),
			func(int, api.LLMRequest) (*api.LLMResponse, *api.LLMError) {
				return nil, &api.LLMError{Code: api.LLMHTTP, Message: "503"}
			},
		))
		if !strings.HasPrefix(res["reason"].(string), "the model call failed (http: 503); 1 operations proposed") || len(res["applied"].([]any)) != 1 {
			t.Fatalf("got %v", res)
		}
		if _, ok := fs.Files()["finance/refunds/refund_approval.md"]; !ok {
			t.Fatal("the operation that succeeded before the error was not written")
		}
	})
}
