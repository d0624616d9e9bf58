package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/gitsync"
)

// syncInput is the input of arbor-sync: none. The remote and the branch
// are the root's own (arbor sync --remote sets them), so that an agent
// cannot point a user's memory at a remote of its choosing.
type syncInput struct{}

// SyncResult is the output of arbor-sync: what the sync did, and what the
// server's engine read again afterwards.
type SyncResult struct {
	gitsync.Report
	// Index counts the files the engine read again after the sync (the
	// files it changed, docs/ABI.md §4.12): the sync's files and no others.
	Index api.RefreshResult `json:"index"`
}

const syncDescription = `Share the memory with the rest of the team through its git remote, now: commit what changed in the memory since the last sync (the commit message lists the operations audited since), fetch the remote branch, merge it entry by entry, and push. Call it only when the user asks to sync (or to share, publish or pull the team's memory): nothing syncs on its own, and a sync writes to the remote, which others see.

The remote and the branch are the memory's own: a user sets them once with "arbor sync --remote URL"; without one the call is an error that says so.

An entry both sides changed is merged as an entry (front matter by rule, facts by statement, text three-way); where both changed the same part differently, the entry keeps the local version and a "## Merge Conflict" section with both: resolve it with an arbor-curate UPDATE of the entry (after arbor-read), which removes the section. A change beats a delete.

The result: merge ("none": nothing new on the remote, "fast-forward", "merge", or "initial": the remote had no branch yet), behind (commits brought in), ahead (commits pushed), changed (the files the sync wrote, which every other tool already sees), files (the merge's result for each file both sides changed: status merged, kept, moved, deleted, regenerated, copied or conflict, with a message), conflicts (the entries to resolve), index (what the memory read again). Progress notifications say which step runs (commit, fetch, merge, push).`

// addSyncTool registers arbor-sync (a writable server only).
func addSyncTool(s *Server) {
	addTool(s, &sdk.Tool{Name: ToolSync, Title: "Sync with the team's git remote", Description: syncDescription,
		Annotations:  &sdk.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(true)},
		InputSchema:  inputSchema[syncInput](nil),
		OutputSchema: outputSchema[SyncResult]()},
		func(ctx context.Context, _ syncInput) (SyncResult, error) { return s.sync(ctx) })
}

// syncTimeout bounds a sync: the other clients' calls wait for it, and a
// remote that stops answering must not hold them for ever. A sync stopped
// at it leaves the root with its own changes committed (gitsync.Sync).
const syncTimeout = 10 * time.Minute

// sync runs in the engine's turn, so that no call of this server's
// clients reads or writes the tree halfway through the merge (the root's
// lock, which the sync holds while it writes, keeps other processes out).
// The engine merges (the same code as arbor sync); once the sync has let
// go of the lock, the engine reads again the files it changed, failed or
// not, so that the next call sees them without waiting for the watch.
func (s *Server) sync(ctx context.Context) (SyncResult, error) {
	sctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	rep, err := gitsync.Sync(sctx, s.eng.Root(), s.eng, gitsync.Options{
		Progress: func(st gitsync.Step) { step(ctx, st.Phase, st.Message) },
	})
	if errors.Is(err, gitsync.ErrNoRemote) {
		err = errors.New("the memory has no git remote yet: the user sets one once with arbor sync --remote URL in the memory root")
	}
	res := SyncResult{Report: rep}
	if len(rep.Changed) > 0 {
		step(ctx, "refresh", fmt.Sprintf("reading the %d files the sync changed", len(rep.Changed)))
		ref, rerr := s.eng.Refresh(ctx, api.RefreshParams{Paths: rep.Changed})
		if rerr != nil {
			err = errors.Join(err, fmt.Errorf("read the synced files: %w", rerr))
		}
		res.Index = ref
	}
	return res, err
}
