package search

import (
	"bytes"
	"reflect"
	"testing"

	segment "github.com/blugelabs/bluge_segment_api"
)

// readerData writes segment.Data's unexported fields through a struct of
// the same layout: the two must agree field by field.
func TestReaderDataLayout(t *testing.T) {
	want, got := reflect.TypeOf(segment.Data{}), reflect.TypeOf(dataLayout{})
	if want.NumField() != got.NumField() || want.Size() != got.Size() {
		t.Fatalf("segment.Data has %d fields, %d bytes; dataLayout %d, %d", want.NumField(), want.Size(), got.NumField(), got.Size())
	}
	for i := range want.NumField() {
		w, g := want.Field(i), got.Field(i)
		if w.Name != g.Name || w.Type != g.Type || w.Offset != g.Offset {
			t.Fatalf("field %d: segment.Data has %s %v at %d, dataLayout %s %v at %d", i, w.Name, w.Type, w.Offset, g.Name, g.Type, g.Offset)
		}
	}
	src := []byte("0123456789abcdef")
	d := readerData(bytes.NewReader(src), len(src))
	if d.Len() != len(src) {
		t.Fatalf("Len %d", d.Len())
	}
	if b, err := d.Read(3, 7); err != nil || string(b) != "3456" {
		t.Fatalf("Read(3, 7) = %q, %v", b, err)
	}
	if b, err := d.Slice(10, 16).Read(1, 3); err != nil || string(b) != "bc" {
		t.Fatalf("Slice(10, 16).Read(1, 3) = %q, %v", b, err)
	}
	var out bytes.Buffer
	if n, err := d.WriteTo(&out); err != nil || n != int64(len(src)) || out.String() != string(src) {
		t.Fatalf("WriteTo: %d, %v, %q", n, err, out.String())
	}
}
