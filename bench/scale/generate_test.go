package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/host/arborhost"
)

// awkward are message bodies of the kinds the data sets hold that a naive
// entry writer gets wrong: headings that would start sections or named
// parts, headings in code, an unclosed fence, CRLF line ends, a title with
// YAML's special characters.
var awkward = []message{
	{path: "a/b/c/plain.md", title: "Caroline on 8 May 2023", task: "Turn D1:3 of session 1", author: "Caroline",
		time: time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC), body: "I went to a LGBTQ support group yesterday and it was so powerful."},
	{path: "a/b/c/headings.md", title: "Assistant: a plan [draft] #1", task: "Chat with the assistant", author: "assistant",
		body: "Here is a plan:\n\n## Step one\nStretch.\n\n### Details\n- 10 minutes\n\n# Big\n#### Small\n##NoSpace"},
	{path: "a/b/c/code.md", title: "User on 2 June 2023", task: "Chat with the assistant", author: "user",
		time: time.Date(2023, 6, 2, 0, 0, 0, 0, time.UTC), body: "Fix this:\n```python\n## not a heading\nprint('x')\n```\nthanks"},
	{path: "a/b/c/fence.md", title: "\"Quoted\" title", task: "Chat with the assistant", author: "user",
		body: "Windows lines\r\nand an open fence\r\n```\ncode with ## hash\n"},
}

// TestRenderReadsBack writes the awkward messages as render does and the
// same messages through curate (the engine's own writer), and checks that
// the engine reads each pair back alike: same title, same narrative.
func TestRenderReadsBack(t *testing.T) {
	rendered, curated := t.TempDir(), t.TempDir()
	var ops []api.Operation
	for _, m := range awkward {
		file := filepath.Join(rendered, filepath.FromSlash(m.path))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, m.render(), 0o644); err != nil {
			t.Fatal(err)
		}
		rc := &api.RawConcept{Task: m.task, Author: m.author}
		if !m.time.IsZero() {
			rc.Timestamp = m.time.Format(time.RFC3339)
		}
		ops = append(ops, api.Operation{Type: api.OpAdd, Path: filepath.Dir(m.path), Title: m.title, Reason: "conversation memory import",
			Content: api.Content{RawConcept: rc, Narrative: &api.Narrative{Text: m.body}}})
	}
	cur := open(t, curated)
	res := cur.Curate(api.CurateParams{Operations: ops})
	if res.Summary.Added != len(awkward) {
		t.Fatalf("curate: %+v", res.Applied)
	}
	ren := open(t, rendered)
	for i, m := range awkward {
		got, err := ren.Read(api.ReadParams{Path: m.path})
		if err != nil {
			t.Fatalf("%s: %v", m.path, err)
		}
		want, err := cur.Read(api.ReadParams{Path: res.Applied[i].Path})
		if err != nil {
			t.Fatal(err)
		}
		if got.Title != m.title || got.Title != want.Title {
			t.Errorf("%s: title %q, want %q (curate's: %q)", m.path, got.Title, m.title, want.Title)
		}
		if g, w := section(got.Markdown, "Narrative"), section(want.Markdown, "Narrative"); g != w {
			t.Errorf("%s: narrative\n%q\nwant, as curate writes it,\n%q", m.path, g, w)
		}
		if g, w := section(got.Markdown, "Raw Concept"), section(want.Markdown, "Raw Concept"); g != w {
			t.Errorf("%s: raw concept\n%q\nwant\n%q", m.path, g, w)
		}
	}
}

// section is the body of the "## name" section of an entry's markdown, up
// to the next "## " heading outside code (Narrative, written last, runs to
// the end).
func section(md, name string) string {
	_, rest, ok := strings.Cut(md, "## "+name+"\n")
	if !ok {
		return ""
	}
	if name != "Narrative" {
		if i := strings.Index(rest, "\n## "); i >= 0 {
			rest = rest[:i]
		}
	}
	return strings.TrimSpace(rest)
}

func open(t *testing.T, dir string) *engine.Engine {
	t.Helper()
	fs, err := arborhost.NewRootFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, r, err := engine.Open(engine.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) > 0 {
		t.Errorf("open %s: warnings %+v", dir, r.Warnings)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestGenerateStreams checks that a tree is the first n messages of one
// sequence, real then generated, the same on every run, and that the
// engine reads every entry of it.
func TestGenerateStreams(t *testing.T) {
	c := &corpus{speakers: []string{"Ann", "Bob"}}
	for i := range 30 {
		c.real = append(c.real, message{path: fmt.Sprintf("r/s/t/m%02d.md", i), title: fmt.Sprint("Ann ", i), task: "t", author: "Ann",
			body: fmt.Sprintf("real message %d about hiking and tea", i)})
	}
	c.model = newBigrams(c.real)
	if a, b := c.generated(41), c.generated(41); a != b {
		t.Fatalf("generated message 41 differs between calls:\n%+v\n%+v", a, b)
	}
	cache := t.TempDir()
	tree, info, err := ensureTree(c, cache, 75)
	if err != nil {
		t.Fatal(err)
	}
	if info != (treeInfo{Version: genVersion, Entries: 75, Real: 30, Generated: 45, Bytes: info.Bytes}) || info.Bytes == 0 {
		t.Fatalf("info %+v", info)
	}
	first, err := os.ReadFile(filepath.Join(tree, filepath.FromSlash(c.generated(44).path)))
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(c.generated(44).render()) {
		t.Fatal("the last generated entry on disk is not generated(44)")
	}
	// A smaller tree is the beginning of a larger one.
	small, _, err := ensureTree(c, cache, 40)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(small, filepath.FromSlash(c.generated(9).path)))
	if err != nil || string(b) != string(c.generated(9).render()) {
		t.Fatalf("the 40-entry tree's last entry: %v", err)
	}
	e, r, err := engine.Open(engine.Options{FS: mustRoot(t, tree)})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if r.Entries != 75 || len(r.Warnings) > 0 {
		t.Fatalf("open: %d entries, warnings %+v", r.Entries, r.Warnings)
	}
	// A complete tree is reused as is; an interrupted one (no info.json) is made again.
	if err := os.Remove(filepath.Join(cache, "75", "info.json")); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(tree, "stray.md")
	if err := os.WriteFile(stray, []byte("left by an interrupted run"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ensureTree(c, cache, 75); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Fatalf("an interrupted tree was reused: %v", err)
	}
	var again treeInfo
	raw, _ := os.ReadFile(filepath.Join(cache, "75", "info.json"))
	if err := json.Unmarshal(raw, &again); err != nil || again != info {
		t.Fatalf("info after regenerating: %+v (%v), want %+v", again, err, info)
	}
}

func mustRoot(t *testing.T, dir string) *arborhost.RootFS {
	t.Helper()
	fs, err := arborhost.NewRootFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestBigramText checks that generated text draws only the real words and
// real lengths, and that a seed gives the same text.
func TestBigramText(t *testing.T) {
	m := newBigrams([]message{{body: "the cat sat"}, {body: "a dog ran far away"}})
	words := map[string]bool{"the": true, "cat": true, "sat": true, "a": true, "dog": true, "ran": true, "far": true, "away": true}
	for k := range 50 {
		text := m.text(rand.New(rand.NewPCG(seed, uint64(k))))
		ws := strings.Fields(text)
		if len(ws) != 3 && len(ws) != 5 {
			t.Fatalf("%q: %d words, want a real message's length (3 or 5)", text, len(ws))
		}
		for _, w := range ws {
			if !words[w] {
				t.Fatalf("%q: %q is no real word", text, w)
			}
		}
		if again := m.text(rand.New(rand.NewPCG(seed, uint64(k)))); again != text {
			t.Fatalf("seed %d gave %q, then %q", k, text, again)
		}
	}
}
