package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/gcpause"
)

// Session serves the JSON protocol of docs/ABI.md §3–4 over one memory
// root. The wasm module holds one; native hosts and tests may hold many.
type Session struct {
	fs  host.FS
	log host.Logger
	eng *Engine
	// clock is the engine's clock unless "open" fixes the time; nil is the
	// system clock. Tests move it to expire continuations.
	clock host.Clock
	// embedder is the host's embedding model, given to every open.
	embedder host.Embedder
}

// NewSession returns a session on fs; the engine opens on the "open" call.
func NewSession(fs host.FS, log host.Logger) *Session {
	if log == nil {
		log = host.NopLogger{}
	}
	return &Session{fs: fs, log: log}
}

// SetEmbedder gives the engines this session opens the host's embedding
// model (docs/ABI.md §2.3); nil turns embeddings off from the next open.
func (s *Session) SetEmbedder(em host.Embedder) { s.embedder = em }

// Call handles one JSON request and returns one JSON response. It never
// panics: a bug inside the engine becomes an "internal" error response.
func (s *Session) Call(raw []byte) (out []byte) {
	var req request
	defer func() {
		if r := recover(); r != nil {
			s.log.Log("error", fmt.Sprintf("panic in %s: %v\n%s", req.Method, r, debug.Stack()))
			out = encode(response{ID: req.ID, Error: api.Errorf(api.CodeInternal, "%s: %v", req.Method, r)})
		}
	}()
	// The collector's pacing for what an open kept ends once its cycle
	// has run (gcpause.Pause).
	gcpause.Settle()
	if !utf8.Valid(raw) {
		return encode(response{Error: api.Errorf(api.CodeInvalidJSON, "request is not valid UTF-8")})
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return encode(response{Error: api.Errorf(api.CodeInvalidJSON, "request must be a JSON object")})
	}
	if err := json.Unmarshal(trimmed, &req); err != nil {
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
			return encode(response{Error: api.Errorf(api.CodeInvalidRequest, "request: field %q must be a JSON %s, not %s", te.Field, te.Type, te.Value)})
		}
		return encode(response{Error: api.Errorf(api.CodeInvalidJSON, "request: %v", err)})
	}
	result, err := s.dispatch(req)
	if err != nil {
		return encode(response{ID: req.ID, Error: asError(err)})
	}
	return encode(response{ID: req.ID, Result: result})
}

func encode(r response) []byte {
	if r.ID == nil {
		r.ID = json.RawMessage("null")
	}
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(response{ID: r.ID, Error: api.Errorf(api.CodeInternal, "encode response: %v", err)})
	}
	return b
}

// decodeParams unmarshals params strictly enough to catch wrong types while
// letting clients send fields this version does not know.
func decodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return api.Errorf(api.CodeInvalidParams, "params: %v", err)
	}
	return nil
}

func (s *Session) dispatch(req request) (any, error) {
	switch req.Method {
	case "open":
		return s.open(req.Params)
	case "merge":
		// A merge reads nothing of the root: it needs no open engine.
		var p api.MergeParams
		if err := decodeParams(req.Params, &p); err != nil {
			return nil, err
		}
		return Merge(p)
	}
	if _, known := methods[req.Method]; !known {
		return nil, api.Errorf(api.CodeUnknownMethod, "unknown method %q", req.Method)
	}
	if s.eng == nil {
		return nil, api.Errorf(api.CodeNotOpen, "%s: the engine is not open; call \"open\" first", req.Method)
	}
	return methods[req.Method](s, req.Params)
}

var methods = map[string]func(*Session, json.RawMessage) (any, error){
	"curate": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.CurateParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		if err := s.eng.Writable("curate"); err != nil {
			return nil, err
		}
		return s.eng.Curate(p), nil
	},
	"search": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.SearchParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.Search(p)
	},
	"query": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.QueryParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.QueryLLM(p)
	},
	"curateFrom": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.CurateFromParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.CurateFrom(p)
	},
	"resume": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.ResumeParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.Resume(p)
	},
	"cancel": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.CancelParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.Cancel(p)
	},
	"read": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.ReadParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.Read(p)
	},
	"tree": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.TreeParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.Tree(p)
	},
	"refresh": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.RefreshParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.Refresh(p)
	},
	"signals": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.SignalsParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.Signals(p)
	},
	"recent": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.RecentParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.Recent(p)
	},
	"context": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.ContextParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.Context(p)
	},
	"tidy": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.TidyParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.TidyLLM(p)
	},
	"status": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.StatusParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.Status(p)
	},
	"stats": func(s *Session, _ json.RawMessage) (any, error) {
		return s.eng.Stats(), nil
	},
	"flush": func(s *Session, _ json.RawMessage) (any, error) {
		return s.eng.Flush()
	},
	"ingest": func(s *Session, raw json.RawMessage) (any, error) {
		var p api.IngestParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		return s.eng.Ingest(p)
	},
	"close": func(s *Session, _ json.RawMessage) (any, error) {
		err := s.eng.Close()
		s.eng = nil
		if err != nil {
			return nil, err
		}
		return struct{}{}, nil
	},
}

func (s *Session) open(raw json.RawMessage) (any, error) {
	lc := api.DefaultLifecycleParams()
	p := api.OpenParams{Lifecycle: &lc} // fields the request leaves out keep these
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	opts := Options{FS: s.fs, Clock: s.clock, Logger: s.log, MaxFileBytes: p.MaxFileBytes, ReadOnly: p.ReadOnly, Embedder: s.embedder}
	if p.LLM != nil {
		if err := p.LLM.Validate(); err != nil {
			return nil, err
		}
		opts.LLM = *p.LLM
	}
	if p.Lifecycle != nil {
		if err := p.Lifecycle.Validate(); err != nil {
			return nil, err
		}
		opts.Lifecycle = &p.Lifecycle.LifecycleModel
		opts.FlushAfter = p.Lifecycle.FlushAfter
		opts.FlushInterval = -1
		if p.Lifecycle.FlushMinutes > 0 {
			opts.FlushInterval = time.Duration(p.Lifecycle.FlushMinutes * float64(time.Minute))
		}
	}
	if p.FixedTime != "" {
		t, err := time.Parse(time.RFC3339, p.FixedTime)
		if err != nil {
			return nil, api.Errorf(api.CodeInvalidParams, "fixedTime %q: want RFC 3339", p.FixedTime)
		}
		opts.Clock = host.FixedClock(t.UTC())
	}
	if s.eng != nil {
		if err := s.eng.Close(); err != nil {
			s.log.Log("warn", "reopen: "+err.Error())
		}
		s.eng = nil
	}
	eng, res, err := Open(opts)
	if err != nil {
		return nil, err
	}
	s.eng = eng
	return res, nil
}
