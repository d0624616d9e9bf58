package gitsync

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/host/arborhost"
	"github.com/arbormem/arbor/host/rootlock"
)

// maxRounds bounds how often a sync fetches and merges again when its push
// is refused because the remote moved on meanwhile.
const maxRounds = 3

// Sync commits the root's changes, fetches the branch from the remote,
// merges it and pushes. Syncs of one root take turns (.arbor/sync.lock);
// the root's own lock, which keeps engines from the tree, is held only
// while the sync commits and writes the merge, never during network time,
// so agents keep writing while a slow remote answers. What an engine
// writes between the commit and the merge is caught by the merge's
// compare-and-swap and committed by the next round. A sync that fails
// leaves the root as it was, or with its own changes committed; its
// report still lists the files it changed before it failed (Changed), for
// an engine to read again.
func Sync(ctx context.Context, root string, m Merger, o Options) (rep Report, err error) {
	// A remote given is tried before anything is made or remembered, so
	// that a wrong URL leaves the root as it was.
	if o.Remote != "" {
		if err := reachable(ctx, o.Remote, o.Auth); err != nil {
			return Report{}, err
		}
	}
	turn, err := rootlock.AcquireFile(ctx, root, syncLock)
	if err != nil {
		return Report{}, fmt.Errorf("gitsync: another sync of this root: %w", err)
	}
	defer turn.Release()
	g, err := open(root, o.Branch, o.Remote != "", o.Now)
	if err != nil {
		return Report{}, err
	}
	url, err := g.setRemote(o.Remote)
	if err != nil {
		return Report{}, err
	}
	auth := o.Auth
	if auth == nil {
		if auth, err = Auth(url); err != nil {
			return Report{}, err
		}
	}
	rep = Report{Branch: g.branch, Remote: redact(url), Changed: []string{}, Conflicts: []string{}}
	changed := map[string]bool{}
	defer func() {
		for p := range changed {
			rep.Changed = append(rep.Changed, p)
		}
		sort.Strings(rep.Changed)
	}()
	fsys, err := arborhost.NewRootFS(root)
	if err != nil {
		return rep, fmt.Errorf("gitsync: %w", err)
	}
	step := func(phase string, round int, format string, args ...any) {
		if o.Progress != nil {
			o.Progress(Step{Phase: phase, Round: round, Message: fmt.Sprintf(format, args...)})
		}
	}
	last := readState(root)
	// commit records the root's changes since the last commit: the first
	// call's are the sync's own commit; a later round's are what engines
	// wrote while this sync was on the network.
	commit := func() error {
		h, ops, err := g.commitLocal(last)
		if err != nil || h == "" {
			return err
		}
		if rep.Committed == "" {
			rep.Committed = h
		}
		rep.Operations += ops
		_, last.AuditBytes = auditSince(root, syncState{})
		return nil
	}
	step(PhaseCommit, 0, "committing the root's changes")
	if err := withRootLock(ctx, root, commit); err != nil {
		return rep, err
	}
	for round := 1; ; round++ {
		step(PhaseFetch, round, "fetching %s/%s from %s", RemoteName, g.branch, rep.Remote)
		found, err := g.fetch(ctx, auth)
		if err != nil {
			return rep, err
		}
		rep.Merge = "initial"
		err = withRootLock(ctx, root, func() error {
			if err := commit(); err != nil || !found {
				return err
			}
			step(PhaseMerge, round, "merging %s/%s", RemoteName, g.branch)
			n, err := g.notIn(g.remoteHead, g.head)
			if err != nil {
				return err
			}
			rep.Behind += n
			return g.integrate(ctx, fsys, m, &rep, changed)
		})
		if err != nil {
			return rep, err
		}
		if head, err := g.head(); err != nil || head == nil {
			if err == nil {
				err = errors.New("gitsync: nothing to push: the root has no files and the remote no branch " + g.branch)
			}
			return rep, err
		}
		if rep.Ahead, err = g.notIn(g.head, g.remoteHead); err != nil {
			return rep, err
		}
		step(PhasePush, round, "pushing %s to %s", g.branch, rep.Remote)
		err = g.push(ctx, auth)
		if errors.Is(err, errRejected) && round < maxRounds {
			continue
		}
		if err != nil {
			return rep, err
		}
		break
	}
	rep.Pushed = true
	head, _ := g.head()
	rep.Head = head.Hash.String()
	if err := writeState(root, syncState{LastSync: g.now().UTC(), Head: rep.Head, AuditBytes: last.AuditBytes}); err != nil {
		return rep, err
	}
	return rep, nil
}

// withRootLock runs f holding the root's lock, the one every engine takes
// around its writes.
func withRootLock(ctx context.Context, root string, f func() error) error {
	lock, err := rootlock.Acquire(ctx, root)
	if err != nil {
		return fmt.Errorf("gitsync: %w", err)
	}
	defer lock.Release()
	return f()
}

// reachable lists the remote at url, without remembering it anywhere: an
// empty repository is reachable.
func reachable(ctx context.Context, url string, auth transport.AuthMethod) error {
	if auth == nil {
		var err error
		if auth, err = Auth(url); err != nil {
			return err
		}
	}
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: RemoteName, URLs: []string{url}})
	if _, err := rem.ListContext(ctx, &git.ListOptions{Auth: auth}); err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return fmt.Errorf("gitsync: remote %s: %w", redact(url), err)
	}
	return nil
}

// integrate brings the fetched remote branch into the local one: nothing
// when the local one has it already, a fast-forward when it is behind, a
// merge commit when both moved on.
func (g *repo) integrate(ctx context.Context, fsys *arborhost.RootFS, m Merger, rep *Report, changed map[string]bool) error {
	local, err := g.head()
	if err != nil {
		return err
	}
	remote, err := g.remoteHead()
	if err != nil || remote == nil {
		return err
	}
	rep.Merge = "none"
	if local != nil && local.Hash == remote.Hash {
		return nil
	}
	var base *object.Commit
	if local != nil {
		bases, err := local.MergeBase(remote)
		if err != nil {
			return fmt.Errorf("gitsync: merge base: %w", err)
		}
		if len(bases) > 0 {
			base = bases[0]
		}
		if base != nil && base.Hash == remote.Hash {
			return nil // the remote's commits are all here already
		}
	}
	bt, err := treeOf(base)
	if err != nil {
		return err
	}
	lt, err := treeOf(local)
	if err != nil {
		return err
	}
	rt, err := treeOf(remote)
	if err != nil {
		return err
	}
	if local == nil || (base != nil && base.Hash == local.Hash) {
		rep.Merge = "fast-forward"
		paths, err := changes(lt, rt)
		if err != nil {
			return err
		}
		var ours, theirs []*[]byte
		for _, p := range paths {
			o, err := blob(lt, p)
			if err != nil {
				return err
			}
			t, err := blob(rt, p)
			if err != nil {
				return err
			}
			ours, theirs = append(ours, o), append(theirs, t)
		}
		if err := g.untrackedInTheWay(paths, ours, theirs); err != nil {
			return err
		}
		for i, p := range paths {
			if err := g.put(fsys, p, ours[i], theirs[i], changed); err != nil {
				return err
			}
		}
		if err := g.r.Storer.SetReference(plumbing.NewHashReference(g.localRef(), remote.Hash)); err != nil {
			return fmt.Errorf("gitsync: move %s: %w", g.branch, err)
		}
		if err := g.setHead(); err != nil {
			return err
		}
		if err := g.wt.Reset(&git.ResetOptions{Commit: remote.Hash, Mode: git.MixedReset}); err != nil {
			return fmt.Errorf("gitsync: index after the fast-forward: %w", err)
		}
		return nil
	}

	rep.Merge = "merge"
	ours, err := changes(bt, lt)
	if err != nil {
		return err
	}
	theirs, err := changes(bt, rt)
	if err != nil {
		return err
	}
	paths := append(ours, theirs...)
	slices.Sort(paths)
	paths = slices.Compact(paths)
	p := api.MergeParams{Ours: "local", Theirs: fmt.Sprintf("%s/%s %s", RemoteName, g.branch, remote.Hash.String()[:7])}
	if p.Taken, err = conflictCopies(paths, lt, rt); err != nil {
		return err
	}
	for _, path := range paths {
		f := api.MergeFile{Path: path}
		if f.Base, err = blob(bt, path); err != nil {
			return err
		}
		if f.Ours, err = blob(lt, path); err != nil {
			return err
		}
		if f.Theirs, err = blob(rt, path); err != nil {
			return err
		}
		p.Files = append(p.Files, f)
	}
	res, err := m.Merge(ctx, p)
	if err != nil {
		return fmt.Errorf("gitsync: merge: %w", err)
	}
	var names []string
	var merged []string
	var had, want []*[]byte
	for _, f := range res.Files {
		ours, err := blob(lt, f.Path)
		if err != nil {
			return err
		}
		merged, had, want = append(merged, f.Path), append(had, ours), append(want, f.Content)
	}
	if err := g.untrackedInTheWay(merged, had, want); err != nil {
		return err
	}
	for i, f := range res.Files {
		ours := had[i]
		if err := g.put(fsys, f.Path, ours, f.Content, changed); err != nil {
			return err
		}
		if !same(ours, f.Content) {
			if err := g.stage(f.Path, f.Content != nil); err != nil {
				return err
			}
		}
		if f.Status != api.MergeOurs {
			f.Content = nil
			rep.Files = append(rep.Files, f)
		}
		if f.Status == api.MergeConflict {
			rep.Conflicts = append(rep.Conflicts, f.Path)
		}
		if f.Status != api.MergeOurs && f.Status != api.MergeTheirs {
			names = append(names, fmt.Sprintf("- %s %s", f.Status, f.Path))
		}
	}
	msg := fmt.Sprintf("arbor sync: merge %s/%s (%d files, %d in conflict)", RemoteName, g.branch, len(res.Files), res.Conflicts)
	if len(names) > 0 {
		msg += "\n\n" + strings.Join(names, "\n")
	}
	h, err := g.wt.Commit(msg+"\n", &git.CommitOptions{Author: g.signature(), Parents: []plumbing.Hash{local.Hash, remote.Hash}, AllowEmptyCommits: true})
	if err != nil {
		return fmt.Errorf("gitsync: merge commit: %w", err)
	}
	rep.Merged = h.String()
	return nil
}

// conflictCopies lists the files of the trees named as conflict copies
// (".conflict" in the name), but for those given: the merge names a new
// copy after none of them (api.MergeParams.Taken).
func conflictCopies(given []string, trees ...*object.Tree) ([]string, error) {
	seen := map[string]bool{}
	for _, p := range given {
		seen[p] = true
	}
	var out []string
	for _, t := range trees {
		err := t.Files().ForEach(func(f *object.File) error {
			if strings.Contains(path.Base(f.Name), ".conflict") && !seen[f.Name] {
				seen[f.Name] = true
				out = append(out, f.Name)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("gitsync: list the trees: %w", err)
		}
	}
	return out, nil
}

// untrackedInTheWay refuses, before anything is written, to bring in
// files the local branch lacks where the root has one: files git ignores
// here (.git/info/exclude, the person's excludes file) that the other side
// tracks. As git does, the person moves them aside; nothing is
// overwritten.
func (g *repo) untrackedInTheWay(paths []string, had, want []*[]byte) error {
	var in []string
	for i, p := range paths {
		if had[i] == nil && want[i] != nil {
			if _, err := os.Lstat(rel(g.root, p)); err == nil {
				in = append(in, p)
			}
		}
	}
	if len(in) > 0 {
		return fmt.Errorf("gitsync: the remote has files that git ignores here and that the root holds; move them aside and sync again (nothing was changed): %s", strings.Join(in, ", "))
	}
	return nil
}

// stage puts the root's file at p in the index as it is now: present
// (exists) or removed. The index is updated for that path alone, without
// go-git's status of the whole tree.
func (g *repo) stage(p string, exists bool) error {
	var err error
	if exists {
		err = g.wt.AddWithOptions(&git.AddOptions{Path: p, SkipStatus: true})
	} else {
		_, err = g.wt.Remove(p)
	}
	if errors.Is(err, index.ErrEntryNotFound) {
		// The file is gone and its removal staged already: a sync killed
		// after staging it, before its commit (go-git's Add of a file
		// removed meanwhile stages its removal too).
		err = nil
	}
	if err != nil {
		return fmt.Errorf("gitsync: stage %s: %w", p, err)
	}
	return nil
}

// setHead points HEAD at the branch (a fresh repository's HEAD may name
// another).
func (g *repo) setHead() error {
	if err := g.r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, g.localRef())); err != nil {
		return fmt.Errorf("gitsync: HEAD: %w", err)
	}
	return nil
}

// put makes the root's file at p hold want (nil: no file), where it held
// had (nil: nothing) as last committed. Every change is a compare-and-swap
// on had: a file edited since the sync committed, or one git ignores here
// that the other side tracks, fails it rather than being overwritten or
// removed (an edit made during the merge is committed and merged by the
// next sync). Files of the tree are written through the root's confined
// file system; dot-files (.gitignore) are git's, outside the tree.
func (g *repo) put(fsys *arborhost.RootFS, p string, had, want *[]byte, changed map[string]bool) error {
	if same(had, want) {
		return nil
	}
	dot := strings.HasPrefix(p, ".") || strings.Contains(p, "/.")
	var err error
	if want == nil || dot {
		// RootFS.Swap checks just before its rename; a removal, and a
		// dot-file's write, check here, as close to the change.
		err = g.unchanged(fsys, p, dot, had, want == nil)
	}
	if err == nil {
		changed[p] = true
		switch {
		case want == nil && dot:
			if err = os.Remove(rel(g.root, p)); errors.Is(err, os.ErrNotExist) {
				err = nil
			}
		case want == nil:
			if err = fsys.Remove(p); errors.Is(err, host.ErrNotFound) {
				err = nil
			}
		case dot:
			err = writeFileAtomic(rel(g.root, p), *want)
		default:
			var old []byte
			if had != nil {
				old = *had
			}
			err = fsys.Swap(p, *want, old, had != nil)
		}
	}
	if errors.Is(err, host.ErrChanged) {
		return fmt.Errorf("gitsync: %s changed since the sync committed: left as it is, for the next sync to commit and merge: %w", p, err)
	}
	if err != nil {
		return fmt.Errorf("gitsync: write %s: %w", p, err)
	}
	if want == nil {
		// git keeps no folders: one a deletion empties goes too.
		for dir := filepath.Dir(rel(g.root, p)); dir != filepath.Clean(g.root); dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil {
				break // not empty
			}
		}
	}
	return nil
}

// unchanged checks that the root's file at p holds had (nil: that there is
// none; for a removal, none is fine too), else returns an error wrapping
// host.ErrChanged.
func (g *repo) unchanged(fsys *arborhost.RootFS, p string, dot bool, had *[]byte, removal bool) error {
	var now []byte
	var err error
	if dot {
		now, err = os.ReadFile(rel(g.root, p))
		if errors.Is(err, os.ErrNotExist) {
			err = host.ErrNotFound
		}
	} else {
		now, err = fsys.ReadFile(p)
	}
	switch {
	case errors.Is(err, host.ErrNotFound):
		if had == nil || removal {
			return nil
		}
		return fmt.Errorf("%s: removed: %w", p, host.ErrChanged)
	case err != nil:
		return fmt.Errorf("gitsync: read %s: %w", p, err)
	case had != nil && bytes.Equal(now, *had):
		return nil
	}
	return fmt.Errorf("%s: %w", p, host.ErrChanged)
}

func same(a, b *[]byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return bytes.Equal(*a, *b)
}

// syncState is .arbor/sync.json.
type syncState struct {
	LastSync time.Time `json:"lastSync"`
	Head     string    `json:"head"`
	// AuditBytes is the audit log's size at the sync: the operations of
	// the next commit's message are the lines after it.
	AuditBytes int64 `json:"auditBytes"`
}

func readState(root string) syncState {
	var s syncState
	if b, err := os.ReadFile(filepath.Join(root, stateFile)); err == nil {
		json.Unmarshal(b, &s)
	}
	return s
}

func writeState(root string, s syncState) error {
	b, _ := json.Marshal(s)
	if err := writeFileAtomic(filepath.Join(root, stateFile), append(b, '\n')); err != nil {
		return fmt.Errorf("gitsync: record the sync: %w", err)
	}
	return nil
}

// GetStatus says how the root stands against its remote: fetch first when
// fetch is set (it needs the network), else as of the last fetch.
func GetStatus(ctx context.Context, root string, o Options, fetch bool) (Status, error) {
	g, err := open(root, o.Branch, false, o.Now)
	if err != nil {
		return Status{}, err
	}
	st := Status{Branch: g.branch, Unsynced: []string{}}
	if rem, err := g.r.Remote(RemoteName); err == nil {
		st.Remote = rem.Config().URLs[0]
	}
	if fetch && st.Remote != "" {
		auth := o.Auth
		if auth == nil {
			if auth, err = Auth(st.Remote); err != nil {
				return st, err
			}
		}
		if _, err := g.fetch(ctx, auth); err != nil {
			return st, err
		}
		st.Fetched = true
	}
	changed, err := g.changedFiles()
	if err != nil {
		return st, err
	}
	st.Unsynced = append(st.Unsynced, changed...) // [] in JSON when none, not null
	last := readState(root)
	if !last.LastSync.IsZero() {
		st.LastSync = last.LastSync.Format(time.RFC3339)
	}
	ops, _ := auditSince(root, last)
	st.Operations = len(ops)
	local, err := g.head()
	if err != nil {
		return st, err
	}
	remote, err := g.remoteHead()
	if err != nil {
		return st, err
	}
	st.Ahead, err = countNotIn(g.r, local, remote)
	if err != nil {
		return st, err
	}
	st.Behind, err = countNotIn(g.r, remote, local)
	return st, err
}

// notIn counts the commits reachable from the commit a returns and not
// from b's.
func (g *repo) notIn(a, b func() (*object.Commit, error)) (int, error) {
	ca, err := a()
	if err != nil {
		return 0, err
	}
	cb, err := b()
	if err != nil {
		return 0, err
	}
	return countNotIn(g.r, ca, cb)
}

// countNotIn counts the commits reachable from a and not from b.
func countNotIn(r *git.Repository, a, b *object.Commit) (int, error) {
	if a == nil {
		return 0, nil
	}
	seen := map[plumbing.Hash]bool{}
	if b != nil {
		err := object.NewCommitPreorderIter(b, nil, nil).ForEach(func(c *object.Commit) error {
			seen[c.Hash] = true
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("gitsync: history: %w", err)
		}
	}
	n := 0
	err := object.NewCommitPreorderIter(a, seen, nil).ForEach(func(c *object.Commit) error {
		if !seen[c.Hash] {
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("gitsync: history: %w", err)
	}
	return n, nil
}
