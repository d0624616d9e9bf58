package engine

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/prompt"
)

// The merge of the planted duplicates (tidyFiles) as a model writes it:
// every sentence of both copies, the two ways of saying the interval
// marked, every fact of both copies word for word.
var modelMerge = "---\ntitle: Invoice policy\nsummary: How failed invoices are retried, escalated and written off.\n---\n\n## Narrative\n" +
	strings.Join(policyText[:3], " ") + " " + strings.Join(policyText[4:], " ") +
	"\n\nRetries are two days apart and never fall on a weekend.\n" + prompt.DiffersMarker + ": one copy says the interval never falls on a weekend; the other that retries skip weekends.\n\n" +
	"## Facts\n- retries: three\n- escalation: collections team\n- write-off: under five euros\n"

var tidyApplyLLM = map[string]any{"kinds": []string{api.TidyMerge}, "apply": true, "llm": true}

// tidySession opens tidyFiles in a session at the fixed time of llmSession.
func tidySession(t *testing.T, open map[string]any) (*Session, *host.MemFS) {
	t.Helper()
	s, fs := newSession(t, tidyFiles())
	params := map[string]any{"fixedTime": "2026-03-01T00:00:00Z"}
	maps.Copy(params, open)
	if _, errObj := call(t, s, "open", params); errObj != nil {
		t.Fatalf("open: %v", errObj)
	}
	return s, fs
}

// treeFiles are the files of the tree, without .arbor/.
func treeFiles(fs *host.MemFS) map[string]string {
	out := files(fs.Files())
	for p := range out {
		if strings.HasPrefix(p, ".arbor/") {
			delete(out, p)
		}
	}
	return out
}

func tidyResultOf(t *testing.T, res map[string]any) api.TidyResult {
	t.Helper()
	var out api.TidyResult
	b, _ := json.Marshal(res)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// deterministicTidy is the tree after the plain apply of the merges.
func deterministicTidy(t *testing.T) map[string]string {
	t.Helper()
	s, fs := tidySession(t, nil)
	res, errObj := call(t, s, "tidy", map[string]any{"kinds": []string{api.TidyMerge}, "apply": true})
	if errObj != nil || tidyResultOf(t, res).Applied.Summary.Merged != 1 {
		t.Fatalf("deterministic tidy: %v %v", res, errObj)
	}
	return treeFiles(fs)
}

// TestTidyModelWritesTheMerge: with llm and apply, tidy asks the model
// for the merged entry of the group (the copies in, front matter and
// all), and its text is what lands, under curate's MERGE (the copy gone,
// the link to it rewritten, the audit line written), the trace in the
// result.
func TestTidyModelWritesTheMerge(t *testing.T) {
	s, fs := tidySession(t, nil)
	res, reqs := drive(t, s, "tidy", tidyApplyLLM, script(t, reply(modelMerge)))
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Messages[0].Content != prompt.TidyMergeSystem || r.Temperature != prompt.TidyMergeTemperature || r.MaxTokens <= 0 || r.MaxTokens > prompt.TidyMergeMaxTokens || len(r.Tools) != 0 {
		t.Fatalf("request: %+v", r)
	}
	user := r.Messages[1].Content
	for _, want := range []string{"=== entry: " + policyPath + " ===", "=== entry: " + copyPath + " ===", "title: Invoice policy", "write-off: under five euros", "Retries are two days apart"} {
		if !strings.Contains(user, want) {
			t.Errorf("the model is not shown %q:\n%s", want, user)
		}
	}
	out := tidyResultOf(t, res)
	if len(out.Suggestions) != 1 || out.Applied == nil || out.Applied.Summary.Merged != 1 || out.Applied.Summary.Failed != 0 {
		t.Fatalf("result: %+v", out)
	}
	sg := out.Suggestions[0]
	if sg.MergedBy != api.MergedByModel || sg.Warning != "" || !strings.Contains(sg.Reason, "written by the model") {
		t.Fatalf("suggestion: %+v", sg)
	}
	if out.LLM == nil || len(out.LLM.Steps) != 1 || out.LLM.Steps[0].Purpose != "tidy" || out.LLM.InputTokens != 100 {
		t.Fatalf("trace: %+v", out.LLM)
	}
	keep, gone := sg.Paths[0], sg.Paths[1]
	disk := treeFiles(fs)
	if _, ok := disk[gone]; ok {
		t.Errorf("%s is still there", gone)
	}
	md := disk[keep]
	for _, want := range []string{"summary: How failed invoices are retried, escalated and written off.", "never fall on a weekend", prompt.DiffersMarker, "write-off: under five euros", "retries: three"} {
		if !strings.Contains(md, want) {
			t.Errorf("the merged entry lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Differs in") || strings.Count(md, policyText[1]) != 1 || strings.Count(md, "retries: three") != 1 {
		t.Errorf("the merged entry is not the model's text alone:\n%s", md)
	}
	if !strings.Contains(disk[linkerPath], keep) || strings.Contains(disk[linkerPath], gone) {
		t.Errorf("the link was not rewritten:\n%s", disk[linkerPath])
	}
	if audit := files(fs.Files())[".arbor/audit.jsonl"]; strings.Count(audit, "\n") != 1 || !strings.Contains(audit, "merged text written by the model") {
		t.Errorf("audit log:\n%s", audit)
	}
	if q, _ := call(t, s, "search", map[string]any{"query": "never fall on a weekend"}); q["total"].(float64) != 1 {
		t.Errorf("the index does not hold the model's text: %v", q)
	}
}

// TestTidyModelGarbageFallsBack: an answer that is no usable merge (or a
// failed call) leaves that group to the deterministic merge, with a
// warning saying why; the tree is then exactly as the plain apply leaves
// it.
func TestTidyModelGarbageFallsBack(t *testing.T) {
	want := deterministicTidy(t)
	noWriteOff := strings.Replace(modelMerge, "- write-off: under five euros\n", "", 1)
	short := "---\ntitle: Invoice policy\n---\n\n## Narrative\nFailed invoices are retried.\n\n## Facts\n- retries: three\n- escalation: collections team\n- write-off: under five euros\n"
	cases := []struct {
		name, warning string
		m             model
	}{
		{"empty", "the answer is empty", reply("  \n")},
		{"prose", "does not start with front matter", reply("I merged the two copies: failed invoices are retried three times.")},
		{"bad front matter", "not an entry", reply("---\ntitle: [unclosed\n---\n\n## Narrative\nx\n")},
		{"a fact dropped", `drops the fact "write-off: under five euros"`, reply(noWriteOff)},
		{"oversized", "more than the copies together", reply(modelMerge + strings.Repeat("More words. ", 2000))},
		{"narrative cut", "less than 75% of the fullest copy's", reply(short)},
		{"timeout", "the model call failed (timeout: no answer in 60s)", func(int, api.LLMRequest) (*api.LLMResponse, *api.LLMError) {
			return nil, &api.LLMError{Code: "timeout", Message: "no answer in 60s"}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, fs := tidySession(t, nil)
			res, reqs := drive(t, s, "tidy", tidyApplyLLM, script(t, c.m))
			out := tidyResultOf(t, res)
			if len(reqs) != 1 || len(out.Suggestions) != 1 || out.Applied.Summary.Merged != 1 {
				t.Fatalf("%d calls, result %+v", len(reqs), out)
			}
			sg := out.Suggestions[0]
			if sg.MergedBy != api.MergedByTidy || !strings.Contains(sg.Warning, c.warning) || !strings.HasSuffix(sg.Warning, "; merged deterministically") {
				t.Fatalf("mergedBy %q, warning %q; want a warning with %q", sg.MergedBy, sg.Warning, c.warning)
			}
			if got := treeFiles(fs); !maps.Equal(got, want) {
				t.Fatalf("the tree differs from the deterministic merge's:\n%s", got[sg.Paths[0]])
			}
		})
	}
}

// TestTidyModelFencedAnswer: an entry wrapped in a code fence, against
// the instructions, is still the model's entry.
func TestTidyModelFencedAnswer(t *testing.T) {
	s, _ := tidySession(t, nil)
	res, _ := drive(t, s, "tidy", tidyApplyLLM, script(t, reply("```markdown\n"+modelMerge+"```")))
	if sg := tidyResultOf(t, res).Suggestions[0]; sg.MergedBy != api.MergedByModel {
		t.Fatalf("suggestion: %+v", sg)
	}
}

// TestTidyModelCancelAndExpiry: a cancelled or expired tidy writes
// nothing, although its plan had merges, splits or archives to apply.
func TestTidyModelCancelAndExpiry(t *testing.T) {
	s, fs := newSession(t, tidyFiles())
	clock := &movingClock{now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	s.clock = clock
	if _, errObj := call(t, s, "open", map[string]any{"llm": map[string]any{"continuationSeconds": 60}}); errObj != nil {
		t.Fatal(errObj)
	}
	before := files(fs.Files())
	start := func() api.Pending { return mustPend(t, s, "tidy", map[string]any{"apply": true, "llm": true}) }
	p := start()
	if res, errObj := call(t, s, "cancel", api.CancelParams{Continuation: p.Continuation}); errObj != nil || res["cancelled"] != true {
		t.Fatalf("cancel: %v %v", res, errObj)
	}
	p = start()
	clock.add(61 * time.Second)
	if _, errObj := call(t, s, "resume", api.ResumeParams{Continuation: p.Continuation, Response: &api.LLMResponse{Content: modelMerge}}); errObj == nil || errObj["code"] != api.CodeExpired {
		t.Fatalf("resume after the TTL: %v, want %s", errObj, api.CodeExpired)
	}
	after := files(fs.Files())
	for p, b := range before {
		if after[p] != b {
			t.Errorf("%s changed", p)
		}
	}
	if _, ok := after[".arbor/audit.jsonl"]; ok {
		t.Errorf("the audit log holds operations:\n%s", after[".arbor/audit.jsonl"])
	}
	for p := range after {
		if _, ok := before[p]; !ok && !strings.HasPrefix(p, ".arbor/") {
			t.Errorf("%s was written", p)
		}
	}
}

// TestTidyModelTreeChangedMeanwhile: an entry of the group changed (a
// curate served while the model worked) makes the model's text stale:
// the merge is planned again from the tree as it is and applied
// deterministically, and the change is kept.
func TestTidyModelTreeChangedMeanwhile(t *testing.T) {
	s, fs := tidySession(t, nil)
	p := mustPend(t, s, "tidy", tidyApplyLLM)
	upd := map[string]any{"type": "UPDATE", "path": policyPath, "summary": "changed while the model worked", "reason": "edit"}
	if r, errObj := call(t, s, "curate", map[string]any{"operations": []any{upd}}); errObj != nil || r["summary"].(map[string]any)["updated"].(float64) != 1 {
		t.Fatalf("curate: %v %v", r, errObj)
	}
	res, errObj := call(t, s, "resume", api.ResumeParams{Continuation: p.Continuation, Response: &api.LLMResponse{Content: modelMerge}})
	if errObj != nil {
		t.Fatal(errObj)
	}
	out := tidyResultOf(t, res)
	if len(out.Suggestions) != 1 || out.Applied.Summary.Merged != 1 {
		t.Fatalf("result: %+v", out)
	}
	sg := out.Suggestions[0]
	if sg.MergedBy != api.MergedByTidy || !strings.Contains(sg.Warning, "changed while the model wrote the merge") {
		t.Fatalf("suggestion: %+v", sg)
	}
	md := treeFiles(fs)[sg.Paths[0]]
	if !strings.Contains(md, "changed while the model worked") || !strings.Contains(md, "Differs in") || strings.Contains(md, prompt.DiffersMarker+":") {
		t.Fatalf("the merged entry:\n%s", md)
	}
}

// TestTidyModelNotNeeded: without apply, or without merges, or with no
// budget left for a call, tidy answers at once; the budget case merges
// deterministically and says why.
func TestTidyModelNotNeeded(t *testing.T) {
	s, fs := tidySession(t, nil)
	before := treeFiles(fs)
	res, errObj := call(t, s, "tidy", map[string]any{"llm": true})
	if errObj != nil {
		t.Fatal(errObj)
	}
	if _, pending := pendingOf(t, res); pending || len(tidyResultOf(t, res).Suggestions) == 0 || !maps.Equal(treeFiles(fs), before) {
		t.Fatalf("a plan without apply: %v", res)
	}
	res, errObj = call(t, s, "tidy", map[string]any{"kinds": []string{api.TidyArchive}, "apply": true, "llm": true})
	if _, pending := pendingOf(t, res); errObj != nil || pending {
		t.Fatalf("an apply without merges: %v %v", res, errObj)
	}
	if _, errObj = call(t, s, "tidy", map[string]any{"apply": true, "llm": true, "maxIterations": 99}); errObj == nil || errObj["code"] != api.CodeInvalidParams {
		t.Fatalf("maxIterations 99: %v", errObj)
	}
	res, errObj = call(t, s, "tidy", map[string]any{"kinds": []string{api.TidyMerge}, "apply": true, "llm": true, "tokenBudget": 100})
	if errObj != nil {
		t.Fatal(errObj)
	}
	if _, pending := pendingOf(t, res); pending {
		t.Fatalf("a call was asked for with no budget: %v", res)
	}
	out := tidyResultOf(t, res)
	if sg := out.Suggestions[0]; sg.MergedBy != api.MergedByTidy || !strings.Contains(sg.Warning, "not sent to the model: the token budget is spent") || out.Applied.Summary.Merged != 1 {
		t.Fatalf("result: %+v", out)
	}
}

// TestTidyModelOneCallPerGroup: two groups, one model call each, in the
// plan's order; the garbage answer of one leaves only that one to the
// deterministic merge.
func TestTidyModelOneCallPerGroup(t *testing.T) {
	refund := tidyFiles()[otherPath]
	tree := tidyFiles()
	tree["ops/billing/refund_policy_copy.md"] = refund + "\n## Facts\n- approval: a manager\n"
	s, fs := newSession(t, tree)
	if _, errObj := call(t, s, "open", map[string]any{"fixedTime": "2026-03-01T00:00:00Z"}); errObj != nil {
		t.Fatal(errObj)
	}
	res, reqs := drive(t, s, "tidy", tidyApplyLLM, script(t, reply(modelMerge), reply("no entry here")))
	out := tidyResultOf(t, res)
	if len(reqs) != 2 || len(out.Suggestions) != 2 || out.Applied.Summary.Merged != 2 || len(out.LLM.Steps) != 2 {
		t.Fatalf("%d calls, result %+v", len(reqs), out)
	}
	if !strings.Contains(reqs[0].Messages[1].Content, policyPath) || !strings.Contains(reqs[1].Messages[1].Content, otherPath) || strings.Contains(reqs[1].Messages[1].Content, policyPath) {
		t.Fatalf("each call must hold its own group")
	}
	inv, ref := out.Suggestions[0], out.Suggestions[1]
	if inv.MergedBy != api.MergedByModel || ref.MergedBy != api.MergedByTidy || !strings.Contains(ref.Warning, "does not start with front matter") {
		t.Fatalf("suggestions: %+v", out.Suggestions)
	}
	disk := treeFiles(fs)
	if !strings.Contains(disk[inv.Paths[0]], prompt.DiffersMarker) || !strings.Contains(disk[ref.Paths[0]], "approval: a manager") {
		t.Fatalf("merged entries:\n%s\n%s", disk[inv.Paths[0]], disk[ref.Paths[0]])
	}
}
