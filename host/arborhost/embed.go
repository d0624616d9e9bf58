package arborhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/arbormem/arbor/core/host"
)

// Embedder is the host's embedding model behind the embed import
// (docs/ABI.md §2.3): host/llm's Embedder, or a test's.
type Embedder interface {
	// EmbedModel names the model; "" turns embeddings off.
	EmbedModel() string
	// EmbedContext returns one vector per text. Its errors should be
	// *host.EmbedError, whose code and message reach the engine.
	EmbedContext(ctx context.Context, texts []string) ([][]float64, error)
}

// embedImport answers embed(req_ptr, req_len, buf_ptr, buf_cap) -> i32.
// An answer larger than the guest's buffer is kept for the guest's next
// call with the same request, so that the model is not asked twice.
type embedImport struct {
	em   Embedder
	mu   sync.Mutex
	req  []byte
	kept []byte
}

func (e *embedImport) call(ctx context.Context, mem Memory, reqPtr, reqLen, bufPtr, bufCap uint32) int32 {
	if e.em == nil || e.em.EmbedModel() == "" {
		return codeUnavailable
	}
	req, ok := mem.Read(reqPtr, reqLen)
	if !ok || !bufferOK(mem, bufPtr, bufCap) {
		return codeInvalid
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.kept != nil && bytes.Equal(req, e.req) {
		out := e.kept
		if uint64(len(out)) <= uint64(bufCap) {
			e.kept, e.req = nil, nil
		}
		return sized(mem, out, bufPtr, bufCap)
	}
	e.kept, e.req = nil, nil
	var in struct {
		Input []string `json:"input"`
	}
	if err := json.Unmarshal(req, &in); err != nil || in.Input == nil {
		return codeInvalid
	}
	out := e.answer(ctx, in.Input)
	if len(out) > math.MaxInt32 {
		return codeInvalid
	}
	if uint64(len(out)) > uint64(bufCap) {
		e.req, e.kept = bytes.Clone(req), out
	}
	return sized(mem, out, bufPtr, bufCap)
}

// answer is the import's JSON answer for texts: the model and the
// vectors, or the error of the model call.
func (e *embedImport) answer(ctx context.Context, texts []string) []byte {
	type errBody struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	var (
		vecs [][]float64
		err  error
	)
	if len(texts) > 0 {
		vecs, err = e.em.EmbedContext(ctx, texts)
	}
	if err != nil {
		var ee *host.EmbedError
		if !errors.As(err, &ee) {
			ee = &host.EmbedError{Code: "http", Message: err.Error()}
		}
		out, _ := json.Marshal(map[string]errBody{"error": {ee.Code, ee.Message}})
		return out
	}
	if vecs == nil {
		vecs = [][]float64{}
	}
	out, merr := json.Marshal(map[string]any{"model": e.em.EmbedModel(), "data": vecs})
	if merr != nil { // NaN or infinity, which JSON cannot hold
		out, _ = json.Marshal(map[string]errBody{"error": {"invalid", fmt.Sprintf("the model answered a vector JSON cannot hold: %v", merr)}})
	}
	return out
}
