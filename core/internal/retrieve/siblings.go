package retrieve

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/internal/search"
	"github.com/arbormem/arbor/core/internal/tree"
)

// Sibling evidence (the episode scorer of ContextFit §5, on the tree's
// structure): an entry whose flow holds the turns it replies to (isReply) is
// a piece cut out of a longer exchange (a turn of a chat with the turns
// before it), and the entries its folder holds are that episode. A
// question's evidence clusters in an episode, so among the rerankPool best
// matches a piece's raw score is multiplied by 1 + siblingWeight·E/Emax,
// where E is the sum of the siblingTop best relative scores (raw over the
// best raw) of the pieces of its folder and Emax the largest E. Entries that
// are whole episodes (no replies, rv.g. one chat session per entry) are left
// alone: a folder of them (chats of a month) is no episode, and lifting it
// pushed other evidence out (measured in bench/retrieval/mechanisms.md).
//
// Openers: the entry of an episode without a flow is the piece that opens
// it (a session's first turn), where people say what happened since they
// last spoke; in LoCoMo an opener among the 50 best matches is gold five
// times as often as another piece. It also matches a question by its own
// words only, having no turns before it. So an opener's raw score is also
// multiplied by openerBoost.
const (
	siblingWeight = 0.6
	siblingTop    = 3
	openerBoost   = 1.3
)

// siblings raises the scores of the pieces by their folder's evidence, and
// those of the openers, and returns the reason code of what it did, or ""
// when no hit is a piece.
func (rv *Retriever) siblings(hits []search.Hit) string {
	if rv.off.Siblings && rv.off.Openers {
		return ""
	}
	episodes := map[string][]float64{} // folder → raw scores of its hits
	for _, h := range hits {
		if h.Kind == "context" {
			continue
		}
		if en, ok := rv.catalog.Get(h.Path); ok && isReply(en) {
			episodes[path.Dir(h.Path)] = nil
		}
	}
	if len(episodes) == 0 {
		return ""
	}
	top := 0.0
	for _, h := range hits {
		d := path.Dir(h.Path)
		if s, ok := episodes[d]; ok && h.Kind != "context" {
			episodes[d] = append(s, h.Raw)
			top = max(top, h.Raw)
		}
	}
	if top == 0 {
		return ""
	}
	evidence := make(map[string]float64, len(episodes))
	best, bestDir := 0.0, ""
	for d, s := range episodes {
		slices.SortFunc(s, func(a, b float64) int { return cmp.Compare(b, a) })
		ev := 0.0
		for _, r := range s[:min(siblingTop, len(s))] {
			ev += r / top
		}
		evidence[d] = ev
		if ev > best || (ev == best && d < bestDir) {
			best, bestDir = ev, d
		}
	}
	n, openers := 0, 0
	for i := range hits {
		ev, ok := evidence[path.Dir(hits[i].Path)]
		if !ok || hits[i].Kind == "context" {
			continue
		}
		if !rv.off.Siblings {
			hits[i].Raw *= 1 + siblingWeight*ev/best
			n++
		}
		if en, ok := rv.catalog.Get(hits[i].Path); ok && en.RawConcept.Flow == "" && !rv.off.Openers {
			hits[i].Raw *= openerBoost
			openers++
		}
	}
	folders := fmt.Sprintf("%d episodes (folders)", len(episodes))
	if len(episodes) == 1 {
		folders = "1 episode (folder)"
	}
	reason := fmt.Sprintf("siblings: %d of the %d best matches are pieces of %s, their scores ×(1 + %g × the episode's evidence relative to the strongest, %s with %.2f)",
		n, len(hits), folders, siblingWeight, bestDir, best)
	if openers > 0 {
		reason += fmt.Sprintf("; openers: %d of them open their episode (no flow), their scores ×%g", openers, openerBoost)
	}
	return reason
}

// isReply reports whether the entry is a piece of an exchange: its flow
// holds the turns it replies to, as ingestion writes a chat turn
// (tree.ReplyPrefix). A hand-written entry's flow (a process, a call
// chain) does not make it one.
func isReply(en *tree.Entry) bool {
	return strings.HasPrefix(en.RawConcept.Flow, tree.ReplyPrefix)
}
