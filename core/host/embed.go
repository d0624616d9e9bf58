package host

import (
	"hash/fnv"
	"strings"
	"unicode"
)

// Embedder is a host that can turn texts into vectors with an embedding
// model (the embed import of docs/ABI.md §2.3). It is optional: an engine
// without one, or whose Embedder names no model, ranks by BM25 alone.
type Embedder interface {
	// EmbedModel names the model the host embeds with, as the host's
	// configuration spells it; "" when the host has none (embeddings off).
	// The engine keeps it with the vectors it stores: another name makes
	// them stale.
	EmbedModel() string
	// Embed returns one vector per text, in order. An error that is an
	// *EmbedError says what failed; the engine then ranks by BM25 alone.
	Embed(texts []string) ([][]float64, error)
}

// EmbedError is a failed embedding call, with the codes of the model
// calls (docs/ABI.md §6.2: timeout, rate_limit, auth, http, invalid,
// cancelled).
type EmbedError struct {
	Code    string
	Message string
}

func (e *EmbedError) Error() string { return e.Code + ": " + e.Message }

// HashEmbedder is a deterministic Embedder for tests and fixtures, with no
// model behind it: a text's vector is its bag of words hashed into Dims
// buckets (each word, lower-cased, adds ±1 to the bucket of its FNV-1a
// hash, the sign from the hash's top bit). Texts sharing words point the
// same way. The scripted servers of host/llm/llmtest and
// tests/llm/scripted-server.mjs answer /embeddings with the same vectors,
// so that a fixture ranks alike natively, under wazero and in Node.
type HashEmbedder struct {
	Model string // "" gives "hashed-bow"
	Dims  int    // 0 gives 64
}

// EmbedModel returns the model's name.
func (h HashEmbedder) EmbedModel() string {
	if h.Model == "" {
		return "hashed-bow"
	}
	return h.Model
}

// Embed returns the hashed bag of words of each text.
func (h HashEmbedder) Embed(texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i, t := range texts {
		out[i] = HashedWords(t, h.Dims)
	}
	return out, nil
}

// HashedWords is HashEmbedder's vector of text in dims buckets (64 when
// dims ≤ 0). Words are runs of letters and digits.
func HashedWords(text string, dims int) []float64 {
	if dims <= 0 {
		dims = 64
	}
	v := make([]float64, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		f := fnv.New32a()
		f.Write([]byte(w))
		s := f.Sum32()
		if s>>31 == 1 {
			v[s%uint32(dims)]--
		} else {
			v[s%uint32(dims)]++
		}
	}
	return v
}
