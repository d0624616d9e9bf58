package ingest

import (
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

func TestSplitChatTable(t *testing.T) {
	chat := api.FormatChat
	const may8 = "2023-05-08T13:56:00Z"
	runSplit(t, []splitCase{
		// LoCoMo: sessions in number order, whatever the key order; a
		// dia_id of another session or a repeated one gives way to the
		// turn's position; the benchmark's questions are not content.
		{name: "LoCoMo", file: "loco.json", format: chat,
			content: `{"sample_id": "s1", "qa": [{"question": "Who has a cat?"}], "conversation": {"speaker_a": "Ann", "speaker_b": "Bo",
  "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Later."}],
  "session_2_date_time": "9:00 am on 3 June, 2023",
  "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": " Hi "}, {"speaker": "Bo", "dia_id": "D1:2", "text": "Hey", "blip_caption": "a cat"},
                {"speaker": "Ann", "dia_id": "D9:9", "text": "Bye"}, {"speaker": "Bo", "dia_id": "D1:2", "text": "Dup"}],
  "session_1_date_time": "1:56 pm on 8 May, 2023",
  "session_3": []}}`,
			want: []piece{
				{path: "ann_and_bo/session_01/turn_001.md", title: "Ann on 8 May 2023", text: "Hi", task: "Turn D1:1 of session 1", author: "Ann", stamp: may8},
				{path: "ann_and_bo/session_01/turn_002.md", title: "Bo on 8 May 2023", text: "Hey [shares a photo: a cat]", task: "Turn D1:2 of session 1", author: "Bo", stamp: may8,
					flow: "In reply to Ann: Hi"},
				{path: "ann_and_bo/session_01/turn_003.md", title: "Ann on 8 May 2023", text: "Bye", task: "Turn D1:3 of session 1", author: "Ann", stamp: may8,
					flow: "In reply to Ann: Hi\nIn reply to Bo: Hey [shares a photo: a cat]"},
				{path: "ann_and_bo/session_01/turn_004.md", title: "Bo on 8 May 2023", text: "Dup", task: "Turn D1:4 of session 1", author: "Bo", stamp: may8,
					flow: "In reply to Bo: Hey [shares a photo: a cat]\nIn reply to Ann: Bye"},
				{path: "ann_and_bo/session_02/turn_001.md", title: "Bo on 3 June 2023", text: "Later.", task: "Turn D2:1 of session 2", author: "Bo", stamp: "2023-06-03T09:00:00Z"},
			}},
		{name: "LoCoMo without the wrapper, one speaker, no ids or dates", file: "solo.json", format: chat,
			content: `{"speaker_a": "Ann", "session_1": [{"speaker": "Ann", "text": "solo"}]}`,
			want:    []piece{{path: "ann/session_01/turn_001.md", title: "Ann", text: "solo", task: "Turn D1:1 of session 1", author: "Ann"}}},
		{name: "LoCoMo list of conversations", file: "many.json", format: chat,
			content: `[{"conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "one"}]}},
 {"conversation": {"speaker_a": "C", "speaker_b": "D", "session_1": [{"speaker": "D", "dia_id": "D1:1", "text": "two"}]}}]`,
			want: []piece{
				{path: "a_and_b/session_01/turn_001.md", title: "A", text: "one", task: "Turn D1:1 of session 1", author: "A"},
				{path: "c_and_d/session_01/turn_001.md", title: "D", text: "two", task: "Turn D1:1 of session 1", author: "D"},
			}},
		// LongMemEval: one entry per session with the assistant; a session
		// shared by two questions (same id) is kept once; empty messages
		// are dropped; answers, questions and ids are never written.
		{name: "LongMemEval", file: "lme.json", format: chat,
			content: `[{"question_id": "q1", "question": "What car?", "answer": "Mazda", "haystack_session_ids": ["s1", "s2"],
  "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/04/02 (Sun) 18:40"],
  "haystack_sessions": [[{"role": "user", "content": "I bought a car.", "has_answer": true}, {"role": "assistant", "content": "Nice!"}], [{"role": "user", "content": "Curry recipe?"}]]},
 {"question_id": "q2", "haystack_session_ids": ["s2", "s3"], "haystack_dates": ["2023/04/02 (Sun) 18:40", "2023/05/28 (Sun) 09:00"],
  "haystack_sessions": [[{"role": "user", "content": "Curry recipe?"}], [{"role": "user", "content": "Tyres?"}, {"role": "assistant", "content": "  "}]]}]`,
			want: []piece{
				{path: "chats/lme/2023_05/session_01.md", title: "Chat on 20 May 2023", text: "**User:** I bought a car.\n\n**Assistant:** Nice!", task: "Chat with the assistant", author: "user", stamp: "2023-05-20T02:21:00Z"},
				{path: "chats/lme/2023_04/session_02.md", title: "Chat on 2 April 2023", text: "**User:** Curry recipe?", task: "Chat with the assistant", author: "user", stamp: "2023-04-02T18:40:00Z"},
				{path: "chats/lme/2023_05/session_03.md", title: "Chat on 28 May 2023", text: "**User:** Tyres?", task: "Chat with the assistant", author: "user", stamp: "2023-05-28T09:00:00Z"},
			}},
		{name: "LongMemEval without ids or dates", file: "x.json", format: chat,
			content: `{"haystack_sessions": [[{"role": "user", "content": "a"}], [{"role": "user", "content": "a"}]]}`,
			want: []piece{
				{path: "chats/x/undated/session_01.md", title: "Chat", text: "**User:** a", task: "Chat with the assistant", author: "user"},
				{path: "chats/x/undated/session_02.md", title: "Chat", text: "**User:** a", task: "Chat with the assistant", author: "user"},
			}},
		// Generic sessions: objects with messages or turns, or bare lists;
		// a date on the session or its first message; content parts joined.
		{name: "generic sessions between people", file: "g.json", format: chat,
			content: `{"participants": ["Ann", "Bo", " "], "sessions": [
  {"date": "2024-01-02", "messages": [{"speaker": "Ann", "text": "x", "id": "m-7"}]},
  [{"speaker": "Bo", "text": "y", "date": "2024-02-03T10:00:00Z"}],
  {"turns": [{"role": "Ann", "content": [{"type": "text", "text": "p1"}, "p2", {"type": "image"}]}]},
  {"messages": []}]}`,
			want: []piece{
				{path: "ann_and_bo/session_01/turn_001.md", title: "Ann on 2 January 2024", text: "x", task: "Turn m-7 of session 1", author: "Ann", stamp: "2024-01-02T00:00:00Z"},
				{path: "ann_and_bo/session_02/turn_001.md", title: "Bo on 3 February 2024", text: "y", task: "Turn 1 of session 2", author: "Bo", stamp: "2024-02-03T10:00:00Z"},
				{path: "ann_and_bo/session_03/turn_001.md", title: "Ann", text: "p1\np2", task: "Turn 1 of session 3", author: "Ann"},
			}},
		// Roles in any case, the author field; the folder and title keep the
		// date as written, the timestamp is UTC.
		{name: "generic chat with the assistant", file: "export.json", format: chat,
			content: `{"sessions": [{"created_at": "2025-12-31T23:30:00-02:00", "messages": [{"role": "system", "content": "Be brief."}, {"role": "USER", "content": "Hi"}, {"author": "assistant", "content": "Hello"}]}]}`,
			want: []piece{{path: "chats/export/2025_12/session_01.md", title: "Chat on 31 December 2025", text: "**System:** Be brief.\n\n**User:** Hi\n\n**Assistant:** Hello",
				task: "Chat with the assistant", author: "user", stamp: "2026-01-01T01:30:00Z"}}},
		// Speakers that are not roles make it a conversation between people,
		// named in order of appearance.
		{name: "generic sessions without participants", file: "p.json", format: chat,
			content: `{"sessions": [[{"speaker": "Zoe", "text": "a"}, {"speaker": "Al", "text": "b"}, {"speaker": "Zoe", "text": "c"}]]}`,
			want: []piece{
				{path: "zoe_and_al/session_01/turn_001.md", title: "Zoe", text: "a", task: "Turn 1 of session 1", author: "Zoe"},
				{path: "zoe_and_al/session_01/turn_002.md", title: "Al", text: "b", task: "Turn 2 of session 1", author: "Al", flow: "In reply to Zoe: a"},
				{path: "zoe_and_al/session_01/turn_003.md", title: "Zoe", text: "c", task: "Turn 3 of session 1", author: "Zoe", flow: "In reply to Zoe: a\nIn reply to Al: b"},
			}},
		{name: "bare list of messages", file: "talk.json", format: chat,
			content: `[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]`,
			want:    []piece{{path: "chats/talk/undated/session_01.md", title: "Chat", text: "**User:** hi\n\n**Assistant:** yo", task: "Chat with the assistant", author: "user"}}},
		{name: "Domain option for a chat with the assistant", file: "talk.json", format: chat, opts: api.IngestOptions{Domain: "Support"},
			content: `[{"role": "user", "content": "hi"}]`,
			want:    []piece{{path: "support/talk/undated/session_01.md", title: "Chat", text: "**User:** hi", task: "Chat with the assistant", author: "user"}}},
		{name: "Domain option for people", file: "p.jsonl", format: chat, opts: api.IngestOptions{Domain: "Family"},
			content: `{"speaker": "Ann", "text": "a"}`,
			want:    []piece{{path: "family/session_01/turn_001.md", title: "Ann", text: "a", task: "Turn 1 of session 1", author: "Ann"}}},
		// Not a chat: a list whose items lack a role or a text is records.
		{name: "messages without text are records", file: "r.json", format: api.FormatJSON,
			content: `[{"role": "user", "content": ""}]`,
			want:    []piece{{path: "data/r/record_1.md", title: "Record 1", text: "- **role**: user", task: "Record 1 (line 1)"}}},
		{name: "sessions that are not a list are records", file: "s.json", format: api.FormatJSON,
			content: `{"sessions": "none"}`,
			want:    []piece{{path: "data/s/sessions.md", title: "sessions", text: "none", task: `Key "sessions"`}}},
	})
}

// ContextTurns sets how many earlier turns a turn's flow quotes.
func TestChatContextTurns(t *testing.T) {
	content := `{"speaker": "A", "text": "t1"}
{"speaker": "B", "text": "t2"}
{"speaker": "A", "text": "t3"}
{"speaker": "B", "text": "t4"}`
	tests := []struct {
		name string
		n    *int
		flow string
	}{
		{"nil means two", nil, "In reply to B: t2\nIn reply to A: t3"},
		{"zero", intp(0), ""},
		{"negative is zero", intp(-1), ""},
		{"one", intp(1), "In reply to A: t3"},
		{"more than there are", intp(10), "In reply to A: t1\nIn reply to B: t2\nIn reply to A: t3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps, _, err := Split(api.SourceFile{Name: "c.jsonl", Content: content}, api.IngestOptions{ContextTurns: tc.n})
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 4 {
				t.Fatalf("%d pieces, want 4", len(ps))
			}
			if got := ps[3].Flow; got != tc.flow {
				t.Errorf("flow of turn 4 = %q, want %q", got, tc.flow)
			}
			if ps[0].Flow != "" {
				t.Errorf("flow of turn 1 = %q, want none", ps[0].Flow)
			}
			for _, p := range ps[1:] {
				if p.Flow != "" && !strings.HasPrefix(p.Flow, tree.ReplyPrefix) {
					t.Errorf("flow %q does not start with %q", p.Flow, tree.ReplyPrefix)
				}
			}
		})
	}
}

func TestParseDate(t *testing.T) {
	utc := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, time.UTC) }
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2023-05-20T02:21:00Z", utc(2023, 5, 20, 2, 21)},
		{"2023-05-20T02:21:00+02:00", utc(2023, 5, 20, 0, 21)},
		{"2023-05-20T02:21:00", utc(2023, 5, 20, 2, 21)},
		{"2023-05-20 02:21:00", utc(2023, 5, 20, 2, 21)},
		{"2023-05-20 02:21", utc(2023, 5, 20, 2, 21)},
		{" 2023-05-20 ", utc(2023, 5, 20, 0, 0)},
		{"2023/05/20 02:21", utc(2023, 5, 20, 2, 21)},
		{"2023/05/20 (Sat) 02:21", utc(2023, 5, 20, 2, 21)},
		{"2023/05/20", utc(2023, 5, 20, 0, 0)},
		{"1:56 pm on 8 May, 2023", utc(2023, 5, 8, 13, 56)},
		{"10:05 am on 12 Jan, 2024", utc(2024, 1, 12, 10, 5)},
		{"1:56 PM on 8 May, 2023", utc(2023, 5, 8, 13, 56)},
		{"Mon, 02 Jan 2006 15:04:05 -0700", utc(2006, 1, 2, 22, 4).Add(5 * time.Second)},
		{"Mon, 02 Jan 2006 15:04:05 UTC", utc(2006, 1, 2, 15, 4).Add(5 * time.Second)},
		{"20260302T140000Z", utc(2026, 3, 2, 14, 0)},
		{"20260302T140000", utc(2026, 3, 2, 14, 0)},
		{"20260302", utc(2026, 3, 2, 0, 0)},
		// Anything else is unknown.
		{"", time.Time{}},
		{"yesterday", time.Time{}},
		{"(Sat)", time.Time{}},
		{"2023/05/20 (Sat", time.Time{}},
		{"20 May 2023", time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := ParseDate(tc.in); !got.Equal(tc.want) || got.IsZero() != tc.want.IsZero() {
				t.Errorf("ParseDate(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}
