package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/arbormem/arbor/bench/internal/dataset"
	"github.com/arbormem/arbor/core/api"
)

// unit is one entry of a benchmark tree: what the engine sees (path, title,
// provenance, body) and, kept by the harness alone, what it stands for.
//
// The entries are laid out as `arbor ingest` lays out chat transcripts
// (docs/ABI.md §4.11): one entry per turn of a conversation between
// people, one per session (or part of one) of a chat with an assistant.
// The harness lays them out itself, since it keeps the gold identity of
// each entry, which ingestion has no reason to return;
// TestLayoutMatchesIngest checks, through the engine's ingest method, that
// the two agree. corpus.mjs builds the same units for MiniSearch and the
// wasm run; keep the three in step.
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

// reason is the one reason every benchmark operation gives (curate
// requires one); it is the same for every entry, so it does not rank.
const reason = "conversation memory import"

// operation is the ADD that writes the unit, as ingestion builds it
// (without a source file: the benchmark's units come from no file).
func (u unit) operation() api.Operation {
	rc := &api.RawConcept{Task: u.Task, Flow: u.Flow, Author: u.Author}
	if !u.Time.IsZero() {
		rc.Timestamp = u.Time.UTC().Format(time.RFC3339)
	}
	return api.Operation{
		Type:    api.OpAdd,
		Path:    u.Path,
		Title:   u.Title,
		Content: api.Content{RawConcept: rc, Narrative: &api.Narrative{Text: u.Body}},
		Reason:  reason,
	}
}

// searchText is the content field of the peers that index units
// (MiniSearch): the provenance and the body, as the engine's content field
// holds them.
func (u unit) searchText() string {
	return strings.Join([]string{u.Task, u.Author, u.Flow, u.Body}, "\n")
}

// replyPrefix begins each line of a turn's flow, the turns it replies to:
// the engine's evidence rules recognize a piece of an exchange by it.
const replyPrefix = "In reply to "

// maxPieceBytes is the largest text ingestion keeps in one entry; it cuts
// a longer one into parts, which the harness does not mirror: checked
// says so rather than lay such a text out otherwise.
const maxPieceBytes = 256 << 10

func checked(u unit) unit {
	if len(u.Body) > maxPieceBytes {
		panic(fmt.Sprintf("bench: %s: %d bytes, more than ingestion keeps in one entry", u.Path, len(u.Body)))
	}
	return u
}

// locomoUnits lays a conversation out one entry per turn
// (<speaker_a>_and_<speaker_b>/session_07/turn_012.md), with the context
// preceding turns of the session in each entry's flow. One entry per turn
// makes turn-level Recall@K the share of gold turns in the first K
// entries.
func locomoUnits(c *locomoConv, context int) []unit {
	domain := dataset.Slug(c.SpeakerA + " and " + c.SpeakerB)
	var out []unit
	for _, s := range c.Sessions {
		used := map[string]int{}
		for i, t := range s.Turns {
			var flow []string
			for _, p := range s.Turns[max(i-context, 0):i] {
				flow = append(flow, replyPrefix+p.Speaker+": "+locomoTurnText(p))
			}
			title := t.Speaker
			if !s.Date.IsZero() {
				title += " on " + dataset.DayText(s.Date)
			}
			out = append(out, checked(unit{
				Path:  uniquePath(used, fmt.Sprintf("%s/session_%02d", domain, s.N), fmt.Sprintf("turn_%03d", t.ID.Turn)),
				Title: title, Task: fmt.Sprintf("Turn %s of session %d", t.ID, s.N), Author: t.Speaker,
				Flow: strings.Join(flow, "\n"), Body: locomoTurnText(t),
				Time: s.Date, Turn: t.ID, Session: s.N,
			}))
		}
	}
	return out
}

// lmeUnits lays a question's haystack out one entry per session, or per
// group of turnsPerEntry turns (chats/2023_05/session_07.md,
// session_07_part_02.md), the messages as "**User:** …" /
// "**Assistant:** …". Session ids and has_answer never reach the units.
func lmeUnits(q *lmeQuestion, turnsPerEntry int) []unit {
	var out []unit
	for i, msgs := range q.Sessions {
		date := parseLMEDate(q.Dates[i])
		topic, title := "undated", "Chat"
		if !date.IsZero() {
			topic, title = date.Format("2006_01"), title+" on "+dataset.DayText(date)
		}
		groups := [][]lmeMessage{msgs}
		if turnsPerEntry > 0 && len(msgs) > turnsPerEntry {
			groups = nil
			for j := 0; j < len(msgs); j += turnsPerEntry {
				groups = append(groups, msgs[j:min(j+turnsPerEntry, len(msgs))])
			}
		}
		for g, part := range groups {
			name, t := fmt.Sprintf("session_%02d", i+1), title
			if len(groups) > 1 {
				name += fmt.Sprintf("_part_%02d", g+1)
				t += fmt.Sprintf(" (part %d)", g+1)
			}
			out = append(out, checked(unit{
				Path: "chats/" + topic + "/" + name + ".md", Title: t,
				Task: "Chat with the assistant", Author: "user", Body: lmeText(part),
				Time: date, Session: i,
			}))
		}
	}
	return out
}

// lmeText is a session's messages, "**User:** …" / "**Assistant:** …".
func lmeText(msgs []lmeMessage) string {
	parts := make([]string, 0, len(msgs))
	for _, m := range msgs {
		who := strings.TrimSpace(m.Role)
		if r := strings.ToLower(who); isRole(r) {
			who = strings.ToUpper(r[:1]) + r[1:]
		}
		parts = append(parts, "**"+who+":** "+strings.TrimSpace(m.Content))
	}
	return strings.Join(parts, "\n\n")
}

// uniquePath is folder/name.md, or the next free name_2, name_3… when the
// folder already holds that name, as ingestion names repeated titles.
func uniquePath(used map[string]int, folder, name string) string {
	key := folder + "/" + name
	if n := used[key]; n > 0 {
		base := key
		for used[key] > 0 {
			n++
			key = fmt.Sprintf("%s_%d", base, n)
		}
		used[base] = n
	}
	used[key]++
	return key + ".md"
}

// locomoTurnText is what a turn says, an image turn's caption included.
func locomoTurnText(t locomoTurn) string {
	text := strings.TrimSpace(t.Text)
	if c := strings.TrimSpace(t.Caption); c != "" {
		text += " [shares a photo: " + c + "]"
	}
	return text
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
