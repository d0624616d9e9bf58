package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
	"github.com/arbormem/arbor/host/watch"
)

// URIScheme prefixes an entry's path to make its resource URI:
// arbor://engineering/billing/invoice_retry_policy.md.
const URIScheme = "arbor://"

// entryTemplate is the resource template every entry and context.md
// matches; its reads are served by the engine.
const entryTemplate = URIScheme + "{+path}"

const markdownType = "text/markdown"

// resourcePageSize bounds one page of resources/list.
const resourcePageSize = 500

// EntryURI is the resource URI of the entry (or context.md) at path, its
// segments escaped as a URI needs.
func EntryURI(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return URIScheme + strings.Join(segs, "/")
}

// entryPath is the path of an arbor:// URI, checked as the engine checks
// paths.
func entryPath(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, URIScheme)
	if !ok {
		return "", fmt.Errorf("%s: not an %s URI", uri, URIScheme)
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("%s: %w", uri, err)
	}
	clean, err := api.CleanPath(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", uri, err)
	}
	if path.Ext(clean) != ".md" {
		return "", fmt.Errorf("%s: not an entry (entries end in .md)", uri)
	}
	return clean, nil
}

// addResources registers the entry template, and serves resources/list
// from the tree as it is at each request: entries come and go through any
// client, another process or a person's editor, so a registry of them
// kept in the SDK would always trail the disk.
func addResources(s *Server) {
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "entry",
		Title:       "Memory entry",
		URITemplate: entryTemplate,
		Description: "An entry of the memory as stored (front matter, then its sections), or a folder's context.md; path is as the tools return it.",
		MIMEType:    markdownType,
	}, s.readResource)
	s.srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method != "resources/list" {
				return next(ctx, method, req)
			}
			var cursor string
			if p, ok := req.GetParams().(*sdk.ListResourcesParams); ok && p != nil {
				cursor = p.Cursor
			}
			return s.listResources(ctx, req, cursor)
		}
	})
}

func (s *Server) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	p, err := entryPath(uri)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	var res api.ReadResult
	who := callerOf(req)
	err = s.read(ctx, who, func(ctx context.Context) (err error) {
		res, err = s.eng.Read(ctx, api.ReadParams{Path: p})
		return err
	})
	if e := (*api.Error)(nil); errors.As(err, &e) && (e.Code == api.CodeNotFound || e.Code == api.CodeInvalidPath) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	if res.Kind == "entry" {
		s.bases.note(who.session, res.Path, res.Version)
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: markdownType, Text: res.Markdown}}}, nil
}

// listResources answers resources/list with the entries and context.md
// files of the tree, in path order, resourcePageSize at a time; the cursor
// is the offset of the page.
func (s *Server) listResources(ctx context.Context, req sdk.Request, cursor string) (*sdk.ListResourcesResult, error) {
	from := 0
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err == nil {
			from, err = strconv.Atoi(string(b))
		}
		if err != nil || from < 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor " + strconv.Quote(cursor)}
		}
	}
	var root *api.Node
	err := s.read(ctx, callerOf(req), func(ctx context.Context) (err error) {
		root, err = s.eng.Tree(ctx, api.TreeParams{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("resources/list: %w", err)
	}
	all := []*sdk.Resource{}
	var walk func(n *api.Node)
	walk = func(n *api.Node) {
		switch {
		case n.Kind == "entry":
			all = append(all, &sdk.Resource{URI: EntryURI(n.Path), Name: n.Path, Title: n.Title, MIMEType: markdownType})
		case n.Path != "" && n.Title != "":
			// A folder's title comes from its context.md.
			cp := n.Path + "/context.md"
			all = append(all, &sdk.Resource{URI: EntryURI(cp), Name: cp, Title: n.Title, MIMEType: markdownType,
				Description: "what the folder " + n.Path + " holds"})
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	res := &sdk.ListResourcesResult{Resources: []*sdk.Resource{}}
	if from < len(all) {
		end := min(from+resourcePageSize, len(all))
		res.Resources = all[from:end]
		if end < len(all) {
			res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
		}
	}
	return res, nil
}

// subscribe accepts a subscription to any entry path, existing or not: an
// agent may wait for an entry to be written. The SDK keeps the
// subscriptions.
func (s *Server) subscribe(_ context.Context, req *sdk.SubscribeRequest) error {
	if _, err := entryPath(req.Params.URI); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return nil
}

func (s *Server) unsubscribe(context.Context, *sdk.UnsubscribeRequest) error { return nil }

// curated lists the paths a curate changed: those of its successful
// operations, and where a MOVE took its entry.
func curated(res api.CurateResult) []string {
	var paths []string
	for _, a := range res.Applied {
		if a.Status == "success" && a.Path != "" {
			paths = append(paths, a.Path)
			if a.To != "" { // a MOVE: the entry is gone from Path and new at To
				paths = append(paths, a.To)
			}
		}
	}
	return paths
}

// entriesBelow replaces the folders among paths (relative to root) by
// the markdown files they hold: files written into a folder just created
// may land before the watch of it does, and only the folder is seen.
func entriesBelow(root string, paths []string) []string {
	var out []string
	for _, p := range paths {
		dir := filepath.Join(root, filepath.FromSlash(p))
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			out = append(out, p)
			continue
		}
		filepath.WalkDir(dir, func(f string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil // gone while walking: its removal is its own event
			case strings.HasPrefix(d.Name(), ".") && f != dir:
				if d.IsDir() {
					return filepath.SkipDir
				}
			case !d.IsDir() && path.Ext(f) == ".md":
				rel, _ := filepath.Rel(root, f)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
	}
	return out
}

// announce sends notifications/resources/updated for the entries at
// paths to the sessions subscribed to them (the SDK knows which), once per
// change: an entry whose file holds what it held when it was last
// announced is not announced again, so that a curate's write, announced
// as the curate answers, is not announced a second time when the watch or
// a refresh reports the same file.
func (s *Server) announce(ctx context.Context, paths []string) {
	for _, p := range paths {
		if path.Ext(p) != ".md" {
			continue // a folder a curate deleted, or a file that is no entry
		}
		if !s.news(p) {
			continue
		}
		// An error means a subscriber's connection failed, which is
		// theirs to notice; the write it announces has been made.
		_ = s.srv.ResourceUpdated(context.WithoutCancel(ctx), &sdk.ResourceUpdatedNotificationParams{URI: EntryURI(p)})
	}
}

// absent stands for a file that is not there in announced.
var absent = [sha256.Size]byte{}

// news reports whether the file at p (relative to the root) differs from
// what it held when it was last announced, absent counting as a content,
// and notes what it holds now. A file that cannot be read is news each
// time.
func (s *Server) news(p string) bool {
	sum := absent
	b, err := os.ReadFile(filepath.Join(s.eng.Root(), filepath.FromSlash(p)))
	switch {
	case err == nil:
		sum = sha256.Sum256(b)
	case !errors.Is(err, fs.ErrNotExist):
		return true
	}
	s.announcedMu.Lock()
	defer s.announcedMu.Unlock()
	if prev, ok := s.announced[p]; ok && prev == sum {
		return false
	}
	if s.announced == nil {
		s.announced = map[string][sha256.Size]byte{}
	}
	s.announced[p] = sum
	return true
}

// announceLater announces, apart from the engine's call that found them,
// the files a refresh of the engine found changed (runtime.WithChanges,
// through the relay): changes the watch below missed reach their
// subscribers too.
func (s *Server) announceLater(paths []string) {
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		s.announce(context.Background(), paths)
	}()
}

// rootWatcher is what watchRoot needs of a watch.Watcher; tests replace
// newRootWatcher to lose events on purpose.
type rootWatcher interface {
	Changed() <-chan struct{}
	Take() (paths []string, rescan bool)
	Close() error
}

var newRootWatcher = func(root string) (rootWatcher, error) { return watch.New(root) }

// watchRoot announces the entries that change on disk, whoever changed
// them: another process, a person's editor, or this server (whose writes
// are announced as they answer, and not again). When the watch may have
// lost events (an overflowing kernel queue), the engine scans the tree in
// the next turn, and what the scan finds changed is announced
// (announceLater). It returns its stop. Where the root cannot be watched
// (the engine has said so on stderr), only this server's own writes and
// what the engine's refreshes find are announced.
func (s *Server) watchRoot() (stop func()) {
	w, err := newRootWatcher(s.eng.Root())
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range w.Changed() {
			paths, missed := w.Take()
			s.announce(context.Background(), entriesBelow(s.eng.Root(), paths))
			if missed {
				s.pending.Add(1)
				go func() {
					defer s.pending.Done()
					_ = s.q.do(context.Background(), false, false, func(ctx context.Context) {
						if _, err := s.eng.Refresh(ctx, api.RefreshParams{}); err != nil && s.relay != nil {
							warn(s.relay.stderr, runtime.LevelWarn, fmt.Sprintf("scan after the watch of the root lost events: %v", err))
						}
					})
				}()
			}
		}
	}()
	return func() {
		w.Close()
		<-done
	}
}
