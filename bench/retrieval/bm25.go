package main

import (
	"context"
	"fmt"
	"time"

	"github.com/blugelabs/bluge"
)

// plainIndex is the untuned peer: bluge with its defaults (the standard
// analyzer: Unicode words, lower case, no stemming, no stop words; BM25
// with k1 = 1.2, b = 0.75), one text field, a match query with OR.
type plainIndex struct {
	w *bluge.Writer
	r *bluge.Reader
}

const plainField = "content"

func newPlainIndex(ids, texts []string) (*plainIndex, error) {
	w, err := bluge.OpenWriter(bluge.InMemoryOnlyConfig())
	if err != nil {
		return nil, err
	}
	b := bluge.NewBatch()
	for i, id := range ids {
		d := bluge.NewDocument(id)
		d.AddField(bluge.NewTextField(plainField, texts[i]))
		b.Update(d.ID(), d)
	}
	if err := w.Batch(b); err != nil {
		_ = w.Close()
		return nil, err
	}
	r, err := w.Reader()
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	return &plainIndex{w: w, r: r}, nil
}

type scored struct {
	id    string
	score float64
}

// search returns at most limit ids, best first.
func (x *plainIndex) search(q string, limit int) ([]scored, error) {
	req := bluge.NewTopNSearch(limit, bluge.NewMatchQuery(q).SetField(plainField)).SortBy([]string{"-_score", "_id"})
	it, err := x.r.Search(context.Background(), req)
	if err != nil {
		return nil, err
	}
	var out []scored
	for {
		m, err := it.Next()
		if err != nil {
			return nil, err
		}
		if m == nil {
			return out, nil
		}
		s := scored{score: m.Score}
		err = m.VisitStoredFields(func(field string, value []byte) bool {
			if field == "_id" {
				s.id = string(value)
			}
			return true
		})
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
}

func (x *plainIndex) close() {
	_ = x.r.Close()
	_ = x.w.Close()
}

// plainLocomo is the BM25 peer over one LoCoMo conversation: an index of
// whole sessions (the peer proper) and an index of single turns (used to
// order turns inside a session, and as a second, per-turn peer).
type plainLocomo struct {
	sessions, turns *plainIndex
	order           map[int][]TurnID // a session's turns in dialogue order
	nSessions       int
	nTurns          int
}

func buildPlainLocomo(c *locomoConv) (*plainLocomo, error) {
	var sids, stexts, tids, ttexts []string
	p := &plainLocomo{order: map[int][]TurnID{}}
	for _, s := range c.Sessions {
		sids = append(sids, fmt.Sprint(s.N))
		stexts = append(stexts, locomoSessionText(s))
		for _, t := range s.Turns {
			tids = append(tids, t.ID.String())
			ttexts = append(ttexts, t.Speaker+": "+locomoTurnText(t))
			p.order[s.N] = append(p.order[s.N], t.ID)
		}
	}
	var err error
	if p.sessions, err = newPlainIndex(sids, stexts); err != nil {
		return nil, err
	}
	if p.turns, err = newPlainIndex(tids, ttexts); err != nil {
		p.sessions.close()
		return nil, err
	}
	p.nSessions, p.nTurns = len(sids), len(tids)
	return p, nil
}

// rankSessions ranks turns through whole-session documents: sessions by
// their BM25 score, and within a session its turns by their own BM25 score
// (turns that match nothing last, in dialogue order). The first K turns of
// that list are the peer's top K; its first turn gives the session for Hit@1.
func (p *plainLocomo) rankSessions(q string, k int) ([]TurnID, error) {
	ss, err := p.sessions.search(q, p.nSessions)
	if err != nil {
		return nil, err
	}
	ts, err := p.turns.search(q, p.nTurns)
	if err != nil {
		return nil, err
	}
	turnScore := map[TurnID]float64{}
	for _, t := range ts {
		id, _, _ := ParseTurnID(t.id)
		turnScore[id] = t.score
	}
	var out []TurnID
	for _, s := range ss {
		var n int
		fmt.Sscan(s.id, &n)
		turns := append([]TurnID(nil), p.order[n]...)
		pos := map[TurnID]int{}
		for i, t := range turns {
			pos[t] = i
		}
		sortStable(turns, func(a, b TurnID) bool {
			if turnScore[a] != turnScore[b] {
				return turnScore[a] > turnScore[b]
			}
			return pos[a] < pos[b]
		})
		for _, t := range turns {
			out = append(out, t)
			if len(out) == k {
				return out, nil
			}
		}
	}
	return out, nil
}

// rankTurns is plain BM25 with one document per turn.
func (p *plainLocomo) rankTurns(q string, k int) ([]TurnID, error) {
	ts, err := p.turns.search(q, k)
	if err != nil {
		return nil, err
	}
	out := make([]TurnID, len(ts))
	for i, t := range ts {
		out[i], _, _ = ParseTurnID(t.id)
	}
	return out, nil
}

func (p *plainLocomo) close() {
	p.sessions.close()
	p.turns.close()
}

// plainLME is the BM25 peer over one LongMemEval haystack: one document
// per whole session.
func buildPlainLME(q *lmeQuestion) (*plainIndex, time.Duration, error) {
	start := time.Now()
	ids := make([]string, len(q.Sessions))
	texts := make([]string, len(q.Sessions))
	for i, s := range q.Sessions {
		ids[i] = fmt.Sprint(i)
		texts[i] = lmeSessionText(s)
	}
	x, err := newPlainIndex(ids, texts)
	return x, time.Since(start), err
}

func sortStable[T any](xs []T, less func(a, b T) bool) {
	// insertion sort: sessions have a few dozen turns
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && less(xs[j], xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}
