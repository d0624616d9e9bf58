package runtime_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// Run the engine module under wazero on a folder: open it, curate an entry
// and ask about it. The folder is the memory root: the module reaches
// nothing else. Compiled code is cached, so the next New starts fast.
func ExampleNew() {
	ctx := context.Background()
	root, err := os.MkdirTemp("", "arbor-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)

	eng, err := runtime.New(ctx, root)
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close(ctx)
	if _, err := eng.Open(ctx, api.OpenParams{FixedTime: "2026-03-01T09:00:00Z"}); err != nil {
		log.Fatal(err)
	}
	res, err := eng.Curate(ctx, api.CurateParams{Operations: []api.Operation{{
		Type: api.OpAdd, Path: "engineering/billing", Title: "Invoice retry policy",
		Content: api.Content{Narrative: &api.Narrative{Text: "Failed invoices are retried three times, then escalated to support."}},
		Reason:  "agreed in the billing sync",
	}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Summary.Added, "added:", res.Applied[0].Path)

	answer, err := eng.Query(ctx, api.SearchParams{Query: "how often are invoices retried?"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer.TierName, answer.Results[0].Path)
	if _, err := os.Stat(root + "/engineering/billing/invoice_retry_policy.md"); err == nil {
		fmt.Println("the entry is a markdown file in the root")
	}
	// Output:
	// 1 added: engineering/billing/invoice_retry_policy.md
	// direct engineering/billing/invoice_retry_policy.md
	// the entry is a markdown file in the root
}

// A query that tiers 0–2 cannot answer goes to the model: the driver makes
// each model call through the Completer (here a stand-in that always says
// the entries do not cover the question; host/llm has real providers) and
// resumes the engine until it has the final answer.
func ExampleEngine_QueryLLM() {
	ctx := context.Background()
	root, err := os.MkdirTemp("", "arbor-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	eng, err := runtime.New(ctx, root)
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close(ctx)
	if _, err := eng.Open(ctx, api.OpenParams{FixedTime: "2026-03-01T09:00:00Z"}); err != nil {
		log.Fatal(err)
	}
	var ops []api.Operation
	for _, text := range []string{"Billing moved card retries to the scheduler.", "The scheduler runs billing jobs at night."} {
		ops = append(ops, api.Operation{Type: api.OpAdd, Path: "engineering/billing", Title: text,
			Content: api.Content{Narrative: &api.Narrative{Text: text}}, Reason: "standup notes"})
	}
	if _, err := eng.Curate(ctx, api.CurateParams{Operations: ops}); err != nil {
		log.Fatal(err)
	}

	model := runtime.CompleterFunc(func(ctx context.Context, req api.LLMRequest) (api.LLMResponse, error) {
		return api.LLMResponse{Content: "NOT COVERED"}, nil
	})
	res, err := eng.QueryLLM(ctx, api.QueryParams{SearchParams: api.SearchParams{Query: "why did billing move to the scheduler?"}}, model)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Tier, res.TierName, res.Answer)
	for _, s := range res.LLM.Steps {
		fmt.Println("model call", s.Step, "for", s.Purpose)
	}
	// Output:
	// 4 agentic The stored knowledge does not answer this question.
	// model call 1 for tier3
	// model call 2 for tier4
}
