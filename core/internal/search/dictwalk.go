package search

import (
	"reflect"
	"unsafe"

	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"
)

// Walking a dictionary for its terms alone. ice's DictionaryIterator reads
// the postings list of every term it passes (a block of the segment file,
// a roaring bitmap decoded) to report the term's count, unless its
// unexported omitCount is set, which nothing in ice or bluge sets. An
// expansion (expansionQuery.lookup) needs the terms only, in every segment:
// at 100,000 entries the counts were a fifth of what a query read from the
// segment files. The field is found by name through reflect, so that a
// version of ice without it (TestDictionaryTermsOmitsCounts fails then)
// falls back to counting: slower, the same terms.

// The offsets in ice.DictionaryIterator of omitCount and of d, its
// dictionary (nil in the empty iterator ice shares between all callers,
// which is never written); none when either is missing.
var omitCountAt, dictAt, omitCountFound = func() (uintptr, uintptr, bool) {
	t := reflect.TypeFor[ice.DictionaryIterator]()
	omit, ok1 := t.FieldByName("omitCount")
	d, ok2 := t.FieldByName("d")
	if !ok1 || !ok2 || omit.Type.Kind() != reflect.Bool || d.Type != reflect.TypeFor[*ice.Dictionary]() {
		return 0, 0, false
	}
	return omit.Offset, d.Offset, true
}()

// termsOnly makes it, a new iterator of a dictionary, list its terms
// without reading their postings: the entries' Count is then 0.
func termsOnly(it segment.DictionaryIterator) segment.DictionaryIterator {
	ii, ok := it.(*ice.DictionaryIterator)
	if !ok || !omitCountFound {
		return it
	}
	p := unsafe.Pointer(ii)
	if *(**ice.Dictionary)(unsafe.Add(p, dictAt)) != nil {
		*(*bool)(unsafe.Add(p, omitCountAt)) = true
	}
	return it
}
