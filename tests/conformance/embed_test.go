package conformance

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/host"
	hostllm "github.com/arbormem/arbor/host/llm"
	"github.com/arbormem/arbor/host/llm/llmtest"
	"github.com/arbormem/arbor/host/runtime"
)

// The embeddings fixture (testdata/embed-fixture.json) gives the same
// responses and files natively with host.HashEmbedder, under wazero with
// the Go host's embedding client talking to the scripted server (which
// answers the same hashed vectors), and in Node (embed.test.mjs): the
// vectors, their fusion with BM25 and .arbor/vectors.bin are the same in
// every host.

// TestEmbedNative runs the fixture natively; with -update it writes
// testdata/embed-expected.json.
func TestEmbedNative(t *testing.T) {
	runNative(t, loadNamed(t, "embed-fixture.json"), host.HashEmbedder{}, "embed-expected.json")
}

// TestEmbedWazero runs the fixture through dist/arbor.wasm in the Go host,
// its embed import served by host/llm's Embedder against the scripted
// server.
func TestEmbedWazero(t *testing.T) {
	f := loadNamed(t, "embed-fixture.json")
	dir := t.TempDir()
	if err := CopyTree(filepath.Join(repoRoot, f.Tree), dir); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(nil)
	defer srv.Close()
	em, err := hostllm.NewEmbedder(hostllm.Config{Provider: "openai-compatible", BaseURL: srv.URL + "/v1", Model: "hashed-bow"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng, err := runtime.New(ctx, dir, runtime.WithEmbedder(em))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(ctx)
	got := run(t, f, func(req []byte) ([]byte, error) { return eng.Call(ctx, req) }, func() map[string]string {
		m, err := DigestDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
	compareWith(t, "embed-expected.json", "wazero", got)
	if len(srv.Requests()) == 0 {
		t.Fatal("the scripted server was never asked")
	}
}

// TestEmbedWazeroFallsBack: an endpoint answering garbage, vectors of the
// wrong dimension or errors gives a warning and BM25's answer under wazero;
// neither the write nor the query fails.
func TestEmbedWazeroFallsBack(t *testing.T) {
	f := loadNamed(t, "embed-fixture.json")
	ctx := context.Background()
	question := []byte(`{"id":1,"method":"query","params":{"query":"who is paged when a payment fails"}}`)
	answer := func(t *testing.T, opts ...runtime.Option) (map[string]any, []string) {
		dir := t.TempDir()
		if err := CopyTree(filepath.Join(repoRoot, f.Tree), dir); err != nil {
			t.Fatal(err)
		}
		var warns []string
		opts = append(opts, runtime.WithLogger(func(level int, msg string) {
			if level == runtime.LevelWarn {
				warns = append(warns, msg)
			}
		}))
		eng, err := runtime.New(ctx, dir, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close(ctx)
		if _, err := eng.Call(ctx, []byte(`{"id":0,"method":"open","params":{"fixedTime":"2026-03-01T00:00:00Z"}}`)); err != nil {
			t.Fatal(err)
		}
		resp, err := eng.Call(ctx, question)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(resp, &r); err != nil || r.Result == nil {
			t.Fatalf("query: %s", resp)
		}
		delete(r.Result, "tookMs")
		return r.Result, warns
	}
	plain, _ := answer(t)

	garbage := "{\"data\": \"no\"}"
	cases := []struct {
		name string
		step llmtest.Step
		warn string
	}{
		{"garbage", llmtest.Step{Raw: &garbage}, "the answer is not an embeddings list"},
		{"wrong dimension", llmtest.Step{Dims: 32}, "a vector of 32 dimensions where the stored ones have 64"},
		{"server error", llmtest.Step{Status: 500, Message: "upstream failed"}, "HTTP 500: upstream failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(nil)
			defer srv.Close()
			// The open embeds the tree (one batch); the question gets the step.
			srv.PushEmbed(llmtest.Step{}, c.step, c.step)
			em, err := hostllm.NewEmbedder(hostllm.Config{Provider: "openai-compatible", BaseURL: srv.URL + "/v1", Model: "hashed-bow", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			got, warns := answer(t, runtime.WithEmbedder(em))
			reason := got["reason"].(string)
			if !strings.Contains(reason, "embeddings: the question could not be embedded") || !strings.Contains(reason, "ranked by BM25 alone") {
				t.Fatalf("reason %q", reason)
			}
			got["reason"] = strings.SplitN(reason, "; embeddings:", 2)[0]
			if !reflect.DeepEqual(got, plain) {
				t.Fatalf("fallback %v\nBM25 alone %v", got, plain)
			}
			if !slices.ContainsFunc(warns, func(w string) bool { return strings.Contains(w, c.warn) }) {
				t.Fatalf("no warning %q in %q", c.warn, warns)
			}
		})
	}
}
