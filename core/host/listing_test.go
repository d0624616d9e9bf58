package host

import (
	"encoding/json"
	"reflect"
	"testing"
)

var listingSeeds = []string{
	`[]`, ` [ ] `, `null`, `[{"name":"a.md","dir":false,"size":12,"mtime":1767225600000}]`,
	`[{"name":"context.md","dir":false,"size":412,"mtime":1767225600000},
 {"name":"billing","dir":true,"size":0,"mtime":1767225600000}]`,
	`[{"name":"caf\u00e9","dir":false,"size":1,"mtime":2}]`,         // an escape
	`[{"name":"café","dir":false,"size":1,"mtime":2}]`,              // UTF-8
	"[{\"name\":\"bad\xff\",\"dir\":false,\"size\":1,\"mtime\":2}]", // invalid UTF-8
	`[{"dir":true,"name":"b","size":0,"mtime":0}]`,                  // another order
	`[{"NAME":"b","dir":true,"size":0,"mtime":0}]`,                  // keys match in any case
	`[{"name":"b","dir":true,"size":0,"mtime":0,"extra":1}]`,
	`[{"name":"b","dir":true,"size":-0,"mtime":-12}]`,
	`[{"name":"b","dir":true,"size":007,"mtime":0}]`,
	`[{"name":"b","dir":true,"size":1.5,"mtime":0}]`,
	`[{"name":"b","dir":true,"size":1e3,"mtime":0}]`,
	`[{"name":"b","dir":true,"size":9223372036854775807,"mtime":-9223372036854775808}]`,
	`[{"name":"b","dir":true,"size":9223372036854775808,"mtime":0}]`,
	`[{"name":"b","dir":true,"size":999999999999999999,"mtime":0}]`,
	`[{"name":"b","dir":1,"size":0,"mtime":0}]`,
	`[{"name":"b","dir":true,"size":0,"mtime":0},]`,
	`[{"name":"b","dir":true,"size":0,"mtime":0}] x`,
	`[{"name":"b","dir":true,"size":0,"mtime":0}`,
	`[{"name":"a` + "\t" + `b","dir":true,"size":0,"mtime":0}]`,
	`[{"name":"b","dir":null,"size":0,"mtime":0}]`,
	`{"name":"b","dir":true,"size":0,"mtime":0}`,
	`[{"name":"a.md","dir":false,"size":12,"mtime":1767225600000,"ctime":1767225600001,"ino":123456789}]`,
	`[{"name":"a.md","dir":false,"size":12,"mtime":5,"ctime":-3}]`,
	`[{"name":"a.md","dir":false,"size":12,"mtime":5,"ino":18446744073709551615}]`,
	`[{"name":"a.md","dir":false,"size":12,"mtime":5,"ino":18446744073709551616}]`,
	`[{"name":"a.md","dir":false,"size":12,"mtime":5,"ino":-1}]`,
	`[{"name":"a.md","dir":false,"size":12,"mtime":5,"ino":1,"ctime":2}]`,
	`[{"name":"a.md","dir":false,"size":12,"mtime":5,"ctime":2,"ctime":3}]`,
	`[{"name":"a.md","dir":false,"size":12,"mtime":5,"ctime":2 ,"ino":3}]`,
	``, `[`, `]`, `[{}]`,
}

// DecodeListing gives what encoding/json gives, on every input.
func FuzzDecodeListing(f *testing.F) {
	for _, s := range listingSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []DirEntry
		wantErr := json.Unmarshal(b, &want)
		got, err := DecodeListing(b)
		if (err != nil) != (wantErr != nil) || err == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeListing(%q) = %#v, %v; encoding/json: %#v, %v", b, got, err, want, wantErr)
		}
		var wantOne DirEntry
		wantErr = json.Unmarshal(b, &wantOne)
		one, err := DecodeStat(b)
		if (err != nil) != (wantErr != nil) || err == nil && one != wantOne {
			t.Errorf("DecodeStat(%q) = %#v, %v; encoding/json: %#v, %v", b, one, err, wantOne, wantErr)
		}
	})
}

// The form every host writes is decoded without encoding/json.
func TestDecodeListingFastPath(t *testing.T) {
	ents := []DirEntry{{Name: "context.md", Size: 412, ModTime: 1767225600000, Change: 1767225600456, Ino: 1 << 40}, {Name: "billing", IsDir: true, ModTime: -1}, {Name: "ünïcode", Size: 1 << 40, Change: 7}, {Name: "z", Ino: 3}}
	b, _ := json.Marshal(ents)
	if got, ok := fastListing(b); !ok || !reflect.DeepEqual(got, ents) {
		t.Errorf("fastListing(%s) = %#v, %v", b, got, ok)
	}
	// The names are the decoder's own: the buffer is reused for the next
	// listing (the module's ReadDir).
	got, _ := DecodeListing(b)
	for i := range b {
		b[i] = 'x'
	}
	if !reflect.DeepEqual(got, ents) {
		t.Errorf("the listing changed with the buffer it was decoded from: %#v", got)
	}
	b, _ = json.Marshal(ents[0])
	one, _ := DecodeStat(b)
	s := scanner{b: b}
	if d, ok := s.entry(); !ok || d != ents[0] || !s.end() {
		t.Errorf("the fast path does not take %s", b)
	}
	for i := range b {
		b[i] = 'x'
	}
	if one != ents[0] {
		t.Errorf("the entry changed with the buffer it was decoded from: %#v", one)
	}
}
