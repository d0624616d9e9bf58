// Package gitsync syncs a memory root through git with go-git (no git
// binary needed): it commits the root's changes with a message that
// summarises the audited operations since the last sync, fetches, merges
// the remote branch and pushes (docs/sync.md). go-git v5 only
// fast-forwards, so the merge is done here: the merge base, the files each
// side changed, and for every file both changed the core's entry-aware
// merge (the engine's "merge" method, docs/ABI.md §4.15), then a commit
// with both parents. .arbor/ is never committed.
package gitsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/arborhost"
)

// RemoteName is the remote a root syncs with.
const RemoteName = "origin"

// DefaultBranch is the branch of a root that has none yet.
const DefaultBranch = "main"

// Merger merges the files two sides changed: the engine's "merge"
// (*runtime.Engine has it).
type Merger interface {
	Merge(ctx context.Context, p api.MergeParams) (api.MergeResult, error)
}

// Options say where and how to sync.
type Options struct {
	// Remote is the URL of the remote; set, it becomes (or replaces) the
	// root's "origin". Empty uses the origin the root has.
	Remote string
	// Branch is the branch to sync; empty: the root's current branch, else
	// DefaultBranch.
	Branch string
	// Auth authenticates to the remote; nil: Auth(url) from the environment.
	Auth transport.AuthMethod
	// Now is the time commits carry; nil: time.Now.
	Now func() time.Time
	// Progress, when set, hears of each step as it starts: a sync that
	// talks to a slow remote may take a while, and a caller (the MCP
	// tool, a benchmark timing the phases) wants to say where it is.
	Progress func(Step)
}

// The phases of a sync, in the order a round runs them: commit once, then
// fetch, merge (only when the remote has the branch) and push, again for
// each round a refused push starts.
const (
	PhaseCommit = "commit"
	PhaseFetch  = "fetch"
	PhaseMerge  = "merge"
	PhasePush   = "push"
)

// Step is one step of a sync as it starts.
type Step struct {
	Phase string `json:"phase"`
	// Round counts the rounds of fetch, merge and push from 1 (0 for the
	// commit).
	Round int `json:"round"`
	// Message says what the step does, for a person.
	Message string `json:"message"`
}

// Report says what a sync did.
type Report struct {
	Branch string `json:"branch"`
	Remote string `json:"remote"`
	// Committed is the commit of the root's own changes, when it had any,
	// and Operations the audited operations its message summarises.
	Committed  string `json:"committed,omitempty"`
	Operations int    `json:"operations"`
	// Merge is what bringing in the remote took: "none" (nothing new
	// there), "fast-forward", "merge" (a merge commit, Merged) or
	// "initial" (the remote branch did not exist yet).
	Merge  string `json:"merge"`
	Merged string `json:"merged,omitempty"`
	// Behind counts the commits the sync brought in from the remote, and
	// Ahead those its push sent there (the root's own and the merge's).
	Ahead  int `json:"ahead"`
	Behind int `json:"behind"`
	// Changed are the files of the root the sync wrote or removed, sorted:
	// what the engine reads again.
	Changed []string `json:"changed"`
	// Files are the merge's results for the files both sides changed (and
	// its moves, regenerations and copies), without their content, which
	// is in the root now; Conflicts those left in conflict.
	Files     []api.MergedFile `json:"files,omitempty"`
	Conflicts []string         `json:"conflicts"`
	Pushed    bool             `json:"pushed"`
	Head      string           `json:"head"`
}

// Status is what `arbor sync --status` shows.
type Status struct {
	Branch string `json:"branch"`
	Remote string `json:"remote,omitempty"`
	// Ahead and Behind count the commits the local branch has that the
	// remote's lacks, and the other way round, as of the last fetch
	// (Fetched: this call fetched first).
	Ahead   int  `json:"ahead"`
	Behind  int  `json:"behind"`
	Fetched bool `json:"fetched"`
	// Unsynced are the files changed since the last commit; Operations
	// the audited operations since the last sync.
	Unsynced   []string `json:"unsynced"`
	Operations int      `json:"operations"`
	LastSync   string   `json:"lastSync,omitempty"`
}

// ErrNoRemote is Sync's error when the root has no remote and none is
// given.
var ErrNoRemote = errors.New("no remote: pass --remote URL (it is remembered as the root's origin)")

// repo is an open repository of a root, with what a sync needs of it.
type repo struct {
	root   string
	r      *git.Repository
	wt     *git.Worktree
	branch string
	now    func() time.Time
}

// open opens (or, create, makes) the repository of root.
func open(root string, branch string, create bool, now func() time.Time) (*repo, error) {
	r, err := openRepo(root)
	if errors.Is(err, git.ErrRepositoryNotExists) && create {
		name := branch
		if name == "" {
			name = DefaultBranch
		}
		if _, err = git.PlainInitWithOptions(root, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(name)}}); err == nil {
			r, err = openRepo(root)
		}
	}
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, fmt.Errorf("gitsync: %s is not a git repository yet: run arbor sync --remote URL to make it one", root)
	}
	if err != nil {
		return nil, fmt.Errorf("gitsync: open the repository of %s: %w", root, err)
	}
	wt, err := r.Worktree()
	if err != nil {
		return nil, fmt.Errorf("gitsync: %s: %w", root, err)
	}
	// .arbor/ holds one machine's derived state: never committed, whatever
	// its own .gitignore says.
	wt.Excludes = append(wt.Excludes, gitignore.ParsePattern(api.StateDir+"/", nil))
	wt.Excludes = append(wt.Excludes, personalExcludes(r)...)
	if branch == "" {
		if head, err := r.Reference(plumbing.HEAD, false); err == nil && head.Type() == plumbing.SymbolicReference && head.Target().IsBranch() {
			branch = head.Target().Short()
		} else {
			branch = DefaultBranch
		}
	}
	if now == nil {
		now = time.Now
	}
	return &repo{root: root, r: r, wt: wt, branch: branch, now: now}, nil
}

// personalExcludes are the ignore patterns git reads besides .gitignore
// files: the repository's .git/info/exclude and the excludes file of the
// person's configuration (core.excludesFile, by default
// $XDG_CONFIG_HOME/git/ignore or ~/.config/git/ignore). go-git's status
// reads neither, and without them a sync would commit and push what a
// person keeps out of git on this machine (drafts, an editor's settings,
// secrets), then overwrite it with the other side's version.
func personalExcludes(r *git.Repository) []gitignore.Pattern {
	var lines []string
	if st, ok := r.Storer.(*filesystem.Storage); ok {
		if f, err := st.Filesystem().Open("info/exclude"); err == nil {
			b, _ := io.ReadAll(f)
			f.Close()
			lines = append(lines, strings.Split(string(b), "\n")...)
		}
	}
	if name := excludesFile(r); name != "" {
		if b, err := os.ReadFile(name); err == nil {
			lines = append(lines, strings.Split(string(b), "\n")...)
		}
	}
	var ps []gitignore.Pattern
	for _, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
			ps = append(ps, gitignore.ParsePattern(l, nil))
		}
	}
	return ps
}

// excludesFile is the file core.excludesFile names, in the repository's
// configuration, else the person's, else the system's; else git's default.
func excludesFile(r *git.Repository) string {
	name := ""
	if cfg, err := r.Config(); err == nil {
		name = cfg.Raw.Section("core").Options.Get("excludesfile")
	}
	for _, scope := range []config.Scope{config.GlobalScope, config.SystemScope} {
		if name != "" {
			break
		}
		if cfg, err := config.LoadConfig(scope); err == nil {
			name = cfg.Raw.Section("core").Options.Get("excludesfile")
		}
	}
	home, _ := os.UserHomeDir()
	switch {
	case strings.HasPrefix(name, "~/") && home != "":
		return filepath.Join(home, name[2:])
	case name != "":
		return name
	case os.Getenv("XDG_CONFIG_HOME") != "":
		return filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git", "ignore")
	case home != "":
		return filepath.Join(home, ".config", "git", "ignore")
	}
	return ""
}

func (g *repo) localRef() plumbing.ReferenceName { return plumbing.NewBranchReferenceName(g.branch) }

func (g *repo) remoteRef() plumbing.ReferenceName {
	return plumbing.NewRemoteReferenceName(RemoteName, g.branch)
}

// head is the commit the branch points at, nil before the first.
func (g *repo) head() (*object.Commit, error) {
	ref, err := g.r.Reference(g.localRef(), true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gitsync: branch %s: %w", g.branch, err)
	}
	return g.r.CommitObject(ref.Hash())
}

// remoteHead is the commit of the remote branch as last fetched, nil when
// there is none.
func (g *repo) remoteHead() (*object.Commit, error) {
	ref, err := g.r.Reference(g.remoteRef(), true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gitsync: %s: %w", g.remoteRef(), err)
	}
	return g.r.CommitObject(ref.Hash())
}

// setRemote makes url the root's origin (when given) and returns the
// origin's URL.
func (g *repo) setRemote(url string) (string, error) {
	rem, err := g.r.Remote(RemoteName)
	switch {
	case errors.Is(err, git.ErrRemoteNotFound):
		if url == "" {
			return "", ErrNoRemote
		}
	case err != nil:
		return "", fmt.Errorf("gitsync: remote %s: %w", RemoteName, err)
	case url == "" || slices.Contains(rem.Config().URLs, url):
		return rem.Config().URLs[0], nil
	default:
		if err := g.r.DeleteRemote(RemoteName); err != nil {
			return "", fmt.Errorf("gitsync: replace remote %s: %w", RemoteName, err)
		}
	}
	if _, err := g.r.CreateRemote(&config.RemoteConfig{Name: RemoteName, URLs: []string{url}}); err != nil {
		return "", fmt.Errorf("gitsync: set remote %s to %s: %w", RemoteName, url, err)
	}
	return url, nil
}

// signature is who commits: the repository's git user (local, then
// global config), else Arbor.
func (g *repo) signature() *object.Signature {
	sig := &object.Signature{Name: "Arbor", Email: "arbor@localhost", When: g.now()}
	for _, scope := range []config.Scope{config.LocalScope, config.GlobalScope} {
		if cfg, err := g.r.ConfigScoped(scope); err == nil && cfg.User.Name != "" {
			sig.Name, sig.Email = cfg.User.Name, cfg.User.Email
			break
		}
	}
	return sig
}

// changedFiles lists the files that differ from the last commit, sorted.
func (g *repo) changedFiles() ([]string, error) {
	if err := g.refreshIndex(); err != nil {
		return nil, err
	}
	st, err := g.wt.Status()
	if err != nil {
		return nil, fmt.Errorf("gitsync: status: %w", err)
	}
	var out []string
	for p, s := range st {
		if s.Worktree != git.Unmodified || s.Staging != git.Unmodified {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// refreshIndex brings git's index up to date with the files' stamps, as
// git update-index --refresh does, before go-git's status reads it. Two
// holes it closes:
//   - go-git trusts a file unread by its size and modification time
//     alone, where git compares its change time and inode too (its
//     core.trustctime): a file rewritten under its old size and time (cp
//     -p, rsync -a, tar x, touch -r) was never committed, and each later
//     sync stopped at the merge that found it changed on disk;
//   - an index another tool wrote with coarser times (isomorphic-git, from
//     milliseconds: the JS sync of a folder) matched no file to the
//     nanosecond, and every status hashed every file.
//
// A file of the entry's size whose stamps differ is hashed: holding what
// the index says, its entry gets its stamps; holding other bytes under
// the same modification time, the entry loses that time, so that the
// status hashes it too. A file of another size or time the status finds
// changed by itself.
func (g *repo) refreshIndex() error {
	idx, err := g.r.Storer.Index()
	if err != nil {
		return fmt.Errorf("gitsync: read the index: %w", err)
	}
	changed := false
	for _, e := range idx.Entries {
		fi, err := os.Lstat(rel(g.root, e.Name))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(e.Size) {
			continue // go-git's status sees these
		}
		sameTime := fi.ModTime().Equal(e.ModifiedAt)
		ctime, ino, ok := arborhost.FileChange(fi)
		if sameTime && (!ok || (ctime.Equal(e.CreatedAt) && uint32(ino) == e.Inode)) {
			continue
		}
		data, err := os.ReadFile(rel(g.root, e.Name))
		switch {
		case err == nil && plumbing.ComputeHash(plumbing.BlobObject, data) == e.Hash:
			e.ModifiedAt = fi.ModTime()
			if ok {
				e.CreatedAt, e.Inode = ctime, uint32(ino)
			}
		case sameTime:
			e.ModifiedAt = time.Time{}
		default:
			continue // the status sees its time differ, and hashes it
		}
		changed = true
	}
	if !changed {
		return nil
	}
	if err := g.r.Storer.SetIndex(idx); err != nil {
		return fmt.Errorf("gitsync: write the index: %w", err)
	}
	return nil
}

// stageOneByOne is how many changed files commitLocal stages one at a
// time; beyond it, one write of the index for all (measured in
// bench/sync).
const stageOneByOne = 64

// commitLocal commits every change of the root, with a message made of
// the audited operations since the last sync; "" when nothing changed.
func (g *repo) commitLocal(last syncState) (string, int, error) {
	changed, err := g.changedFiles()
	if err != nil || len(changed) == 0 {
		return "", 0, err
	}
	if len(changed) > stageOneByOne {
		// Each staging of a file writes go-git's whole index: for many
		// files (the first sync of a large tree), stage them all in one
		// write, at the cost of one more status of the tree.
		if err := g.wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
			return "", 0, fmt.Errorf("gitsync: stage the root's changes: %w", err)
		}
	} else {
		for _, p := range changed {
			_, err := os.Lstat(rel(g.root, p))
			if err := g.stage(p, err == nil); err != nil {
				return "", 0, err
			}
		}
	}
	ops, _ := auditSince(g.root, last)
	h, err := g.wt.Commit(commitMessage(ops, changed), &git.CommitOptions{Author: g.signature()})
	if err != nil {
		return "", 0, fmt.Errorf("gitsync: commit the root's changes: %w", err)
	}
	return h.String(), len(ops), nil
}

// fetch brings the remote branch in; false when the remote has no such
// branch (an empty remote, or a branch not pushed yet).
func (g *repo) fetch(ctx context.Context, auth transport.AuthMethod) (bool, error) {
	rem, err := g.r.Remote(RemoteName)
	if err != nil {
		return false, fmt.Errorf("gitsync: remote %s: %w", RemoteName, err)
	}
	refs, err := rem.ListContext(ctx, &git.ListOptions{Auth: auth})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("gitsync: list %s: %w", rem.Config().URLs[0], err)
	}
	if !slices.ContainsFunc(refs, func(r *plumbing.Reference) bool { return r.Name() == g.localRef() }) {
		return false, nil
	}
	spec := config.RefSpec(fmt.Sprintf("+%s:%s", g.localRef(), g.remoteRef()))
	err = g.r.FetchContext(ctx, &git.FetchOptions{RemoteName: RemoteName, RefSpecs: []config.RefSpec{spec}, Auth: auth})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return false, fmt.Errorf("gitsync: fetch %s from %s: %w", g.branch, rem.Config().URLs[0], err)
	}
	return true, nil
}

// errRejected is a push the remote refused because its branch moved on,
// or was moving: the sync fetches, merges and pushes again.
var errRejected = errors.New("the remote branch moved on")

func (g *repo) push(ctx context.Context, auth transport.AuthMethod) error {
	spec := config.RefSpec(fmt.Sprintf("%s:%s", g.localRef(), g.localRef()))
	return pushError(g.branch, g.r.PushContext(ctx, &git.PushOptions{RemoteName: RemoteName, RefSpecs: []config.RefSpec{spec}, Auth: auth}))
}

// pushError classifies the error of a push of branch. Besides a
// non-fast-forward, a ref the remote "failed to update" is one another
// push was updating at that moment (go-git's ref lock in a repository on
// disk, two roots syncing at once): the remote may have moved on, and the
// next round finds out. go-git reports both in words only.
func pushError(branch string, err error) error {
	switch {
	case err == nil || errors.Is(err, git.NoErrAlreadyUpToDate):
		return nil
	case strings.Contains(err.Error(), "non-fast-forward") || errors.Is(err, git.ErrForceNeeded),
		strings.Contains(err.Error(), "failed to update ref"):
		return errRejected
	}
	return fmt.Errorf("gitsync: push %s: %w", branch, err)
}

// blob reads the file at p of a commit's tree; nil when it has none.
func blob(t *object.Tree, p string) (*[]byte, error) {
	if t == nil {
		return nil, nil
	}
	f, err := t.File(p)
	if errors.Is(err, object.ErrFileNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gitsync: read %s: %w", p, err)
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, fmt.Errorf("gitsync: read %s: %w", p, err)
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("gitsync: read %s: %w", p, err)
	}
	return &b, nil
}

// treeOf is a commit's tree; nil for no commit (the empty tree).
func treeOf(c *object.Commit) (*object.Tree, error) {
	if c == nil {
		return nil, nil
	}
	return c.Tree()
}

// changes lists the paths that differ between two trees (nil: empty).
func changes(a, b *object.Tree) ([]string, error) {
	if a == nil && b == nil {
		return nil, nil
	}
	empty := &object.Tree{}
	if a == nil {
		a = empty
	}
	if b == nil {
		b = empty
	}
	cs, err := object.DiffTree(a, b)
	if err != nil {
		return nil, fmt.Errorf("gitsync: diff: %w", err)
	}
	var out []string
	for _, c := range cs {
		for _, n := range []string{c.From.Name, c.To.Name} {
			if n != "" && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// stateFile records the last sync.
var stateFile = filepath.Join(api.StateDir, "sync.json")

// syncLock is the lock file that makes syncs of one root take turns
// (slash-separated, relative to the root, as rootlock takes it).
const syncLock = api.StateDir + "/sync.lock"

func rel(root, p string) string { return filepath.Join(root, filepath.FromSlash(p)) }

// writeFileAtomic replaces a file of the root: a temporary file beside it,
// synced, then renamed over it, so a crash leaves the old or the new.
func writeFileAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), ".arbor-tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
