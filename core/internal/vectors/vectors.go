// Package vectors holds the embedding vectors of a tree's files when the
// host has an embedding model (docs/ABI.md §2.3): which files have one,
// made from which bytes, persisted in .arbor/vectors.bin with the model and
// dimension, and the files nearest a question by cosine. Vectors are a
// cache beside the index: a file without one is still found by BM25, and a
// failed embedding call never fails the call that asked for it.
package vectors

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/search"
)

// Bounds of what is sent to the model. A text is cut at MaxTextBytes (on
// a character boundary): about 2,000 tokens, within what common embedding
// models take (OpenAI's 8,191 tokens, nomic-embed-text's 8,192) while
// keeping a request small; a batch holds at most BatchTexts texts and
// BatchBytes bytes of them. A vector longer than MaxDims is taken for
// garbage.
const (
	MaxTextBytes = 8 << 10
	BatchTexts   = 32
	BatchBytes   = 64 << 10
	MaxDims      = 8192
)

// Store is the vectors of one open tree. Not safe for concurrent use, like
// the engine.
type Store struct {
	fs       host.FS
	log      host.Logger
	em       host.Embedder
	readOnly bool
	model    string
	dims     int
	items    map[string]item // by path
	dirty    bool            // changed since loaded or saved
	progress func(done, total int)
}

// item is one file's vector: unit length, so that cosine is a dot product.
type item struct {
	key string // the file's stamp (search.Source.Key), or a hash of the text
	vec []float32
}

// Options configure Open.
type Options struct {
	FS       host.FS
	Log      host.Logger
	Embedder host.Embedder
	ReadOnly bool // never write VectorsFile
}

// Open loads the persisted vectors for the embedder's model. It returns
// nil when there is no embedder or it names no model: embeddings are off.
// A file of another model, or one that is damaged, is dropped with a log
// line; its vectors are made again.
func Open(o Options) *Store {
	if o.Embedder == nil {
		return nil
	}
	model := o.Embedder.EmbedModel()
	if model == "" {
		return nil
	}
	s := &Store{fs: o.FS, log: o.Log, em: o.Embedder, readOnly: o.ReadOnly, model: model, items: map[string]item{}}
	s.progress = host.Reporter(o.Log, api.PhaseEmbed)
	data, err := o.FS.ReadFile(api.VectorsFile)
	switch {
	case errors.Is(err, host.ErrNotFound):
	case err != nil:
		s.log.Log("warn", fmt.Sprintf("embeddings: %v; the vectors are made again", err))
	default:
		fileModel, dims, items, err := decode(data)
		switch {
		case err != nil:
			s.log.Log("warn", fmt.Sprintf("embeddings: %s is damaged (%v); the vectors are made again", api.VectorsFile, err))
			s.dirty = true
		case fileModel != model:
			s.log.Log("info", fmt.Sprintf("embeddings: %s holds vectors of model %q, the host embeds with %q; the vectors are made again", api.VectorsFile, fileModel, model))
			s.dirty = true
		default:
			s.dims, s.items = dims, items
		}
	}
	return s
}

// Model is the embedding model's name.
func (s *Store) Model() string { return s.model }

// Len counts the files with a vector.
func (s *Store) Len() int { return len(s.items) }

// Report says what one Sync did.
type Report struct {
	Embedded int   // files embedded
	Missing  int   // files left without a vector
	Err      error // the failure that left them, nil when none
}

// Sync brings the vectors in step with the tree's files, which sources
// gives as the index takes them (catalog.Catalog.IndexSources): a file
// whose key is the one stored keeps its vector, others are embedded in
// batches, and vectors of files no longer given are dropped. The first
// failed batch ends the embedding: the files left are searched by BM25
// alone until a later Sync embeds them.
func (s *Store) Sync(sources func(add func(search.Source) error) error) Report {
	type job struct {
		path, key, text string
	}
	var todo []job
	seen := make(map[string]bool, len(s.items))
	err := sources(func(src search.Source) error {
		seen[src.Path] = true
		if it, ok := s.items[src.Path]; ok && src.Key != "" && it.key == src.Key {
			return nil
		}
		text := Text(src.Doc(src.Path))
		key := src.Key
		if key == "" {
			key = textKey(text)
			if it, ok := s.items[src.Path]; ok && it.key == key {
				return nil
			}
		}
		todo = append(todo, job{src.Path, key, text})
		return nil
	})
	if err != nil {
		// The catalog gave what it holds; nothing is dropped on a partial list.
		s.log.Log("warn", fmt.Sprintf("embeddings: %v", err))
		return Report{Err: err}
	}
	for p := range s.items {
		if !seen[p] {
			delete(s.items, p)
			s.dirty = true
		}
	}
	var rep Report
	if s.progress != nil && len(todo) > 0 {
		s.progress(0, len(todo))
	}
	for start := 0; start < len(todo); {
		end, size := start, 0
		for end < len(todo) && end-start < BatchTexts && (end == start || size+len(todo[end].text) <= BatchBytes) {
			size += len(todo[end].text)
			end++
		}
		texts := make([]string, end-start)
		for i := range texts {
			texts[i] = todo[start+i].text
		}
		vecs, err := s.embed(texts)
		if err != nil {
			for _, j := range todo[start:] {
				// A stale vector would rank the file by text it no longer holds.
				if _, ok := s.items[j.path]; ok {
					delete(s.items, j.path)
					s.dirty = true
				}
			}
			rep.Missing, rep.Err = len(todo)-start, err
			s.log.Log("warn", fmt.Sprintf("embeddings: %v; %d files left without a vector are searched by BM25 alone, and embedded at the next write or open", err, rep.Missing))
			break
		}
		for i, v := range vecs {
			s.items[todo[start+i].path] = item{key: todo[start+i].key, vec: v}
		}
		s.dirty = true
		rep.Embedded += len(vecs)
		start = end
		if s.progress != nil {
			s.progress(start, len(todo))
		}
	}
	return rep
}

// Info describes the store after a Sync for an open's result.
func (s *Store) Info(rep Report) *api.EmbeddingsInfo {
	return &api.EmbeddingsInfo{Model: s.model, Dims: s.dims, Vectors: len(s.items), Embedded: rep.Embedded, Missing: rep.Missing}
}

// embed asks the host for the vectors of texts and checks them: one per
// text, all of the store's dimension (set by the first vector when the
// store has none), finite and not all zero; they come back unit length.
func (s *Store) embed(texts []string) ([][]float32, error) {
	raw, err := s.em.Embed(texts)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", s.model, err)
	}
	if len(raw) != len(texts) {
		return nil, fmt.Errorf("model %s: %d vectors for %d texts", s.model, len(raw), len(texts))
	}
	dims := s.dims
	if dims == 0 && len(raw) > 0 {
		dims = len(raw[0])
	}
	out := make([][]float32, len(raw))
	for i, r := range raw {
		switch {
		case len(r) == 0 || len(r) > MaxDims:
			return nil, fmt.Errorf("model %s: a vector of %d dimensions (1 to %d expected)", s.model, len(r), MaxDims)
		case len(r) != dims:
			return nil, fmt.Errorf("model %s: a vector of %d dimensions where the stored ones have %d (a model changed under the same name? delete %s to embed again)", s.model, len(r), dims, api.VectorsFile)
		}
		v, err := unit(r)
		if err != nil {
			return nil, fmt.Errorf("model %s: vector %d: %w", s.model, i, err)
		}
		out[i] = v
	}
	s.dims = dims
	return out, nil
}

// unit returns v scaled to length 1, in float32. The conversions keep
// every product rounded on its own, so that the bits are the same on
// every architecture (no fused multiply-add).
func unit(v []float64) ([]float32, error) {
	var n float64
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, errors.New("not a finite number")
		}
		n += float64(x * x)
	}
	if n == 0 {
		return nil, errors.New("all zero")
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out, nil
}

// Question embeds a question for Nearest.
func (s *Store) Question(q string) ([]float32, error) {
	vs, err := s.embed([]string{cut(q)})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// Near is a file near a question.
type Near struct {
	Path   string
	Cosine float64
}

// Nearest returns the k files whose vectors are nearest q by cosine,
// nearest first, equal ones by path, among those keep keeps (nil keeps
// all). It compares q with every vector (brute force: linear in the
// files, measured in BenchmarkNearest); keep is asked only of the files
// that would enter the k nearest so far.
func (s *Store) Nearest(q []float32, k int, keep func(path string) bool) []Near {
	if k <= 0 || len(q) != s.dims {
		return nil
	}
	// The k best so far, best first: a file enters only when it beats the
	// last, so a query sorts k files, not all of them.
	top := make([]Near, 0, k+1)
	before := func(a, b Near) bool {
		return a.Cosine > b.Cosine || (a.Cosine == b.Cosine && a.Path < b.Path)
	}
	for p, it := range s.items {
		n := Near{p, dot(q, it.vec)}
		if len(top) == k && !before(n, top[k-1]) || keep != nil && !keep(p) {
			continue
		}
		i := len(top)
		for i > 0 && before(n, top[i-1]) {
			i--
		}
		top = slices.Insert(top, i, n)
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}

// dot is the dot product of two vectors of one length, in four running
// sums (independent, so the processor overlaps them); the conversions
// round every product on its own, so that no architecture fuses a
// multiply-add and the bits are the same everywhere.
func dot(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float32(a[i] * b[i])
		s1 += float32(a[i+1] * b[i+1])
		s2 += float32(a[i+2] * b[i+2])
		s3 += float32(a[i+3] * b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float32(a[i] * b[i])
	}
	return float64(s0) + float64(s1) + float64(s2) + float64(s3)
}

// Text is what is embedded of a document: its title, summary, tags and
// keywords and text, cut at MaxTextBytes.
func Text(d search.Doc) string {
	var b strings.Builder
	for _, part := range []string{d.Title, d.Summary, strings.Join(d.Tags, ", "), strings.Join(d.Keywords, ", "), d.Content, d.Aside} {
		if part = strings.TrimSpace(part); part != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(part)
		}
		if b.Len() >= MaxTextBytes {
			break
		}
	}
	return cut(b.String())
}

// cut cuts s to at most MaxTextBytes, on a character boundary.
func cut(s string) string {
	if len(s) <= MaxTextBytes {
		return s
	}
	n := MaxTextBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func textKey(text string) string {
	h := fnv.New64a()
	h.Write([]byte(text))
	return "t" + strconv.FormatUint(h.Sum64(), 16)
}
