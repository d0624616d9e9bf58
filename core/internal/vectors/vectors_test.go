package vectors

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/search"
)

func sources(docs map[string]string) func(func(search.Source) error) error {
	return func(add func(search.Source) error) error {
		for p, text := range docs {
			d := search.Doc{Path: p, Title: p, Content: text}
			if err := add(search.Source{Path: p, Key: text, Doc: func(string) search.Doc { return d }}); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestSaveLoadAndNearest(t *testing.T) {
	fs := host.NewMemFS()
	em := host.HashEmbedder{Dims: 32}
	s := Open(Options{FS: fs, Log: host.NopLogger{}, Embedder: em})
	docs := map[string]string{"a.md": "red apples and green pears", "b.md": "the billing invoice retry", "c.md": "apples apples apples"}
	if rep := s.Sync(sources(docs)); rep.Embedded != 3 || rep.Err != nil {
		t.Fatalf("sync: %+v", rep)
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	back := Open(Options{FS: fs, Log: host.NopLogger{}, Embedder: em})
	if !reflect.DeepEqual(back.items, s.items) || back.dims != 32 {
		t.Fatal("the vectors read back differ from those saved")
	}
	q, err := back.Question("apples")
	if err != nil {
		t.Fatal(err)
	}
	near := back.Nearest(q, 2, nil)
	if len(near) != 2 || near[0].Path != "c.md" || near[1].Path != "a.md" {
		t.Fatalf("nearest %v", near)
	}
	// Every truncation of the file is refused, never half read.
	data, _ := fs.ReadFile(api.VectorsFile)
	for n := 0; n < len(data); n += 7 {
		if _, _, _, err := decode(data[:n]); err == nil {
			t.Fatalf("a file cut at %d of %d bytes was read", n, len(data))
		}
	}
}

func TestBatchesAreBounded(t *testing.T) {
	rec := &recorder{}
	s := Open(Options{FS: host.NewMemFS(), Log: host.NopLogger{}, Embedder: rec})
	docs := map[string]string{}
	for i := range 100 {
		docs[fmt.Sprintf("d%03d.md", i)] = strings.Repeat(fmt.Sprintf("word%d ", i), 1+i*300)
	}
	if rep := s.Sync(sources(docs)); rep.Embedded != 100 {
		t.Fatalf("sync: %+v", rep)
	}
	for _, b := range rec.batches {
		size := 0
		for _, t := range b {
			size += len(t)
		}
		if len(b) > BatchTexts || (len(b) > 1 && size > BatchBytes) {
			t.Fatalf("a batch of %d texts, %d bytes", len(b), size)
		}
		for _, text := range b {
			if len(text) > MaxTextBytes {
				t.Fatalf("a text of %d bytes", len(text))
			}
		}
	}
}

type recorder struct{ batches [][]string }

func (r *recorder) EmbedModel() string { return "rec" }
func (r *recorder) Embed(texts []string) ([][]float64, error) {
	r.batches = append(r.batches, texts)
	return host.HashEmbedder{}.Embed(texts)
}

// BenchmarkNearest measures the brute-force cosine of one question against
// every vector: the cost a query pays for embeddings, besides the model's
// answer.
func BenchmarkNearest(b *testing.B) {
	for _, size := range []struct{ n, dims int }{{500, 384}, {500, 1536}, {20000, 384}, {20000, 768}} {
		b.Run(fmt.Sprintf("%dx%d", size.n, size.dims), func(b *testing.B) {
			s := &Store{dims: size.dims, items: map[string]item{}}
			r := rand.New(rand.NewPCG(1, 2))
			for i := range size.n {
				v := make([]float64, size.dims)
				for j := range v {
					v[j] = r.NormFloat64()
				}
				u, _ := unit(v)
				s.items[fmt.Sprintf("d/%06d.md", i)] = item{vec: u}
			}
			q := s.items["d/000000.md"].vec
			b.ResetTimer()
			for b.Loop() {
				s.Nearest(q, 50, nil)
			}
		})
	}
}
