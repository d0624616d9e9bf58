package ice

// Added to ice's package by build.sh (ice_tests), which runs it on ice as
// published and then patched as the wasm build is (wasm/_patch/ice.patch):
// the two must write the same segments, byte for byte, for the same
// documents, and the same merge of two of them. The documents hold what the patch handles apart: a term
// listed twice in one field, two fields of one name in a document,
// locations naming another field, terms without locations, stored fields
// and doc values.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/RoaringBitmap/roaring"
	segment "github.com/blugelabs/bluge_segment_api"
)

func TestPatchedSegmentBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := make([]string, 60)
	for i := range words {
		words[i] = fmt.Sprintf("w%02d", i)
	}
	// text is a field of n words drawn from the first k, its terms in
	// order of first occurrence with every location; split lists a term's
	// locations as two terms, as a field that repeats a term does.
	text := func(name string, n, k int, split bool) *FakeField {
		f := &FakeField{N: name, S: rng.Intn(2) == 0}
		at := map[string]*FakeTerm{}
		var val bytes.Buffer
		for i := 0; i < n; i++ {
			w := words[rng.Intn(k)]
			loc := &FakeLocation{P: i + 1, S: val.Len(), E: val.Len() + len(w)}
			val.WriteString(w + " ")
			ft := at[w]
			if ft == nil || split && rng.Intn(4) == 0 {
				ft = &FakeTerm{T: w}
				at[w] = ft
				f.T = append(f.T, ft)
			}
			ft.F++
			ft.L = append(ft.L, loc)
		}
		f.V = val.Bytes()
		return f
	}
	var docs []segment.Document
	for d := 0; d < 300; d++ {
		doc := FakeDocument{
			&FakeField{N: "_id", V: []byte(fmt.Sprintf("doc%03d", d)), S: true, DV: true,
				T: []*FakeTerm{{T: fmt.Sprintf("doc%03d", d), F: 1}}},
			text("body", 1+rng.Intn(80), 1+rng.Intn(len(words)), d%3 == 0),
		}
		if d%5 == 0 {
			doc = append(doc, text("body", 1+rng.Intn(20), len(words), false))
		}
		title := text("title", 1+rng.Intn(6), len(words), false)
		for _, ft := range title.T {
			ft.L = nil // a frequency without locations
		}
		doc = append(doc, title)
		if d%7 == 0 {
			tag := text("tag", 1+rng.Intn(8), 5, true)
			for _, ft := range tag.T {
				for _, l := range ft.L {
					l.F = "body"
				}
			}
			doc = append(doc, tag)
		}
		docs = append(docs, &doc)
	}
	norm := func(field string, n int) float32 { return float32(n)/3 + float32(len(field)) }
	var buf bytes.Buffer
	var segs []segment.Segment
	for _, part := range [][]segment.Document{docs, docs[:120], docs[120:]} {
		seg, _, err := New(part, norm)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := seg.(*Segment).WriteTo(&buf, nil); err != nil {
			t.Fatal(err)
		}
		segs = append(segs, seg)
	}
	// The two halves merged, some documents of the first deleted.
	drops := []*roaring.Bitmap{roaring.BitmapOf(3, 4, 50, 119), nil}
	if _, err := Merge(segs[1:], drops, 1<<12).WriteTo(&buf, nil); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	got := hex.EncodeToString(sum[:])
	if out := os.Getenv("ICE_SEGMENT_SUM_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(got), 0644); err != nil {
			t.Fatal(err)
		}
	}
	if want := os.Getenv("ICE_SEGMENT_SUM"); want != "" && got != want {
		t.Fatalf("the segment's SHA-256 is %s, ice as published writes %s", got, want)
	}
}
