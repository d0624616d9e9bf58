package main

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/arbormem/arbor/core/curate"
	"github.com/arbormem/arbor/core/tree"
)

// unit is one entry of a benchmark tree: what the engine sees (path, title,
// provenance, body) and, kept by the harness alone, what it stands for.
//
// The same units are built by corpus.mjs for MiniSearch and the wasm run;
// keep the two in step.
type unit struct {
	Path   string
	Title  string
	Task   string // rawConcept.task: provenance (turn id, session)
	Author string // rawConcept.author: the speaker
	Flow   string // rawConcept.flow: the conversation around it (LoCoMo)
	Body   string // the narrative: what was said
	Time   time.Time

	// Gold-side identity, never shown to the engine.
	Turn    TurnID // LoCoMo: the turn
	Session int    // LoCoMo: session number; LongMemEval: haystack position
}

// reason is the one reason every benchmark operation gives (DESIGN §3
// requires one); it is the same for every entry, so it does not rank.
const reason = "conversation memory import"

// operation turns a unit into the ADD a user (or an agent) would send.
func (u unit) operation() curate.Operation {
	rc := &tree.RawConcept{Task: u.Task, Author: u.Author, Flow: u.Flow}
	if !u.Time.IsZero() {
		rc.Timestamp = u.Time.UTC().Format(time.RFC3339)
	}
	return curate.Operation{
		Type:    curate.OpAdd,
		Path:    u.Path,
		Title:   u.Title,
		Content: curate.Content{RawConcept: rc, Narrative: &curate.Narrative{Text: u.Body}},
		Reason:  reason,
	}
}

// searchText is the content field of the peers that index units
// (MiniSearch): the provenance and the body, as the engine's content field
// holds them.
func (u unit) searchText() string {
	return strings.Join([]string{u.Task, u.Author, u.Flow, u.Body}, "\n")
}

// snake makes a path segment: lower case letters and digits joined by '_'.
func snake(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(r)
			continue
		}
		under = true
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}

// dayText is "8 May 2023".
func dayText(t time.Time) string { return t.Format("2 January 2006") }

// locomoTurnText is what a turn says, an image turn's caption included.
func locomoTurnText(t locomoTurn) string {
	text := strings.TrimSpace(t.Text)
	if c := strings.TrimSpace(t.Caption); c != "" {
		text += " [shares a photo: " + c + "]"
	}
	return text
}

// locomoUnits lays a conversation out as a tree, one entry per turn:
//
//	<speaker_a>_and_<speaker_b>/session_07/turn_012.md
//	title "Caroline on 8 May 2023"; rawConcept task "Turn D7:12 of session 7", author the speaker
//
// One entry per turn makes turn-level Recall@K the share of gold turns in
// the first K entries. Numbers in paths are zero-padded so that they never
// equal a number in a question.
//
// A turn alone is often a reply that only makes sense with what it answers
// ("Yup, we just did it yesterday!"), so with context > 0 the entry's flow
// holds the context turns before it in the session, "In reply to <speaker>:
// <text>", as a curator writing a self-contained memory would add them.
func locomoUnits(c *locomoConv, context int) []unit {
	domain := snake(c.SpeakerA + " and " + c.SpeakerB)
	var out []unit
	for _, s := range c.Sessions {
		topic := fmt.Sprintf("session_%02d", s.N)
		for i, t := range s.Turns {
			var flow []string
			for _, p := range s.Turns[max(i-context, 0):i] {
				flow = append(flow, "In reply to "+p.Speaker+": "+locomoTurnText(p))
			}
			title := t.Speaker
			if !s.Date.IsZero() {
				title += " on " + dayText(s.Date)
			}
			out = append(out, unit{
				Path:    fmt.Sprintf("%s/%s/turn_%03d.md", domain, topic, t.ID.Turn),
				Title:   title,
				Task:    fmt.Sprintf("Turn %s of session %d", t.ID, s.N),
				Author:  t.Speaker,
				Flow:    strings.Join(flow, "\n"),
				Body:    locomoTurnText(t),
				Time:    s.Date,
				Turn:    t.ID,
				Session: s.N,
			})
		}
	}
	return out
}

// lmeUnits lays a question's haystack out as a tree: one entry per session
// (turnsPerEntry 0), or per group of that many turns:
//
//	chats/2023_05/session_07.md (or session_07_part_02.md)
//	title "Chat on 20 May 2023"; rawConcept task "Chat with the assistant", author "user"
//
// The body is the session's messages, "**User:** …" / "**Assistant:** …".
// Session ids and has_answer never appear.
func lmeUnits(q *lmeQuestion, turnsPerEntry int) []unit {
	var out []unit
	for i, msgs := range q.Sessions {
		date := parseLMEDate(q.Dates[i])
		topic := "undated"
		title := "Chat"
		if !date.IsZero() {
			topic = date.Format("2006_01")
			title += " on " + dayText(date)
		}
		groups := [][]lmeMessage{msgs}
		if turnsPerEntry > 0 && len(msgs) > turnsPerEntry {
			groups = nil
			for j := 0; j < len(msgs); j += turnsPerEntry {
				groups = append(groups, msgs[j:min(j+turnsPerEntry, len(msgs))])
			}
		}
		for g, part := range groups {
			p := fmt.Sprintf("chats/%s/session_%02d.md", topic, i+1)
			t := title
			if len(groups) > 1 {
				p = fmt.Sprintf("chats/%s/session_%02d_part_%02d.md", topic, i+1, g+1)
				t += fmt.Sprintf(" (part %d)", g+1)
			}
			out = append(out, unit{
				Path: p, Title: t, Task: "Chat with the assistant", Author: "user",
				Body: lmeBody(part), Time: date, Session: i,
			})
		}
	}
	return out
}

func lmeBody(msgs []lmeMessage) string {
	parts := make([]string, 0, len(msgs))
	for _, m := range msgs {
		role := "User"
		if m.Role == "assistant" {
			role = "Assistant"
		}
		parts = append(parts, "**"+role+":** "+strings.TrimSpace(m.Content))
	}
	return strings.Join(parts, "\n\n")
}

// lmeSessionText is a whole session as one plain document (the BM25 peer).
func lmeSessionText(msgs []lmeMessage) string {
	parts := make([]string, 0, len(msgs))
	for _, m := range msgs {
		parts = append(parts, m.Role+": "+strings.TrimSpace(m.Content))
	}
	return strings.Join(parts, "\n")
}

// locomoSessionText is a whole LoCoMo session as one plain document.
func locomoSessionText(s locomoSession) string {
	parts := make([]string, 0, len(s.Turns))
	for _, t := range s.Turns {
		parts = append(parts, t.Speaker+": "+locomoTurnText(t))
	}
	return strings.Join(parts, "\n")
}
