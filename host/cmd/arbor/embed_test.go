package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	hostllm "github.com/arbormem/arbor/host/llm"
	"github.com/arbormem/arbor/host/llm/llmtest"
)

// embedRoot copies the embeddings fixture tree into a new memory root and
// points the environment's embedding configuration at a scripted server.
func embedRoot(t *testing.T) (string, *llmtest.Server) {
	t.Helper()
	needEngine(t)
	noLLMConfig(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "..", "tests", "embed", "tree"))); err != nil {
		t.Fatal(err)
	}
	must(t, "", "init", dir)
	srv := llmtest.New(nil)
	t.Cleanup(srv.Close)
	t.Setenv(hostllm.EnvEmbedProvider, "openai-compatible")
	t.Setenv(hostllm.EnvEmbedBaseURL, srv.URL+"/v1")
	t.Setenv(hostllm.EnvEmbedModel, "hashed-bow")
	t.Setenv(hostllm.EnvEmbedAPIKey, "sk-embed")
	t.Setenv(hostllm.EnvEmbedTimeout, "")
	t.Setenv(hostllm.EnvEmbedMaxRetries, "")
	t.Setenv("ARBOR_NO_SERVE", "1")
	return dir, srv
}

func TestEmbedConfiguredByTheEnvironment(t *testing.T) {
	dir, srv := embedRoot(t)
	srv.RequireKey("sk-embed")
	out := must(t, "", "--root", dir, "--fixed-time", "2026-03-01T00:00:00Z", "--json", "query", "--no-llm", "who is paged when a payment fails")
	if !strings.Contains(out, "embeddings: the 3 best matches fused with the 6 files nearest the question by meaning (model hashed-bow)") {
		t.Fatalf("query without fusion:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".arbor", "vectors.bin")); err != nil {
		t.Fatalf("vectors not saved: %v", err)
	}
	n := len(srv.Requests())
	// Turned off, nothing is asked and the answer is BM25's.
	t.Setenv(hostllm.EnvEmbedProvider, "none")
	out = must(t, "", "--root", dir, "--fixed-time", "2026-03-01T00:00:00Z", "--json", "query", "--no-llm", "who is paged when a payment fails")
	if strings.Contains(out, "embeddings") || len(srv.Requests()) != n {
		t.Fatalf("embeddings off still used them:\n%s", out)
	}
	// A provider without an embeddings API is refused with the reason.
	t.Setenv(hostllm.EnvEmbedProvider, "anthropic")
	t.Setenv("ANTHROPIC_API_KEY", "k")
	r := arbor(t, "", "--root", dir, "query", "--no-llm", "payment")
	if r.code == 0 || !strings.Contains(r.stderr, "embedding configuration: embedding provider anthropic has no /embeddings endpoint") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

func TestEmbedFailureIsAWarningNotAnError(t *testing.T) {
	dir, srv := embedRoot(t)
	t.Setenv(hostllm.EnvEmbedMaxRetries, "0")
	for range 4 {
		srv.PushEmbed(llmtest.Step{Status: 500, Message: "model not loaded"})
	}
	must(t, "", "--root", dir, "add", "--path", "ops/notes", "--title", "Backups", "--narrative", "Backups run nightly at 02:00.", "--reason", "test")
	// No file has a vector: the question is answered by BM25, and the
	// failed embedding is a warning on stderr.
	r := arbor(t, "", "--root", dir, "--json", "query", "--no-llm", "when do backups run")
	if r.code != 0 || !strings.Contains(r.stdout, "ops/notes/backups.md") ||
		!strings.Contains(r.stderr, "embeddings: model hashed-bow: http: openai-compatible: HTTP 500: model not loaded; 9 files left without a vector are searched by BM25 alone") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
