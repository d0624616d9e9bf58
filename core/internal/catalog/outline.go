package catalog

import (
	"path"
	"sort"
	"strings"

	"github.com/arbormem/arbor/core/api"
)

// Outline is the folder at p.Path ("" the root) as nested nodes: folders
// before entries, each by name, the levels below it cut at p.Depth when
// it is more than 0. The "tree" method answers with it, and the model's
// list_tree tool reads it.
func (c *Catalog) Outline(p api.TreeParams) (*api.Node, error) {
	root := ""
	if p.Path != "" {
		clean, err := api.CleanPath(p.Path)
		if err != nil {
			return nil, err
		}
		root = clean
	}
	nodes := map[string]*api.Node{"": {Name: "", Path: "", Kind: "root"}}
	var folder func(string) *api.Node
	folder = func(dir string) *api.Node {
		if n, ok := nodes[dir]; ok {
			return n
		}
		up := path.Dir(dir)
		if up == "." {
			up = ""
		}
		parent := folder(up)
		n := &api.Node{Name: path.Base(dir), Path: dir, Kind: folderKind(dir)}
		if ctx, ok := c.Context(dir + "/context.md"); ok {
			n.Title = ctx.Title
		}
		parent.Children = append(parent.Children, n)
		nodes[dir] = n
		return n
	}
	for _, cp := range c.ContextPaths() {
		if d := path.Dir(cp); d != "." {
			folder(d)
		}
	}
	for _, ep := range c.Paths() {
		d := path.Dir(ep)
		if d == "." {
			d = ""
		}
		parent := folder(d)
		title, _ := c.Title(ep)
		parent.Children = append(parent.Children, &api.Node{Name: path.Base(ep), Path: ep, Kind: "entry", Title: title})
	}
	for _, n := range nodes {
		sortNodes(n.Children)
	}
	top, ok := nodes[root]
	if !ok {
		return nil, api.Errorf(api.CodeNotFound, "no folder %s", root)
	}
	if p.Depth > 0 {
		prune(top, p.Depth)
	}
	return top, nil
}

// HasFolder reports whether dir holds entries or context files.
func (c *Catalog) HasFolder(dir string) bool {
	for _, list := range [][]string{c.Paths(), c.ContextPaths()} {
		i := sort.SearchStrings(list, dir+"/")
		if i < len(list) && strings.HasPrefix(list[i], dir+"/") {
			return true
		}
	}
	return false
}

func folderKind(dir string) string {
	switch strings.Count(dir, "/") {
	case 0:
		return "domain"
	case 1:
		return "topic"
	case 2:
		return "subtopic"
	}
	return "folder"
}

// sortNodes puts folders before entries, each by name.
func sortNodes(ns []*api.Node) {
	sort.Slice(ns, func(i, j int) bool {
		if (ns[i].Kind == "entry") != (ns[j].Kind == "entry") {
			return ns[j].Kind == "entry"
		}
		return ns[i].Name < ns[j].Name
	})
}

func prune(n *api.Node, depth int) {
	if depth <= 0 {
		n.Children = nil
		return
	}
	for _, c := range n.Children {
		prune(c, depth-1)
	}
}
