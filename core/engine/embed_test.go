package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// conceptEmbedder embeds by meaning as far as a test needs: each word
// of a concept adds to that concept's dimension, so "automobile" and
// "car" point the same way though they share no letters. The last
// dimension counts other words, so that no text is all zero.
type conceptEmbedder struct {
	model string
	calls int
	texts int
	// fail makes every call from the fail-th one (1-based) fail; dims,
	// when set, is the length of the vectors it answers from call dimsAt.
	fail   int
	dims   int
	dimsAt int
	nan    bool
}

var concepts = [][]string{
	{"car", "automobile", "vehicle", "tyres", "brakes", "garage"},
	{"plants", "watering", "garden", "greenhouse"},
	{"invoice", "billing", "payment", "dunning"},
}

func (c *conceptEmbedder) EmbedModel() string { return c.model }

func (c *conceptEmbedder) Embed(texts []string) ([][]float64, error) {
	c.calls++
	if c.fail > 0 && c.calls >= c.fail {
		return nil, &host.EmbedError{Code: "timeout", Message: "no answer within 30s"}
	}
	c.texts += len(texts)
	out := make([][]float64, len(texts))
	for i, t := range texts {
		n := len(concepts) + 1
		if c.dims > 0 && c.calls >= c.dimsAt {
			n = c.dims
		}
		v := make([]float64, n)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return r < 'a' || r > 'z' }) {
			hit := false
			for k, words := range concepts {
				for _, cw := range words {
					if w == cw && k < n {
						v[k]++
						hit = true
					}
				}
			}
			if !hit {
				v[n-1] += 0.1
			}
		}
		if c.nan {
			v[0] = math.NaN()
		}
		out[i] = v
	}
	return out, nil
}

// logLines is a host.Logger that keeps the lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Log(level, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, level+": "+msg)
}

func (l *logLines) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

const carEntry = `---
title: Car service
---

## Narrative
The car goes to the garage every 10,000 km: tyres and brakes checked.
`

const plantsEntry = `---
title: Office plants
---

## Narrative
The maintenance schedule of the office plants: watering on Mondays.
`

func embedTree() map[string]string {
	return map[string]string{
		"home/car/car_service.md":                     carEntry,
		"office/plants/office_plants.md":              plantsEntry,
		"engineering/billing/invoice_retry_policy.md": billingEntry,
	}
}

func embedSession(t *testing.T, em host.Embedder, files map[string]string) (*Session, *host.MemFS, *logLines) {
	t.Helper()
	s, fs := newSession(t, files)
	lg := &logLines{}
	s.log = lg
	s.SetEmbedder(em)
	return s, fs, lg
}

func queryPaths(res map[string]any) []string {
	var out []string
	for _, h := range res["results"].([]any) {
		out = append(out, h.(map[string]any)["path"].(string))
	}
	return out
}

func TestEmbeddingsFindByMeaning(t *testing.T) {
	em := &conceptEmbedder{model: "concepts"}
	s, fs, _ := embedSession(t, em, embedTree())
	open := mustOpen(t, s)
	info, _ := open["embeddings"].(map[string]any)
	want := map[string]any{"model": "concepts", "dims": float64(4), "vectors": float64(3), "embedded": float64(3), "missing": float64(0)}
	if !reflect.DeepEqual(info, want) {
		t.Fatalf("open embeddings = %v, want %v", info, want)
	}
	if _, err := fs.ReadFile(api.VectorsFile); err != nil {
		t.Fatalf("vectors not saved at open: %v", err)
	}
	// BM25 finds the plants by "maintenance schedule"; the car entry shares
	// no word with the question and is found by meaning alone.
	res, errObj := call(t, s, "query", map[string]any{"query": "automobile maintenance schedule"})
	if errObj != nil {
		t.Fatal(errObj)
	}
	got := queryPaths(res)
	// The billing entry is among the nearest too (every file is, in a tree
	// of three), last.
	if !reflect.DeepEqual(got, []string{"office/plants/office_plants.md", "home/car/car_service.md", "engineering/billing/invoice_retry_policy.md"}) {
		t.Fatalf("results %v", got)
	}
	reason := res["reason"].(string)
	if !strings.Contains(reason, "embeddings: the 1 best matches fused with the 3 files nearest the question by meaning (model concepts) by reciprocal rank (k = 60): 2 found by meaning alone") {
		t.Fatalf("reason %q", reason)
	}
	car := res["results"].([]any)[1].(map[string]any)
	if car["title"] != "Car service" || !strings.HasPrefix(car["excerpt"].(string), "The car goes to the garage") {
		t.Fatalf("hit found by meaning: %v", car)
	}

	// Without embeddings the same question finds the plants alone.
	plain, _ := newSession(t, embedTree())
	mustOpen(t, plain)
	res, _ = call(t, plain, "query", map[string]any{"query": "automobile maintenance schedule"})
	if got := queryPaths(res); !reflect.DeepEqual(got, []string{"office/plants/office_plants.md"}) {
		t.Fatalf("BM25 alone: %v", got)
	}
	if strings.Contains(res["reason"].(string), "embeddings") {
		t.Fatalf("reason without embeddings mentions them: %q", res["reason"])
	}
	if open, _ := call(t, plain, "open", map[string]any{}); open["embeddings"] != nil {
		t.Fatalf("open without an embedder reports embeddings: %v", open["embeddings"])
	}
}

func TestEmbeddingsOffAnswersAsBefore(t *testing.T) {
	// An embedder naming no model is no embedder: the answers are
	// byte-identical to a session without one, and nothing is written.
	plain, _ := newSession(t, embedTree())
	none := &conceptEmbedder{model: ""}
	off, fs, _ := embedSession(t, none, embedTree())
	for _, s := range []*Session{plain, off} {
		mustOpen(t, s)
	}
	for _, q := range []string{"invoice retry", "automobile maintenance schedule", "who is paged?"} {
		req := []byte(fmt.Sprintf(`{"id":1,"method":"query","params":{"query":%q}}`, q))
		a, b := plain.Call(req), off.Call(req)
		var ra, rb map[string]any
		json.Unmarshal(a, &ra)
		json.Unmarshal(b, &rb)
		delete(ra["result"].(map[string]any), "tookMs")
		delete(rb["result"].(map[string]any), "tookMs")
		if !reflect.DeepEqual(ra, rb) {
			t.Fatalf("%q: off %s\nplain %s", q, b, a)
		}
	}
	if none.calls != 0 {
		t.Fatalf("an embedder without a model was called %d times", none.calls)
	}
	if _, err := fs.ReadFile(api.VectorsFile); !errors.Is(err, host.ErrNotFound) {
		t.Fatalf("vectors written with embeddings off: %v", err)
	}
}

func TestEmbeddingsKeptInStepWithWrites(t *testing.T) {
	em := &conceptEmbedder{model: "concepts"}
	s, fs, _ := embedSession(t, em, embedTree())
	mustOpen(t, s)
	if em.texts != 3 {
		t.Fatalf("open embedded %d texts, want 3", em.texts)
	}
	// A reopen embeds nothing: the vectors are those of the same bytes.
	em.texts = 0
	if open := mustOpen(t, s); open["embeddings"].(map[string]any)["embedded"] != float64(0) || em.texts != 0 {
		t.Fatalf("reopen embedded %d texts: %v", em.texts, open["embeddings"])
	}
	res, _ := call(t, s, "curate", map[string]any{"operations": []any{
		map[string]any{"type": "ADD", "path": "home/car", "title": "Winter tyres", "content": map[string]any{"narrative": "Winter tyres go on in November."}, "reason": "r"},
		map[string]any{"type": "DELETE", "path": "office/plants/office_plants.md", "reason": "r"},
	}})
	if res["summary"].(map[string]any)["failed"] != float64(0) {
		t.Fatalf("curate: %v", res)
	}
	// The new entry and the context.md files the ADD wrote in home/ and
	// home/car/: what the curate wrote, nothing else.
	if em.texts != 3 {
		t.Fatalf("the curate embedded %d texts, want the 3 files it wrote", em.texts)
	}
	call(t, s, "flush", nil)
	data, err := fs.ReadFile(api.VectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"home/car/winter_tyres.md", "home/car/car_service.md"} {
		if !strings.Contains(string(data), p) {
			t.Fatalf("vectors lack %s", p)
		}
	}
	if strings.Contains(string(data), "office_plants.md") {
		t.Fatal("the deleted entry keeps its vector")
	}
	// A file changed by an editor is embedded again at refresh.
	em.texts = 0
	fs.WriteFile("home/car/car_service.md", []byte(strings.Replace(carEntry, "10,000", "15,000", 1)))
	call(t, s, "refresh", map[string]any{"paths": []string{"home/car/car_service.md"}})
	if em.texts != 1 {
		t.Fatalf("refresh embedded %d texts, want 1", em.texts)
	}
}

func TestEmbeddingsFileCheckedAndModelChange(t *testing.T) {
	em := &conceptEmbedder{model: "concepts"}
	s, fs, lg := embedSession(t, em, embedTree())
	mustOpen(t, s)
	call(t, s, "close", nil)
	data, _ := fs.ReadFile(api.VectorsFile)
	bad := append([]byte(nil), data...)
	bad[len(bad)-3] ^= 0x40 // a bit of the last vector
	fs.WriteFile(api.VectorsFile, bad)
	em.texts = 0
	open := mustOpen(t, s)
	if em.texts != 3 || open["embeddings"].(map[string]any)["embedded"] != float64(3) {
		t.Fatalf("a damaged file was trusted: %d texts embedded, %v", em.texts, open["embeddings"])
	}
	if !lg.has("vectors.bin is damaged") {
		t.Fatalf("no warning for the damaged file: %v", lg.lines)
	}
	if now, _ := fs.ReadFile(api.VectorsFile); !reflect.DeepEqual(now, data) {
		t.Fatal("the rebuilt file differs from the first")
	}
	// Another model: every vector is made again.
	other := &conceptEmbedder{model: "concepts-v2"}
	s.SetEmbedder(other)
	if open := mustOpen(t, s); open["embeddings"].(map[string]any)["embedded"] != float64(3) || other.texts != 3 {
		t.Fatalf("a model change did not embed again: %v", open["embeddings"])
	}
}

func TestEmbeddingsFailuresFallBackToBM25(t *testing.T) {
	plain, _ := newSession(t, embedTree())
	mustOpen(t, plain)
	want, _ := call(t, plain, "query", map[string]any{"query": "automobile maintenance schedule"})

	cases := []struct {
		name string
		em   *conceptEmbedder
		log  string
	}{
		{"error at open", &conceptEmbedder{model: "m", fail: 1}, "timeout: no answer within 30s; 3 files left without a vector"},
		{"error at the question", &conceptEmbedder{model: "m", fail: 2}, "the question could not be embedded: model m: timeout: no answer within 30s"},
		{"wrong dimension", &conceptEmbedder{model: "m", dims: 7, dimsAt: 2}, "a vector of 7 dimensions where the stored ones have 4"},
		{"not a number", &conceptEmbedder{model: "m", nan: true}, "not a finite number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _, lg := embedSession(t, c.em, embedTree())
			mustOpen(t, s)
			got, errObj := call(t, s, "query", map[string]any{"query": "automobile maintenance schedule"})
			if errObj != nil {
				t.Fatal(errObj)
			}
			if !reflect.DeepEqual(queryPaths(got), queryPaths(want)) {
				t.Fatalf("results %v, BM25 alone gives %v", queryPaths(got), queryPaths(want))
			}
			if !lg.has(c.log) {
				t.Fatalf("no warning %q in %v", c.log, lg.lines)
			}
			// A write still succeeds, and the entry is found by BM25.
			res, _ := call(t, s, "curate", map[string]any{"operations": []any{
				map[string]any{"type": "ADD", "path": "home/car", "title": "Winter tyres", "content": map[string]any{"narrative": "Winter tyres go on in November."}, "reason": "r"},
			}})
			if res["summary"].(map[string]any)["added"] != float64(1) {
				t.Fatalf("curate with a failing model: %v", res)
			}
			got, _ = call(t, s, "query", map[string]any{"query": "winter tyres"})
			if p := queryPaths(got); len(p) == 0 || p[0] != "home/car/winter_tyres.md" {
				t.Fatalf("the new entry is not found: %v", p)
			}
		})
	}

	// A question that could not be embedded is not cached: once the model
	// answers again, the same question is fused.
	em := &conceptEmbedder{model: "m", fail: 2}
	s, _, _ := embedSession(t, em, embedTree())
	mustOpen(t, s)
	first, _ := call(t, s, "query", map[string]any{"query": "automobile maintenance schedule"})
	if !strings.Contains(first["reason"].(string), "could not be embedded") {
		t.Fatalf("reason %q", first["reason"])
	}
	em.fail = 0
	again, _ := call(t, s, "query", map[string]any{"query": "automobile maintenance schedule"})
	if again["tier"] == float64(0) || len(queryPaths(again)) != 3 {
		t.Fatalf("the failed answer was cached: tier %v, %v", again["tier"], queryPaths(again))
	}
}
