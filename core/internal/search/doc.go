// Package search is Arbor's full-text index: it ranks the entries and
// context.md files of a Context Tree for a query with BM25 over weighted
// fields (title, path, summary, content, tags, keywords), normalizes the
// scores to ŝ = s/(1+s) and reports the query terms that match nothing, which
// the retrieval tiers use for direct answers and out-of-domain detection.
//
// The index is built on bluge with an in-memory directory, which Open can
// load from and Flush and Close persist to a folder of the host file system
// (store.go). Analysis is the same for every field and for the query (see
// analyze.go): English
// (possessives, lower case, stop words, Snowball stemming, words split on
// - _ / and on dots between letters), accent folding of Latin and Greek,
// compounds (import-cycle also indexed as importcycl), symbol-bearing words
// (c++, c#, #billing, .net), and CJK (overlapping bigrams of Han, Kana and
// Hangul runs, Korean words also kept whole with and without their
// particle). Terms carry positions, so quoted phrases in a query match
// adjacent words only; see [Index.Search].
//
// What this package must not do: it runs inside WebAssembly (GOOS=wasip1) as
// well as natively, so it must not import os, net or mmap, must not touch
// files itself (persistence goes through host.FS), and must not rely on
// goroutines outliving a call: every method finishes its index work (bluge
// batches) before it returns.
package search
