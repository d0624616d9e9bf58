package mcp

import (
	"context"
	"strings"
	"sync"

	"github.com/arbormem/arbor/core/api"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bases remembers, for each session, the version of every entry its
// client read (arbor-read) or wrote (arbor-curate, arbor-move), and gives
// it as the base of the client's next operation on that entry when the
// operation names none (docs/ABI.md §4.2). The engine's own check compares
// the disk with what the engine last read, and this server, watching the
// tree, reads a person's edit before the agent's next call: without the
// version the agent read, an UPDATE written from it would replace the edit
// it never saw. Versions are kept per session, not per server: over HTTP
// several agents share the server, and what one read says nothing of what
// another saw.
type bases struct {
	mu sync.Mutex
	by map[*sdk.ServerSession]map[string]string
}

// maxBases bounds the versions kept for one session; past it one is
// forgotten, whichever the map gives first (its operations fall back to
// the engine's own check, which is safe, only less precise).
const maxBases = 4096

type sessionKey struct{}

// withSession returns ctx carrying the session a call came from.
func withSession(ctx context.Context, ss *sdk.ServerSession) context.Context {
	if ss == nil {
		return ctx
	}
	return context.WithValue(ctx, sessionKey{}, ss)
}

func sessionOf(ctx context.Context) *sdk.ServerSession {
	ss, _ := ctx.Value(sessionKey{}).(*sdk.ServerSession)
	return ss
}

// note records that the session's client holds version v of the entry at
// p ("" forgets it: the entry is gone).
func (b *bases) note(ss *sdk.ServerSession, p, v string) {
	if ss == nil || p == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.by[ss]
	if !ok {
		if v == "" {
			return
		}
		if b.by == nil {
			b.by = map[*sdk.ServerSession]map[string]string{}
		}
		m = map[string]string{}
		b.by[ss] = m
		go func() { // forget the session when it ends
			_ = ss.Wait()
			b.mu.Lock()
			delete(b.by, ss)
			b.mu.Unlock()
		}()
	}
	if v == "" {
		delete(m, p)
		return
	}
	if _, known := m[p]; !known && len(m) >= maxBases {
		for old := range m {
			delete(m, old)
			break
		}
	}
	m[p] = v
}

// fill returns the operations with the base, and a MERGE's targetBase, of
// each entry the session's client read, where the operation names none.
func (b *bases) fill(ss *sdk.ServerSession, ops []api.Operation) []api.Operation {
	if ss == nil {
		return ops
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.by[ss]
	if len(m) == 0 {
		return ops
	}
	out := make([]api.Operation, len(ops))
	for i, op := range ops {
		out[i] = op
		typ := strings.ToUpper(strings.TrimSpace(op.Type))
		if typ == api.OpAdd {
			continue
		}
		if op.Base == "" {
			out[i].Base = m[namedEntry(op.Path)]
		}
		if typ == api.OpMerge && op.TargetBase == "" {
			out[i].TargetBase = m[namedEntry(op.MergeTarget)]
		}
	}
	return out
}

// wrote records what a curate call the session made left: the version of
// each entry written, an entry deleted or merged away forgotten, a moved
// one under its new path.
func (b *bases) wrote(ss *sdk.ServerSession, ops []api.Operation, res api.CurateResult) {
	for i, a := range res.Applied {
		if a.Status != api.StatusSuccess || i >= len(ops) {
			continue
		}
		switch a.Type {
		case api.OpDelete:
			b.note(ss, a.Path, "")
		case api.OpMerge:
			b.note(ss, a.Path, "")
			b.note(ss, namedEntry(ops[i].MergeTarget), a.Version)
		case api.OpMove:
			if v := b.version(ss, a.Path); v != "" && strings.HasSuffix(a.To, ".md") {
				b.note(ss, a.To, v)
			}
			b.note(ss, a.Path, "")
		default:
			b.note(ss, a.Path, a.Version)
		}
	}
}

func (b *bases) version(ss *sdk.ServerSession, p string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.by[ss][p]
}

// namedEntry is p cleaned as the engine cleans paths, when it names an
// entry file; "" otherwise (a folder and a title, a bad path).
func namedEntry(p string) string {
	clean, err := api.CleanPath(strings.TrimSpace(p))
	if err != nil || !strings.HasSuffix(clean, ".md") {
		return ""
	}
	return clean
}
