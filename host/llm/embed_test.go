package llm

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/host/llm/llmtest"
)

func testEmbedder(t *testing.T, srv *llmtest.Server) *Embedder {
	t.Helper()
	em, err := NewEmbedder(Config{Provider: "openai-compatible", BaseURL: srv.URL + "/v1", Model: "hashed-bow", MaxRetries: 1},
		WithSleep(func(context.Context, time.Duration) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	return em
}

func TestEmbedderAnswersAndFailures(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	em := testEmbedder(t, srv)
	got, err := em.Embed([]string{"Failed invoices are retried", "the car"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, [][]float64{host.HashedWords("Failed invoices are retried", 64), host.HashedWords("the car", 64)}) {
		t.Fatal("the vectors differ from the hashed words the server answers")
	}
	var body struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	reqs := srv.Requests()
	if err := reqs[0].Decode(&body); err != nil || body.Model != "hashed-bow" || len(body.Input) != 2 || reqs[0].Path != "/v1/embeddings" {
		t.Fatalf("request %s %s", reqs[0].Path, reqs[0].Body)
	}

	garbage := "<html>bad gateway</html>"
	wrongCount := `{"data":[{"index":0,"embedding":[1,2]}]}`
	ragged := `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`
	cases := []struct {
		name  string
		steps []llmtest.Step
		code  string
		msg   string
	}{
		{"garbage", []llmtest.Step{{Raw: &garbage}}, "invalid", "the answer is not an embeddings list"},
		{"wrong count", []llmtest.Step{{Raw: &wrongCount}}, "invalid", "1 vectors for 2 texts"},
		{"ragged", []llmtest.Step{{Raw: &ragged}}, "invalid", "vector 1 has 1 dimensions, vector 0 2"},
		{"auth", []llmtest.Step{{Status: 401, Message: "bad key"}}, "auth", "the API key was refused"},
		{"server errors", []llmtest.Step{{Status: 500}, {Status: 503}}, "http", "after 2 attempts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv.PushEmbed(c.steps...)
			_, err := em.Embed([]string{"a", "b"})
			var ee *host.EmbedError
			if !errors.As(err, &ee) || ee.Code != c.code || !strings.Contains(ee.Message, c.msg) {
				t.Fatalf("error %v, want %s: …%s…", err, c.code, c.msg)
			}
		})
	}
	// A 500 then an answer: retried once, and answered.
	srv.PushEmbed(llmtest.Step{Status: 500})
	if _, err := em.Embed([]string{"a"}); err != nil {
		t.Fatalf("a retried 500: %v", err)
	}
}

func TestEmbedderTimeout(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	em, err := NewEmbedder(Config{Provider: "openai-compatible", BaseURL: srv.URL + "/v1", Model: "m", Timeout: 50 * time.Millisecond, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv.PushEmbed(llmtest.Step{DelayMs: 5000})
	_, err = em.Embed([]string{"a"})
	var ee *host.EmbedError
	if !errors.As(err, &ee) || ee.Code != "timeout" {
		t.Fatalf("error %v, want a timeout", err)
	}
}

func TestLoadEmbeddings(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if _, err := LoadEmbeddingsFrom(env(map[string]string{EnvProvider: "openai", EnvModel: "gpt", "OPENAI_API_KEY": "k"})); !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("an LLM configuration turned embeddings on: %v", err)
	}
	cfg, err := LoadEmbeddingsFrom(env(map[string]string{EnvEmbedProvider: "ollama", EnvEmbedModel: "nomic-embed-text"}))
	if err != nil || cfg.BaseURL != "http://localhost:11434/v1" || cfg.Timeout != DefaultEmbedTimeout || cfg.MaxRetries != DefaultEmbedMaxRetries {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	if _, err := LoadEmbeddingsFrom(env(map[string]string{EnvEmbedProvider: "anthropic", EnvEmbedModel: "x", "ANTHROPIC_API_KEY": "k"})); err == nil || !strings.Contains(err.Error(), "has no /embeddings endpoint") {
		t.Fatalf("anthropic: %v", err)
	}
	if _, err := LoadEmbeddingsFrom(env(map[string]string{EnvEmbedProvider: "openai-compatible", EnvEmbedModel: "x"})); err == nil || !strings.Contains(err.Error(), "ARBOR_EMBED_BASE_URL") {
		t.Fatalf("no base URL: %v", err)
	}
}
