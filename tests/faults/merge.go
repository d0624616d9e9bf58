package main

import (
	"math/rand"
	"sort"
	"strings"
)

// notes are the agents' notes that curate batches ADD, which later
// batches MERGE one into another and link to, so that a MERGE killed
// part way is checked as a folder MOVE is: the source's markers end in
// its target or stay in the source, never nowhere; a source gone means a
// MERGE in the audit log as applied; a link to a merged note follows it.
type notes struct {
	held map[string][]string // an applied ADD's path → the markers the note holds
	// this round's: the MERGEs sent, and the notes a MERGE or a link
	// takes, so that no note is merged away and linked to, or merged
	// twice, in one round (the two writers run at once).
	merges           []mergeOp
	sources, targets map[string]bool
	linked           map[string]bool

	Sent, Applied, NotApplied, Linked int
}

// mergeOp is one MERGE of a note into another.
type mergeOp struct{ reason, src, dst string }

func newNotes() *notes {
	n := &notes{held: map[string][]string{}}
	n.reset()
	return n
}

func (n *notes) reset() {
	n.merges = nil
	n.sources, n.targets, n.linked = map[string]bool{}, map[string]bool{}, map[string]bool{}
}

// learn records the marker of an ADD found applied in the note p.
func (n *notes) learn(p, marker string) {
	n.held[p] = append(n.held[p], marker)
}

// free lists, sorted, the notes no MERGE of this round takes and that
// skip does not rule out.
func (n *notes) free(skip func(p string) bool) []string {
	var out []string
	for p := range n.held {
		if !n.sources[p] && !n.targets[p] && !skip(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// linkTarget is a note an ADD of this round may link to, or "".
func (n *notes) linkTarget(rng *rand.Rand) string {
	ps := n.free(func(string) bool { return false })
	if len(ps) == 0 {
		return ""
	}
	p := ps[rng.Intn(len(ps))]
	n.linked[p] = true
	n.Linked++
	return p
}

// merge is a MERGE of one note into another for a batch, or nil when
// fewer than two are free. A note linked to this round is not merged
// away (the link would be written after the MERGE rewrote the others).
func (n *notes) merge(rng *rand.Rand, reason string) map[string]any {
	ps := n.free(func(string) bool { return false })
	srcs := n.free(func(p string) bool { return n.linked[p] })
	if len(ps) < 2 || len(srcs) == 0 {
		return nil
	}
	src := srcs[rng.Intn(len(srcs))]
	var dsts []string
	for _, p := range ps {
		if p != src {
			dsts = append(dsts, p)
		}
	}
	dst := dsts[rng.Intn(len(dsts))]
	n.sources[src], n.targets[dst] = true, true
	n.merges = append(n.merges, mergeOp{reason, src, dst})
	n.Sent++
	return map[string]any{"type": "MERGE", "path": src, "mergeTarget": dst, "reason": reason}
}

// check checks this round's MERGEs after the root was opened again.
func (n *notes) check(res *result, byReason map[string][]string, tree map[string]string) {
	defer n.reset()
	for _, m := range n.merges {
		success := false
		for _, l := range byReason[m.reason] {
			success = success || strings.HasPrefix(l, "success")
		}
		srcText, srcThere := tree[m.src]
		dstText := tree[m.dst]
		for _, mk := range n.held[m.src] {
			re := markerPattern(mk)
			if !(srcThere && re.MatchString(srcText)) && !re.MatchString(dstText) {
				res.Lost++
				res.problem("lost: %s of %s, which a MERGE into %s (%s) took, is in neither", mk, m.src, m.dst, m.reason)
			}
		}
		for _, mk := range n.held[m.dst] {
			if !markerPattern(mk).MatchString(dstText) {
				res.Lost++
				res.problem("lost: %s of %s, the target of a MERGE (%s), is not in it", mk, m.dst, m.reason)
			}
		}
		switch {
		case success && srcThere:
			res.Resurrected++
			res.problem("resurrected: %s is in the audit log as merged into %s (%s), and is there", m.src, m.dst, m.reason)
		case !success && !srcThere:
			res.AuditMissing++
			res.problem("audit-missing: %s is gone, and the audit log has no success for its MERGE into %s (%s): %v", m.src, m.dst, m.reason, byReason[m.reason])
		case success:
			n.Applied++
			n.held[m.dst] = append(n.held[m.dst], n.held[m.src]...)
			delete(n.held, m.src)
		default:
			n.NotApplied++
		}
	}
}
