package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// Environment variables of the embedding model, read by LoadEmbeddings:
// the LLM's, with EMBED for LLM. A config file's "embeddings" object takes
// the keys of its "llm" object.
const (
	EnvEmbedProvider   = "ARBOR_EMBED_PROVIDER"
	EnvEmbedBaseURL    = "ARBOR_EMBED_BASE_URL"
	EnvEmbedModel      = "ARBOR_EMBED_MODEL"
	EnvEmbedAPIKey     = "ARBOR_EMBED_API_KEY"
	EnvEmbedTimeout    = "ARBOR_EMBED_TIMEOUT"
	EnvEmbedMaxRetries = "ARBOR_EMBED_MAX_RETRIES"
)

// Defaults of an embedding Config's zero fields. Shorter than a chat
// model's: a query waits on the question's vector, and an embedding that
// fails costs only ranking by BM25 alone.
const (
	DefaultEmbedTimeout    = 30 * time.Second
	DefaultEmbedMaxRetries = 1
)

var embedSection = section{"embeddings", EnvEmbedProvider, EnvEmbedBaseURL, EnvEmbedModel, EnvEmbedAPIKey, EnvEmbedTimeout, EnvEmbedMaxRetries, DefaultEmbedTimeout, DefaultEmbedMaxRetries}

// LoadEmbeddings reads the embedding model's configuration for the memory
// root as Load reads the LLM's: the "embeddings" object of the user's and
// the root's config files, then ARBOR_EMBED_* variables. It returns
// ErrNotConfigured when no layer names a provider (embeddings are off by
// default), or when ARBOR_EMBED_PROVIDER is "none". Only providers
// speaking the OpenAI API have an /embeddings endpoint.
func LoadEmbeddings(root string) (Config, error) {
	files := []string{UserConfigPath()}
	if root != "" {
		files = append(files, RootConfigPath(root))
	}
	return LoadEmbeddingsFrom(os.Getenv, files...)
}

// LoadEmbeddingsFrom is LoadEmbeddings with the environment read through
// getenv and the given config files, lowest precedence first.
func LoadEmbeddingsFrom(getenv func(string) string, files ...string) (Config, error) {
	return loadSection(embedSection, getenv, files)
}

// Embedder embeds texts with an OpenAI-compatible /embeddings endpoint,
// with the retries, backoff and error codes of Client. It is the Go host's
// embedding model (host/runtime.WithEmbedder) and a core/host.Embedder for
// a native engine. Safe for concurrent use.
type Embedder struct {
	c *Client
}

// NewEmbedder returns an embedder for cfg (a Config from LoadEmbeddings,
// or one made by hand), whose missing fields take the provider's and the
// embedding defaults.
func NewEmbedder(cfg Config, opts ...Option) (*Embedder, error) {
	if err := cfg.validate(embedSection); err != nil {
		return nil, err
	}
	c, err := New(cfg.withDefaults(embedSection), opts...)
	if err != nil {
		return nil, err
	}
	return &Embedder{c: c}, nil
}

// Config returns the embedder's configuration, defaults filled in.
func (e *Embedder) Config() Config { return e.c.cfg }

// EmbedModel names the model.
func (e *Embedder) EmbedModel() string { return e.c.cfg.Model }

// Embed is EmbedContext without a deadline of the caller's.
func (e *Embedder) Embed(texts []string) ([][]float64, error) {
	return e.EmbedContext(context.Background(), texts)
}

// EmbedContext returns one vector per text, in order. Its errors are
// *host.EmbedError values with the codes of Error (timeout, rate_limit,
// auth, http, invalid, cancelled): an answer that is not the endpoint's
// JSON, holds another number of vectors, or vectors of different lengths
// or that are not numbers, is invalid.
func (e *Embedder) EmbedContext(ctx context.Context, texts []string) ([][]float64, error) {
	if len(texts) == 0 {
		return [][]float64{}, nil
	}
	body, err := json.Marshal(struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{e.c.cfg.Model, texts})
	if err != nil {
		return nil, &host.EmbedError{Code: api.LLMInvalid, Message: "encode the request: " + err.Error()}
	}
	var out [][]float64
	if err := e.c.retrying(ctx, func() (*Error, time.Duration) {
		data, status, ferr, after := e.c.post(ctx, e.c.cfg.BaseURL+"/embeddings", body)
		if ferr != nil {
			return ferr, after
		}
		vecs, err := decodeEmbeddings(data, len(texts))
		if err != nil {
			return &Error{Code: api.LLMInvalid, Status: status, Message: err.Error() + ": " + snippet(data)}, -1
		}
		out = vecs
		return nil, -1
	}); err != nil {
		code, msg := api.LLMHTTP, err.Error()
		if fe, ok := err.(*Error); ok {
			code = fe.Code
		}
		return nil, &host.EmbedError{Code: code, Message: msg}
	}
	return out, nil
}

// decodeEmbeddings reads an /embeddings answer: data[i].embedding for
// every index 0…n−1, all of one length, finite.
func decodeEmbeddings(data []byte, n int) ([][]float64, error) {
	var r struct {
		Data []struct {
			Index     *int      `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("the answer is not an embeddings list: %v", err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("%d vectors for %d texts", len(r.Data), n)
	}
	out := make([][]float64, n)
	for i, d := range r.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= n || out[at] != nil {
			return nil, fmt.Errorf("vector %d has index %d", i, at)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != len(r.Data[0].Embedding) {
			return nil, fmt.Errorf("vector %d has %d dimensions, vector 0 %d", i, len(d.Embedding), len(r.Data[0].Embedding))
		}
		for _, x := range d.Embedding {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("vector %d holds %v", i, x)
			}
		}
		out[at] = d.Embedding
	}
	return out, nil
}
