package tree

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
)

func stampedEntry(t *testing.T) (*Entry, []byte) {
	t.Helper()
	at := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	e := &Entry{
		Path: "notes/deploy/deploy.md", Title: "Deploy", CreatedAt: at, UpdatedAt: at,
		Extra:    []KeyValue{{Key: "aliases", Value: "[rollout]"}, {Key: StampKey, Value: "sha256-0000000000000000"}},
		Comments: []KeyValue{{Key: "aliases", Value: " the note's"}, {Key: "", Value: " last"}},
		Reason:   IngestReason + "notes/deploy.md", RawConcept: api.RawConcept{Files: []string{"notes/deploy.md"}},
		Narrative: api.Narrative{Text: "Send 5% of traffic."},
	}
	Stamp(e, "0123456789abcdef0123456789abcdef")
	return e, Render(e)
}

// A stamped file is intact until any byte of it changes, and the stamp
// survives a parse and a rewrite of the unchanged entry.
func TestStamp(t *testing.T) {
	e, data := stampedEntry(t)
	if n := strings.Count(string(data), "\n"+StampKey+": "); n != 1 {
		t.Fatalf("%d stamp lines in\n%s", n, data)
	}
	if stamped, intact, piece := Ingested(data); !stamped || !intact || piece != "0123456789abcdef0123456789abcdef" {
		t.Fatalf("fresh file: stamped %v intact %v piece %q\n%s", stamped, intact, piece, data)
	}
	parsed, err := ParseEntry(e.Path, data)
	if err != nil {
		t.Fatal(err)
	}
	if again := Render(parsed); !bytes.Equal(again, data) {
		t.Fatalf("rewritten unchanged:\n%s\nwant\n%s", again, data)
	}
	for _, edit := range []func([]byte) []byte{
		func(b []byte) []byte { return bytes.Replace(b, []byte("5%"), []byte("10%"), 1) },
		func(b []byte) []byte { return append(b, '\n') },
		func(b []byte) []byte { return bytes.Replace(b, []byte("title: Deploy"), []byte("title: Deploys"), 1) },
	} {
		if _, intact, piece := Ingested(edit(bytes.Clone(data))); intact || piece != "" {
			t.Errorf("an edited file is intact:\n%s", edit(bytes.Clone(data)))
		}
	}
	// Line endings alone (git's autocrlf on Windows) are form, not an edit.
	crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	if _, intact, piece := Ingested(crlf); !intact || piece == "" {
		t.Errorf("CRLF: intact %v, piece %q", intact, piece)
	}
	if _, intact, _ := Ingested(bytes.Replace(crlf, []byte("5%"), []byte("10%"), 1)); intact {
		t.Errorf("an edit in CRLF is intact")
	}
	// Stamping again (the next ingest) replaces the stamp, never adds one.
	Stamp(parsed, "0123456789abcdef0123456789abcdef")
	if again := Render(parsed); !bytes.Equal(again, data) {
		t.Errorf("stamped twice:\n%s\nwant\n%s", again, data)
	}
}

// A file without a stamp, or whose stamp is not in its front matter, is
// not the ingest's.
func TestIngestedUnstamped(t *testing.T) {
	_, data := stampedEntry(t)
	line := data[bytes.Index(data, []byte(StampKey)):]
	line = line[:bytes.IndexByte(line, '\n')+1]
	body := append(bytes.Replace(bytes.Clone(data), line, nil, 1), line...)
	for name, b := range map[string][]byte{
		"none":          bytes.Replace(bytes.Clone(data), line, nil, 1),
		"in the body":   body,
		"no front":      []byte(string(line) + "text\n"),
		"front unended": []byte("---\n" + string(line)),
	} {
		if stamped, intact, _ := Ingested(b); stamped || intact {
			t.Errorf("%s: stamped %v intact %v", name, stamped, intact)
		}
	}
}
