package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/engine"
	"github.com/arbormem/arbor/core/host"
)

// locomoFile and lmeFile are small transcripts in the benchmarks' shapes:
// a repeated turn id, an image caption, replies with context; two sessions
// of a chat with an assistant, one of them undated.
const locomoFile = `[{"sample_id": "conv-99",
  "conversation": {
    "speaker_a": "Caroline", "speaker_b": "Melanie",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
      {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! I went to the LGBTQ support group yesterday."},
      {"speaker": "Melanie", "dia_id": "D1:2", "text": "That's great! How did it feel?"},
      {"speaker": "Caroline", "dia_id": "D1:3", "text": " Really moving. ", "blip_caption": "a photo of a poster"},
      {"speaker": "Melanie", "dia_id": "D1:3", "text": "You'd be wonderful at it."}
    ],
    "session_2_date_time": "7:05 pm on 25 May, 2023",
    "session_2": [
      {"speaker": "Melanie", "dia_id": "D2:1", "text": "We went camping at the lake last weekend."},
      {"speaker": "Caroline", "dia_id": "D2:2", "text": "Yup, sounds like you did it at last!"}
    ]
  },
  "qa": [{"question": "When did Caroline go to the support group?", "evidence": ["D1:1"], "category": 2}]
}]`

const lmeFile = `[{"question_id": "q1", "question_type": "single-session-user", "question": "What car did I buy?",
  "question_date": "2023/06/01 (Thu) 10:00",
  "haystack_session_ids": ["answer_s1", "s2"],
  "haystack_dates": ["2023/05/20 (Sat) 02:21", "not a date"],
  "haystack_sessions": [
    [{"role": "user", "content": "I finally bought a Mazda CX-5 yesterday!", "has_answer": true},
     {"role": "assistant", "content": " Congratulations! "}],
    [{"role": "User", "content": "Suggest a recipe with chickpeas."}]
  ],
  "answer_session_ids": ["answer_s1"]}]`

// TestLayoutMatchesIngest checks the harness's layout against `arbor
// ingest`'s: the engine ingests each transcript, and every unit the
// harness makes of it, curated into a second tree, reads back as the entry
// ingestion wrote at that path, but for what only a file gives: the
// reason, the source file and, for a chat with an assistant, a topic named
// after the file.
func TestLayoutMatchesIngest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	convs, _, err := loadLocomo(write("locomo.json", locomoFile))
	if err != nil {
		t.Fatal(err)
	}
	qs, _, err := loadLongMemEval(write("haystack.json", lmeFile))
	if err != nil {
		t.Fatal(err)
	}
	context := 2
	cases := []struct {
		file  string
		text  string
		units []unit
		path  func(string) string // a unit's path as ingestion places it
	}{
		{"locomo.json", locomoFile, locomoUnits(convs[0], context), func(p string) string { return p }},
		{"haystack.json", lmeFile, lmeUnits(qs[0], 0), func(p string) string { return strings.Replace(p, "chats/", "chats/haystack/", 1) }},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			ingested := openTree(t)
			res, err := ingested.Ingest(api.IngestParams{Files: []api.SourceFile{{Name: tc.file, Content: tc.text}}, IngestOptions: api.IngestOptions{ContextTurns: &context}})
			if err != nil || res.Summary.FailedFiles != 0 {
				t.Fatalf("ingest: %+v, %v", res, err)
			}
			if res.Summary.Added != len(tc.units) {
				t.Errorf("ingestion wrote %d entries, the harness lays out %d", res.Summary.Added, len(tc.units))
			}
			curated := openTree(t)
			for _, u := range tc.units {
				if a := curated.Curate(api.CurateParams{Operations: []api.Operation{u.operation()}}).Applied[0]; a.Status != api.StatusSuccess {
					t.Fatalf("curate %s: %s", u.Path, a.Message)
				}
				mine, err := curated.Read(api.ReadParams{Path: u.Path})
				if err != nil {
					t.Fatal(err)
				}
				theirs, err := ingested.Read(api.ReadParams{Path: tc.path(u.Path)})
				if err != nil {
					t.Errorf("%s: ingestion wrote no such entry: %v", u.Path, err)
					continue
				}
				if a, b := withoutProvenance(mine.Markdown), withoutProvenance(theirs.Markdown); a != b {
					t.Errorf("%s differs:\n--- harness\n%s\n--- ingest\n%s", u.Path, a, b)
				}
			}
		})
	}
}

func openTree(t *testing.T) *engine.Engine {
	t.Helper()
	eng, _, err := engine.Open(engine.Options{FS: host.NewMemFS(), Clock: host.FixedClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// provenance is what an entry says only because it came from a file: its
// reason section, the source file of its raw concept and the ingest's stamp.
var provenance = regexp.MustCompile(`(?m)^## Reason\n[^\n]*\n\n|^\*\*Files:\*\* [^\n]*\n|^ingestStamp: [^\n]*\n`)

func withoutProvenance(md string) string { return provenance.ReplaceAllString(md, "") }
