package llm_test

import (
	"context"
	"fmt"

	"github.com/arbormem/arbor/core/api"
	hostllm "github.com/arbormem/arbor/host/llm"
	"github.com/arbormem/arbor/host/llm/llmtest"
)

// A provider client against a scripted OpenAI-compatible server: a 500,
// retried, then the answer. Real code gets its Config from Load.
func Example() {
	srv := llmtest.New([]llmtest.Step{
		{Status: 500},
		{Reply: &llmtest.Reply{Content: "Retried three times.", Usage: &llmtest.Usage{InputTokens: 42, OutputTokens: 4}}},
	})
	defer srv.Close()

	client, err := hostllm.New(hostllm.Config{Provider: "openai-compatible", BaseURL: srv.URL + "/v1", Model: "any"},
		hostllm.WithRetryHook(func(r hostllm.Retry) { fmt.Printf("attempt %d: %s\n", r.Attempt, r.Reason) }))
	if err != nil {
		panic(err)
	}
	resp, err := client.Complete(context.Background(), api.LLMRequest{
		Messages:  []api.Message{{Role: api.RoleUser, Content: "How often are invoices retried?"}},
		MaxTokens: 100,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Content, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output:
	// attempt 1: HTTP 500: scripted HTTP 500
	// Retried three times. 42 4
}
