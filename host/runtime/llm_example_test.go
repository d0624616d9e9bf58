package runtime_test

import (
	"context"
	"fmt"
	"log"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// A query that tiers 0–2 cannot answer goes to the model: the driver makes
// each model call through the Completer (here a stand-in that always says
// the entries do not cover the question; host/llm has real providers) and
// resumes the engine until it has the final answer.
func ExampleEngine_QueryLLM() {
	ctx := context.Background()
	eng, err := runtime.New(ctx, "/path/to/root")
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close(ctx)
	if _, err := eng.Open(ctx, api.OpenParams{}); err != nil {
		log.Fatal(err)
	}
	model := runtime.CompleterFunc(func(ctx context.Context, req api.LLMRequest) (api.LLMResponse, error) {
		return api.LLMResponse{Content: "NOT COVERED"}, nil
	})
	res, err := eng.QueryLLM(ctx, api.QueryParams{SearchParams: api.SearchParams{Query: "why did billing move to the new scheduler?"}, TokenBudget: 20000}, model)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.TierName, res.Answer)
	if res.LLM != nil {
		fmt.Println(len(res.LLM.Steps), "model calls,", res.LLM.InputTokens+res.LLM.OutputTokens, "tokens")
	}
}
