package llm_test

import (
	"context"
	"testing"

	hostllm "github.com/arbormem/arbor/host/llm"
	"github.com/arbormem/arbor/host/llm/llmtest"
)

// BenchmarkComplete is the host's cost of one model call, the model
// excepted: encoding a tier-4 turn, a loopback HTTP round trip to the
// scripted server and decoding a tool call, per wire format.
func BenchmarkComplete(b *testing.B) {
	for _, provider := range []string{"openai-compatible", "anthropic"} {
		b.Run(provider, func(b *testing.B) {
			steps := make([]llmtest.Step, b.N)
			for i := range steps {
				steps[i] = llmtest.Step{Reply: &llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "read_entry", Arguments: []byte(`{"path":"a/b/c.md"}`)}}}}
			}
			srv := llmtest.New(steps)
			defer srv.Close()
			base := srv.URL + "/v1"
			if provider == "anthropic" {
				base = srv.URL
			}
			c, err := hostllm.New(hostllm.Config{Provider: provider, BaseURL: base, Model: "m", APIKey: "k"})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := c.Complete(context.Background(), conversation); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
