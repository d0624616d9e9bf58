package main

import (
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/ingest"
)

// unit is one entry of a benchmark tree: what the engine sees (path, title,
// provenance, body) and, kept by the harness alone, what it stands for.
//
// The entries are laid out by core/ingest's chat-transcript path
// (ingest.ChatPieces), the one `arbor ingest` and mem.ingest use for chat
// files; the harness only converts its data to ingest.Conversation and
// keeps the gold identity of each piece. corpus.mjs builds the same units
// for MiniSearch and the wasm run; keep the two in step.
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

	piece ingest.Piece
}

// reason is the one reason every benchmark operation gives (DESIGN §3
// requires one); it is the same for every entry, so it does not rank.
const reason = "conversation memory import"

// operation is the ADD that writes the unit, as ingestion builds it.
func (u unit) operation() api.Operation {
	return u.piece.Operation(api.OpAdd, reason)
}

// searchText is the content field of the peers that index units
// (MiniSearch): the provenance and the body, as the engine's content field
// holds them.
func (u unit) searchText() string {
	return strings.Join([]string{u.Task, u.Author, u.Flow, u.Body}, "\n")
}

// newUnit keeps a piece with its gold identity.
func newUnit(p ingest.Piece, t time.Time, turn TurnID, session int) unit {
	return unit{
		Path: p.Path(), Title: p.Title, Task: p.Task, Author: p.Author, Flow: p.Flow, Body: p.Text,
		Time: t, Turn: turn, Session: session, piece: p,
	}
}

// locomoUnits lays a conversation out one entry per turn (see
// ingest.ChatPieces: <speaker_a>_and_<speaker_b>/session_07/turn_012.md),
// with the context preceding turns of the session in each entry's flow.
// One entry per turn makes turn-level Recall@K the share of gold turns in
// the first K entries.
func locomoUnits(c *locomoConv, context int) []unit {
	var out []unit
	for _, s := range c.Sessions {
		se := ingest.Session{N: s.N, Date: s.Date}
		for _, t := range s.Turns {
			se.Turns = append(se.Turns, ingest.Turn{ID: t.ID.String(), N: t.ID.Turn, Speaker: t.Speaker, Text: t.Text, Caption: t.Caption})
		}
		conv := ingest.Conversation{Participants: []string{c.SpeakerA, c.SpeakerB}, Sessions: []ingest.Session{se}}
		for i, p := range ingest.ChatPieces(conv, ingest.ChatOptions{ContextTurns: context}) {
			out = append(out, newUnit(p, s.Date, s.Turns[i].ID, s.N))
		}
	}
	return out
}

// lmeUnits lays a question's haystack out one entry per session, or per
// group of turnsPerEntry turns (see ingest.ChatPieces:
// chats/2023_05/session_07.md, session_07_part_02.md), the messages as
// "**User:** …" / "**Assistant:** …". Session ids and has_answer never
// reach the pieces.
func lmeUnits(q *lmeQuestion, turnsPerEntry int) []unit {
	var out []unit
	for i, msgs := range q.Sessions {
		se := ingest.Session{N: i + 1, Date: parseLMEDate(q.Dates[i])}
		for j, m := range msgs {
			se.Turns = append(se.Turns, ingest.Turn{N: j + 1, Speaker: m.Role, Text: m.Content})
		}
		conv := ingest.Conversation{Sessions: []ingest.Session{se}}
		for _, p := range ingest.ChatPieces(conv, ingest.ChatOptions{TurnsPerEntry: turnsPerEntry}) {
			out = append(out, newUnit(p, se.Date, TurnID{}, i))
		}
	}
	return out
}

// locomoTurnText is what a turn says, an image turn's caption included.
func locomoTurnText(t locomoTurn) string {
	return ingest.Turn{Text: t.Text, Caption: t.Caption}.Said()
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
