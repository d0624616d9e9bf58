package search

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// The document table of a stored index (Index.docs), decoded when first
// needed.
//
// A save writes, after the manifest, the table's summary (summaryName):
// the totals of its documents' field lengths, which queries score with,
// and a digest of their (path, source key) pairs, under a hash of the
// manifest's bytes. An open whose manifest that hash names leaves the
// table itself (the documents section and its base file, a record per
// document) undecoded until a call needs it: a write, a filter by paths,
// a save, or a Sync that meets a source its caller did not find
// unchanged, or whose sources turn out not to be the ones the index holds
// (Syncer). An open of a tree in which nothing changed then decodes no
// record of the table: at 100,000 entries under wazero its decoding and
// the Syncer's comparison of each source with it were a fifth of the
// open's processor time, at 1M a seventh (bench/scale/notes.md).
//
// The summary is a file of its own rather than part of the manifest so
// that a manifest stays what earlier versions read: one of them meeting a
// manifest it does not know rebuilds the index from the tree (at 100,000
// entries under wazero, minutes). A manifest without a summary that names
// it (an earlier version's, or a crash between the two writes) is decoded
// at open, as before, and written again, with its summary, at the next
// flush.

// summaryName is the summary's file in the store's folder; summaryMagic
// starts it. Layout: the magic line, the format version and the schema
// fingerprint (those of the manifest: the totals depend on the analysis),
// then one section (binrec): the xxhash of the manifest's bytes (8 bytes
// little endian), the digest (8 bytes little endian) and, per field, the
// documents with a term in it and the sum of their lengths (uvarints).
const (
	summaryName  = "summary.bin"
	summaryMagic = "arbor index summary\n"
)

// docSummary is what the summary file says of a manifest's documents.
type docSummary struct {
	digest uint64 // the sum of the live documents' docDigest
	stats  [numFields]fieldStats
}

// encodeSummary returns the summary file of sum, describing the manifest
// whose bytes are manifest.
func encodeSummary(sum docSummary, manifest []byte) []byte {
	var sec []byte
	sec = binary.LittleEndian.AppendUint64(sec, xxhash.Sum64(manifest))
	sec = binary.LittleEndian.AppendUint64(sec, sum.digest)
	for _, st := range sum.stats {
		sec = binary.AppendUvarint(sec, uint64(st.docs))
		sec = binary.AppendUvarint(sec, uint64(st.sum))
	}
	return appendFile(summaryMagic, sec)
}

// decodeSummary returns the summary b holds when it describes the
// manifest whose bytes are manifest, of n live documents; nil otherwise
// (another manifest's, another format's, damaged).
func decodeSummary(b, manifest []byte, n int) *docSummary {
	sec := fileSection(b, summaryMagic)
	if sec == nil || sec.Uint64() != xxhash.Sum64(manifest) {
		return nil
	}
	sum := &docSummary{digest: sec.Uint64()}
	for f := range sum.stats {
		docs, total := sec.Uvarint(), sec.Uvarint()
		if docs > uint64(n) || total > math.MaxInt32*docs {
			return nil
		}
		sum.stats[f] = fieldStats{docs: int(docs), sum: int(total)}
	}
	if sec.Err() != nil || sec.Len() != 0 {
		return nil
	}
	return sum
}

// docDigest is one document's share of a table's digest, the sum of its
// documents' (mod 2^64): a change adds and takes away its documents'
// shares, and two tables of equal digests and counts hold the same
// documents with the same keys (but for a 64-bit coincidence).
func docDigest(path, key string) uint64 {
	// One call of the one-shot hash over the pair: the streaming one was a
	// tenth of an unchanged open under wazero.
	var buf [192]byte
	b := append(append(append(buf[:0], path...), 0), key...)
	return xxhash.Sum64(b)
}

// lazyDocs is a loaded manifest whose document table is not decoded yet.
type lazyDocs struct {
	mu  sync.Mutex
	m   *manifest // nil once decoded, or failed
	n   int       // the live documents
	err error
}

// docsReady decodes the document table if it is still pending, and
// returns the error of that decoding, once and for every caller after.
// Called with x.mu held, for reading or writing: the decoding holds the
// pending table's own lock, and the callers that find the table decoded
// (x.pending nil) read it without.
func (x *Index) docsReady() error {
	l := x.pending.Load()
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		return l.err
	}
	m := l.m
	l.m = nil
	stats, digest, err := x.decodeDocs(m)
	if err != nil {
		l.err = fmt.Errorf("search: the index's documents: %w", err)
		return l.err
	}
	if stats != x.stats || digest != x.digest || x.docs.Len() != l.n {
		// The summary was written from the table it describes: only a
		// fault could part them. The table, decoded, is the truth from
		// here on; x.stats, which queries read under the shared lock,
		// keeps the summary's until a caller holding the lock for
		// writing counts anew (docsWritable).
		if x.store != nil {
			x.store.warn(fmt.Sprintf("search index %s: the manifest's summary does not match its documents; they are counted again", x.store.Dir))
		}
		x.digest, x.recount = digest, true
	}
	if x.store != nil && x.store.base == m.Base && m.Base.Name != "" {
		x.store.since = m.changed
	}
	x.pending.Store(nil)
	return nil
}

// decodeDocs puts the documents of m in x.docs, and returns the totals of
// their field lengths and their digest. The manifest's paths come in
// increasing order (eachDoc checks it): each is a new row at the end of
// the table, which needs no map.
func (x *Index) decodeDocs(m *manifest) (stats [numFields]fieldStats, digest uint64, err error) {
	err = m.eachDoc(func(de docEntry) {
		x.docs.Put(de.Path, docMeta{hash: de.Hash, key: de.Key, lens: de.Lens})
		countLens(&stats, de.Lens, 1)
		digest += docDigest(de.Path, de.Key)
	})
	return stats, digest, err
}

// docsWritable is docsReady for a caller holding x.mu for writing, which
// also counts the field lengths anew when the summary proved wrong.
func (x *Index) docsWritable() error {
	if err := x.docsReady(); err != nil {
		return err
	}
	if x.recount {
		x.stats = [numFields]fieldStats{}
		for _, i := range x.docs.All() {
			countLens(&x.stats, x.docs.At(i).lens, 1)
		}
		x.recount = false
	}
	return nil
}

// docCount is the number of live documents; x.mu is held.
func (x *Index) docCount() int {
	if l := x.pending.Load(); l != nil {
		return l.n
	}
	return x.docs.Len()
}
