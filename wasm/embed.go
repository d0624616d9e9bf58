//go:build wasip1

package main

import (
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/arbormem/arbor/core/host"
)

//go:wasmimport arbor_host embed
func hostEmbedImport(req unsafe.Pointer, reqLen uint32, buf unsafe.Pointer, bufCap uint32) int32

// codeUnavailable is embed's answer when the host has no embedding model
// (docs/ABI.md §2.3).
const codeUnavailable = -7

// hostEmbedder is host.Embedder over the embed import.
type hostEmbedder struct{}

var _ host.Embedder = hostEmbedder{}

// embedAnswer is what the import answers: the vectors and the model, or
// the error of the host's model call.
type embedAnswer struct {
	Model string      `json:"model"`
	Data  [][]float64 `json:"data"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends texts to the import; ok is false when the host has no model.
func (hostEmbedder) call(texts []string) (embedAnswer, bool, error) {
	if texts == nil {
		texts = []string{}
	}
	req, err := json.Marshal(map[string][]string{"input": texts})
	if err != nil {
		return embedAnswer{}, true, &host.EmbedError{Code: "invalid", Message: err.Error()}
	}
	buf := make([]byte, 64<<10)
	for {
		n := hostEmbedImport(unsafe.Pointer(&req[0]), uint32(len(req)), unsafe.Pointer(&buf[0]), uint32(len(buf)))
		switch {
		case n == codeUnavailable:
			return embedAnswer{}, false, nil
		case n < 0:
			return embedAnswer{}, true, &host.EmbedError{Code: "invalid", Message: fmt.Sprintf("the host refused the request (code %d)", n)}
		case int(n) > len(buf):
			buf = make([]byte, n)
			continue
		}
		var a embedAnswer
		if err := json.Unmarshal(buf[:n], &a); err != nil {
			return embedAnswer{}, true, &host.EmbedError{Code: "invalid", Message: "the host's answer is not JSON: " + err.Error()}
		}
		if a.Error != nil {
			return embedAnswer{}, true, &host.EmbedError{Code: a.Error.Code, Message: a.Error.Message}
		}
		return a, true, nil
	}
}

// EmbedModel asks the host with no text: it names its model, or has none.
func (h hostEmbedder) EmbedModel() string {
	a, ok, err := h.call(nil)
	if !ok {
		return ""
	}
	if err != nil {
		hostLogger{}.Log("warn", "embeddings: the host's model cannot be named: "+err.Error()+"; embeddings are off")
		return ""
	}
	return a.Model
}

// Embed returns the host's vectors of texts.
func (h hostEmbedder) Embed(texts []string) ([][]float64, error) {
	a, ok, err := h.call(texts)
	if !ok {
		return nil, &host.EmbedError{Code: "unavailable", Message: "the host has no embedding model"}
	}
	if err != nil {
		return nil, err
	}
	return a.Data, nil
}
