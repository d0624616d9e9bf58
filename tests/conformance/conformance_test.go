package conformance

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/host/runtime"
)

var update = flag.Bool("update", false, "rewrite testdata/expected.json from the native run")

const repoRoot = "../.."

func load(t *testing.T) Fixture { return loadNamed(t, "fixture.json") }

func loadNamed(t *testing.T, name string) Fixture {
	t.Helper()
	f, err := LoadFixture(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// run sends every request through call and collects the outcome.
func run(t *testing.T, f Fixture, call func([]byte) ([]byte, error), files func() map[string]string) Outcome {
	t.Helper()
	var out Outcome
	for _, req := range f.Requests() {
		resp, err := call(req)
		if err != nil {
			t.Fatalf("call %s: %v", req, err)
		}
		v, err := Normalize(resp)
		if err != nil {
			t.Fatal(err)
		}
		out.Responses = append(out.Responses, v)
	}
	out.Files = files()
	return out
}

// memTree copies the repository folder tree into a MemFS.
func memTree(t testing.TB, tree string) *host.MemFS {
	t.Helper()
	fs := host.NewMemFS()
	src := filepath.Join(repoRoot, tree)
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		return fs.WriteFile(filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func compare(t *testing.T, host string, got Outcome) { compareWith(t, "expected.json", host, got) }

func compareWith(t *testing.T, expected, host string, got Outcome) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", expected))
	if err != nil {
		t.Fatalf("%s: %v (run the native test with -update first)", host, err)
	}
	var want Outcome
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	// Round-trip got through JSON so both sides have the same Go types.
	var norm Outcome
	if err := json.Unmarshal(mustJSON(got), &norm); err != nil {
		t.Fatal(err)
	}
	for i := range max(len(want.Responses), len(norm.Responses)) {
		if i >= len(want.Responses) || i >= len(norm.Responses) {
			t.Errorf("%s: %d responses, want %d", host, len(norm.Responses), len(want.Responses))
			break
		}
		if !reflect.DeepEqual(want.Responses[i], norm.Responses[i]) {
			t.Errorf("%s: response %d differs\n got: %s\nwant: %s", host, i, mustJSON(norm.Responses[i]), mustJSON(want.Responses[i]))
		}
	}
	for _, k := range SortedKeys(want.Files) {
		if norm.Files[k] != want.Files[k] {
			t.Errorf("%s: file %s: digest %q, want %q", host, k, norm.Files[k], want.Files[k])
		}
	}
	for _, k := range SortedKeys(norm.Files) {
		if _, ok := want.Files[k]; !ok {
			t.Errorf("%s: unexpected file %s", host, k)
		}
	}
}

// TestNative runs the fixture through the engine compiled for this machine,
// over an in-memory root. With -update it writes the golden file.
func TestNative(t *testing.T) { runNative(t, load(t), nil, "expected.json") }

// runNative runs f through the native engine over an in-memory root, with
// em as the host's embedding model (nil: none), and compares the outcome
// with the golden file expected, or writes it with -update.
func runNative(t *testing.T, f Fixture, em host.Embedder, expected string) {
	t.Helper()
	fs := memTree(t, f.Tree)
	s := engine.NewSession(fs, nil)
	if em != nil {
		s.SetEmbedder(em)
	}
	got := run(t, f, func(req []byte) ([]byte, error) { return s.Call(req), nil }, func() map[string]string {
		out := map[string]string{}
		for p, b := range fs.Files() {
			if Digested(p) {
				out[p] = Digest(b)
			}
		}
		return out
	})
	if *update {
		b, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(filepath.Join("testdata", expected), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	compareWith(t, expected, "native", got)
}

// TestWazero runs the same fixture through dist/arbor.wasm in the Go host,
// over a real folder.
func TestWazero(t *testing.T) {
	f := load(t)
	dir := t.TempDir()
	if err := CopyTree(filepath.Join(repoRoot, f.Tree), dir); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng, err := runtime.New(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(ctx)
	got := run(t, f, func(req []byte) ([]byte, error) { return eng.Call(ctx, req) }, func() map[string]string {
		m, err := DigestDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
	compare(t, "wazero", got)
}
