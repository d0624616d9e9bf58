package main

import (
	"context"
	"fmt"

	"github.com/blugelabs/bluge"
)

// peerIndex is the index of one peer: documents known by id, ranked for a
// query.
type peerIndex interface {
	// search returns at most limit ids, best first.
	search(q string, limit int) ([]scored, error)
	close()
}

// newPeerIndex indexes documents for one peer.
type newPeerIndex func(ids, texts []string) (peerIndex, error)

// blugeIndex is bluge with its defaults (the standard analyzer: Unicode
// words, lower case, no stemming, no stop words; its BM25 with k1 = 1.2,
// b = 0.75 and the misplaced idf parenthesis), one text field, a match
// query with OR: the peer this report called "plain BM25" before the
// textbook one (okapi.go) replaced it.
type blugeIndex struct {
	w *bluge.Writer
	r *bluge.Reader
}

const plainField = "content"

func newBlugeIndex(ids, texts []string) (peerIndex, error) {
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
	return &blugeIndex{w: w, r: r}, nil
}

type scored struct {
	id    string
	score float64
}

func (x *blugeIndex) search(q string, limit int) ([]scored, error) {
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

func (x *blugeIndex) close() {
	_ = x.r.Close()
	_ = x.w.Close()
}

// sessionPeer is a peer over one LoCoMo conversation: an index of whole
// sessions (the peer proper) and an index of single turns (used to order
// turns inside a session, and as a per-turn peer of its own).
type sessionPeer struct {
	sessions, turns peerIndex
	*sessionDocs
}

// sessionDocs are a LoCoMo conversation as the session peers index it:
// each session whole, and each turn ("speaker: text").
type sessionDocs struct {
	sids, stexts, tids, ttexts []string
	order                      map[int][]TurnID // a session's turns in dialogue order
}

func newSessionDocs(c *locomoConv) *sessionDocs {
	d := &sessionDocs{order: map[int][]TurnID{}}
	for _, s := range c.Sessions {
		d.sids = append(d.sids, fmt.Sprint(s.N))
		d.stexts = append(d.stexts, locomoSessionText(s))
		for _, t := range s.Turns {
			d.tids = append(d.tids, t.ID.String())
			d.ttexts = append(d.ttexts, t.Speaker+": "+locomoTurnText(t))
			d.order[s.N] = append(d.order[s.N], t.ID)
		}
	}
	return d
}

// bytes is the size of the sessions' text.
func (d *sessionDocs) bytes() int64 {
	n := int64(0)
	for _, t := range d.stexts {
		n += int64(len(t))
	}
	return n
}

// rankSessions ranks turns through whole-session documents: sessions by
// their score, and within a session its turns by their own score (turns
// that match nothing last, in dialogue order). The first K turns of that
// list are the peer's top K; its first turn gives the session for Hit@1.
func (p *sessionPeer) rankSessions(q string, k int) ([]TurnID, error) {
	ss, err := p.sessions.search(q, len(p.sids))
	if err != nil {
		return nil, err
	}
	ts, err := p.turns.search(q, len(p.tids))
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

// rankTurns ranks with one document per turn.
func (p *sessionPeer) rankTurns(q string, k int) ([]TurnID, error) {
	return turnIDs(p.turns.search(q, k))
}

// turnIDs are the turns of a turn index's hits.
func turnIDs(hits []scored, err error) ([]TurnID, error) {
	if err != nil {
		return nil, err
	}
	out := make([]TurnID, len(hits))
	for i, t := range hits {
		out[i], _, _ = ParseTurnID(t.id)
	}
	return out, nil
}

func (p *sessionPeer) close() {
	p.sessions.close()
	p.turns.close()
}

// lmeSessionDocs are a LongMemEval haystack as one document per whole
// session, user and assistant turns alike, known by haystack position.
func lmeSessionDocs(q *lmeQuestion) (ids, texts []string) {
	ids = make([]string, len(q.Sessions))
	texts = make([]string, len(q.Sessions))
	for i, s := range q.Sessions {
		ids[i] = fmt.Sprint(i)
		texts[i] = lmeSessionText(s)
	}
	return ids, texts
}

// unitDocs are a tree's entries as the BM25F peer indexes them: the
// path's position in units as id, the entry's title, and its body as the
// MiniSearch peer indexes it (provenance, the turns replied to, the text).
func unitDocs(units []unit) (ids, bodies, titles []string) {
	for i, u := range units {
		ids = append(ids, fmt.Sprint(i))
		bodies = append(bodies, u.searchText())
		titles = append(titles, u.Title)
	}
	return ids, bodies, titles
}

func sortStable[T any](xs []T, less func(a, b T) bool) {
	// insertion sort: sessions have a few dozen turns
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && less(xs[j], xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}
