package search

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/host"
)

// chatCorpus is n documents shaped like the turns of chats (a title, a path
// by session, one or two sentences), their words drawn from a vocabulary
// of made-up words by a Zipf law, as in natural text, and that vocabulary,
// the most frequent words first.
func chatCorpus(n int) ([]Doc, []string) {
	syllables := strings.Fields("ka lo mi ne ru sa ti vo be da fe gi ho ju pe qui ro su ta ze")
	vocab := make([]string, 2000)
	for i := range vocab {
		w := ""
		for k := i; ; k /= len(syllables) {
			w += syllables[k%len(syllables)]
			if k < len(syllables) {
				break
			}
		}
		vocab[i] = w + "n"
	}
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(vocab)-1))
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = Doc{
			Path:    fmt.Sprintf("chat_%02d/session_%02d/turn_%03d.md", i/500, i/20%25, i%20),
			Title:   words(3),
			Content: words(12+rng.IntN(30)) + ". " + words(8+rng.IntN(12)) + ".",
		}
	}
	return docs, vocab
}

// A query ranks a pool of 50 hits and keeps 10 (the engine's Query): only
// those need their matched terms and excerpt. Each op is the 20 queries;
// allocations are reported, and the same benchmark runs in wasm
// (bench/wasm/REPORT.md says how).
func BenchmarkPool(b *testing.B) {
	docs, vocab := chatCorpus(3000)
	x := newIndex(b, Options{}, docs...)
	// Questions of two to four words, not the most frequent; every fifth
	// has a word found nowhere.
	rng := rand.New(rand.NewPCG(3, 4))
	queries := make([]string, 20)
	for i := range queries {
		ws := make([]string, 2+rng.IntN(3))
		for j := range ws {
			ws[j] = vocab[50+rng.IntN(1500)]
		}
		if i%5 == 0 {
			ws[0] = "zanzibar"
		}
		queries[i] = strings.Join(ws, " ")
	}
	b.Run("Search 50", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, q := range queries {
				if _, err := x.Search(q, 50); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	// Filters narrow the walk: one domain of six, one topic of 150.
	for _, f := range []struct {
		name string
		f    Filter
	}{{"domain", Filter{Domain: "chat_03"}}, {"topic", Filter{Domain: "chat_03", Topic: "session_05"}}} {
		b.Run("Search 50, "+f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, q := range queries {
					if _, err := x.SearchIn(q, 50, Scope{Filter: f.f}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	b.Run("Rank 50, Materialize 10", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, q := range queries {
				r, err := x.Rank(q, 50, ByScore)
				if err != nil {
					b.Fatal(err)
				}
				r.Materialize(r.Hits[:min(len(r.Hits), 10)])
			}
		}
	})
}

// BenchmarkAnalyze analyzes 1 MB of chat prose for the index, as an ingest
// of a big document does: the tokenizer and the stemmer dominate it.
func BenchmarkAnalyze(b *testing.B) {
	docs, _ := chatCorpus(8000)
	var sb strings.Builder
	for _, d := range docs {
		sb.WriteString(d.Content)
		sb.WriteString(" It's 3.14, v1.8 or 1,000 (snake_case).\n\n")
	}
	text := sb.String()[:1<<20]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		analyze(text, true)
	}
}

// wholeReads is a file system without range reads: a stored index's
// segments are read whole at open and held in memory.
type wholeReads struct{ host.FS }

// BenchmarkStored asks the questions of BenchmarkPool of a stored index
// whose segments are read by checked blocks from their files (range), and
// of the same index held whole in memory (whole), as a file system without
// range reads has it.
func BenchmarkStored(b *testing.B) {
	docs, vocab := chatCorpus(20000)
	fs := host.NewMemFS()
	x, err := Open(Options{}, Store{FS: fs, Dir: ".arbor/index"})
	if err != nil {
		b.Fatal(err)
	}
	if err := x.Put(docs...); err != nil {
		b.Fatal(err)
	}
	if err := x.Close(); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	queries := make([]string, 20)
	for i := range queries {
		ws := make([]string, 2+rng.IntN(3))
		for j := range ws {
			ws[j] = vocab[50+rng.IntN(1500)]
		}
		queries[i] = strings.Join(ws, " ")
	}
	for _, c := range []struct {
		name string
		fs   host.FS
	}{{"range", fs}, {"whole", wholeReads{fs}}} {
		b.Run(c.name, func(b *testing.B) {
			x, err := Open(Options{}, Store{FS: c.fs, Dir: ".arbor/index"})
			if err != nil {
				b.Fatal(err)
			}
			defer x.Close()
			b.ReportAllocs()
			for b.Loop() {
				for _, q := range queries {
					r, err := x.Rank(q, 50, ByScore)
					if err != nil {
						b.Fatal(err)
					}
					r.Materialize(r.Hits[:min(len(r.Hits), 10)])
				}
			}
		})
	}
}

// BenchmarkOpenStored opens a stored index of 10,000 chat-like documents
// (the manifest decoded, the documents' bookkeeping restored, bluge's
// segments opened) and closes it unchanged: reading the segments by
// checked blocks (range) or whole at open, as a file system without range
// reads has it (whole).
func BenchmarkOpenStored(b *testing.B) {
	docs, _ := chatCorpus(10000)
	fs := host.NewMemFS()
	x, err := Open(Options{}, Store{FS: fs, Dir: ".arbor/index"})
	if err != nil {
		b.Fatal(err)
	}
	if err := x.Put(docs...); err != nil {
		b.Fatal(err)
	}
	if err := x.Close(); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		fs   host.FS
	}{{"range", fs}, {"whole", wholeReads{fs}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				x, err := Open(Options{}, Store{FS: c.fs, Dir: ".arbor/index"})
				if err != nil {
					b.Fatal(err)
				}
				if x.Count() != len(docs) {
					b.Fatalf("%d documents", x.Count())
				}
				if err := x.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWords analyzes a chat session of about 10 KB into its Words, as
// the evidence rules do for each long entry among a question's best
// matches (the size of a LongMemEval-S session).
func BenchmarkWords(b *testing.B) {
	docs, _ := chatCorpus(400)
	var sb strings.Builder
	for i := 0; sb.Len() < 10<<10; i++ {
		who := "User"
		if i%2 == 1 {
			who = "Assistant"
		}
		sb.WriteString("**" + who + ":** " + docs[i].Content + " It's 3.14, v1.8 or 1,000 (snake_case).\n\n")
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Analyze(text)
	}
}
