package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/gitsync"
	"github.com/arbormem/arbor/host/runtime"
)

var syncCommand = &command{
	name:    "sync",
	summary: "share the tree through git: commit, fetch, merge entry by entry, push",
	help: "Syncs the memory root with a git remote, without a git binary (go-git): commits\n" +
		"the root's changes (the message lists the operations audited since the last\n" +
		"sync), fetches the branch, merges it, and pushes. An entry both sides changed is\n" +
		"merged as an entry (front matter by rule, facts by statement, text three-way);\n" +
		"what both changed differently is kept twice in the entry, in a \"## Merge\n" +
		"Conflict\" section that doctor lists and an UPDATE of the entry resolves. A\n" +
		"change beats a delete. .arbor/ is never committed. The first sync makes the root\n" +
		"a git repository and remembers --remote as its origin. Afterwards the engine\n" +
		"reads and re-indexes only the files the sync changed.\n" +
		"Authentication: HTTPS takes a token from $ARBOR_GIT_TOKEN; SSH the agent at\n" +
		"$SSH_AUTH_SOCK or the key in $ARBOR_SSH_KEY (else ~/.ssh/id_ed25519). See\n" +
		"docs/sync.md.",
	example: "arbor sync --remote git@github.com:acme/team-memory.git",
	examples: []string{"arbor sync", "arbor sync --status",
		"ARBOR_GIT_TOKEN=… arbor sync --remote https://github.com/acme/team-memory.git --branch main"},
	complete: "none",
	setup: func(fs *flag.FlagSet) func(*app, []string) error {
		remote := fs.String("remote", "", "the remote's `URL` (SSH, HTTPS or a path); remembered as the root's origin")
		branch := fs.String("branch", "", "the `BRANCH` to sync (default: the root's current branch, else main)")
		status := fs.Bool("status", false, "show ahead/behind and the changes not synced yet, and sync nothing")
		offline := fs.Bool("offline", false, "with --status: compare with the remote as last fetched, without the network")
		return func(a *app, _ []string) error {
			root, err := a.findRoot()
			if err != nil {
				return err
			}
			opts := gitsync.Options{Remote: *remote, Branch: *branch}
			if *status {
				st, err := gitsync.GetStatus(a.ctx, root, opts, !*offline)
				if err != nil {
					return err
				}
				if a.json {
					return printJSON(a.stdout, mustJSON(st))
				}
				printSyncStatus(a.stdout, a.p, st)
				return nil
			}
			eng, err := runtime.New(a.ctx, root, runtime.WithStderr(a.stderr))
			if err != nil {
				return err
			}
			defer eng.Close(a.ctx)
			rep, err := gitsync.Sync(a.ctx, root, eng, opts)
			if err != nil {
				return err
			}
			// The engine reads again only what the sync changed (the
			// catalog's stamp walk), which the open's index counts show.
			open, err := a.openEngine(eng)
			if err != nil {
				return fmt.Errorf("open %s after the sync: %w", root, err)
			}
			out := syncReport{Report: rep, Index: open.Index}
			if a.json {
				return printJSON(a.stdout, mustJSON(out))
			}
			printSync(a.stdout, a.p, out)
			return nil
		}
	},
}

// syncReport is the sync and how the engine's index caught up with it.
type syncReport struct {
	gitsync.Report
	Index api.IndexStats `json:"index"`
}

func printSync(w io.Writer, p palette, r syncReport) {
	if r.Committed != "" {
		fmt.Fprintf(w, "committed the root's changes (%d audited operations) as %s\n", r.Operations, short(r.Committed))
	}
	switch r.Merge {
	case "initial":
		fmt.Fprintf(w, "the remote had no branch %s: it starts from this root\n", r.Branch)
	case "none":
		fmt.Fprintf(w, "nothing new on %s\n", r.Remote)
	case "fast-forward":
		fmt.Fprintf(w, "fast-forwarded to %s/%s: %d files changed\n", gitsync.RemoteName, r.Branch, len(r.Changed))
	case "merge":
		fmt.Fprintf(w, "merged %s/%s as %s: %d files changed\n", gitsync.RemoteName, r.Branch, short(r.Merged), len(r.Changed))
	}
	for _, f := range r.Files {
		line := fmt.Sprintf("  %-11s %s", f.Status, f.Path)
		if f.Status == api.MergeConflict {
			line = p.yellow(line)
		}
		fmt.Fprintln(w, line)
		if f.Message != "" {
			fmt.Fprintf(w, "              %s\n", p.dim(f.Message))
		}
	}
	fmt.Fprintf(w, "pushed %s to %s (%s): %d commits sent, %d brought in\n", r.Branch, r.Remote, short(r.Head), r.Ahead, r.Behind)
	fmt.Fprintf(w, "index: %d files re-read, %d reused, %d removed\n", r.Index.Indexed, r.Index.Reused, r.Index.Removed)
	if n := len(r.Conflicts); n > 0 {
		fmt.Fprintln(w, p.yellow(fmt.Sprintf("%d files hold both versions in a \"## Merge Conflict\" section: resolve each with an UPDATE of the entry (arbor doctor lists them)", n)))
	}
}

func printSyncStatus(w io.Writer, p palette, st gitsync.Status) {
	remote := st.Remote
	if remote == "" {
		remote = "(no remote yet: arbor sync --remote URL)"
	}
	when := "as last fetched"
	if st.Fetched {
		when = "just fetched"
	}
	fmt.Fprintf(w, "branch %s, remote %s\n", st.Branch, remote)
	fmt.Fprintf(w, "%d commits ahead, %d behind (%s)\n", st.Ahead, st.Behind, when)
	last := st.LastSync
	if last == "" {
		last = "never"
	}
	fmt.Fprintf(w, "last sync: %s; %d operations audited since\n", last, st.Operations)
	if len(st.Unsynced) == 0 {
		fmt.Fprintln(w, "no unsynced changes")
		return
	}
	fmt.Fprintf(w, "%d files changed since the last commit:\n", len(st.Unsynced))
	for _, f := range st.Unsynced {
		fmt.Fprintf(w, "  %s\n", p.dim(f))
	}
}

func short(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}
