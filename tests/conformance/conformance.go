// Package conformance runs one fixture — a tree, then a sequence of ABI
// requests — through every host and checks that each gives the same
// responses and leaves the same files (docs/design.md, Quality bars). The fixture and its
// golden results live in testdata/; the Node and browser runners read the
// same files.
package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/arbormem/arbor/core/api"
)

// Fixture is testdata/fixture.json.
type Fixture struct {
	// Tree is the folder, relative to the repository root, copied as the memory root.
	Tree  string          `json:"tree"`
	Open  json.RawMessage `json:"open"`
	Steps []Step          `json:"steps"`
}

// Step is one request sent through the ABI.
type Step struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Outcome is what a host produced: every response, normalized, and a digest
// of every file in the root afterwards.
type Outcome struct {
	Responses []any             `json:"responses"`
	Files     map[string]string `json:"files"`
}

// LoadFixture reads the fixture.
func LoadFixture(path string) (Fixture, error) {
	var f Fixture
	b, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("conformance: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("conformance: %s: %w", path, err)
	}
	return f, nil
}

// Requests renders the fixture as the JSON requests a host sends, "open" first.
func (f Fixture) Requests() [][]byte {
	out := [][]byte{mustJSON(map[string]any{"id": 0, "method": "open", "params": f.Open})}
	for i, s := range f.Steps {
		req := map[string]any{"id": i + 1, "method": s.Method}
		if s.Params != nil {
			req["params"] = s.Params
		}
		out = append(out, mustJSON(req))
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Normalize parses a response and drops what legitimately differs between
// runs and hosts: timings.
func Normalize(resp []byte) (any, error) {
	var v any
	if err := json.Unmarshal(resp, &v); err != nil {
		return nil, fmt.Errorf("conformance: response is not JSON: %w: %s", err, resp)
	}
	return strip(v), nil
}

func strip(v any) any {
	switch t := v.(type) {
	case map[string]any:
		delete(t, "tookMs")
		for k, x := range t {
			t[k] = strip(x)
		}
	case []any:
		for i, x := range t {
			t[i] = strip(x)
		}
	}
	return v
}

// Digest hashes file contents for the Files map.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Digested reports whether a file, by slash path below the root, belongs
// in Outcome.Files. The persisted search index (.arbor/index/) does not:
// its segment ids and layout follow bluge's background merges, which
// depend on goroutine timing, so its bytes differ between runs and hosts
// while the search results, which the responses compare, do not. Nor
// does the persisted catalog (api.CatalogFile, api.CatalogDeltaFile): it
// holds each file's modification time, which every host's storage sets by
// its own clock.
func Digested(rel string) bool {
	return !strings.HasPrefix(rel, ".arbor/index/") && rel != api.CatalogFile && rel != api.CatalogDeltaFile
}

// DigestDir hashes every file below dir that is Digested, keyed by slash path.
func DigestDir(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel = filepath.ToSlash(rel); Digested(rel) {
			out[rel] = Digest(b)
		}
		return nil
	})
	return out, err
}

// CopyTree copies a folder of files (no symlinks) into dst.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// SortedKeys lists a map's keys in order, for readable diffs.
func SortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
