package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arbormem/arbor/bench/internal/dataset"
)

// The trees: one conversation message per entry, laid out
// domain/topic/subtopic/entry.md. The real messages come first, in a fixed
// order (every LoCoMo turn, then every distinct LongMemEval-S session's
// messages), then generated ones, so a tree of n entries is the first n of
// one sequence and a larger tree holds every smaller one.
//
//	LoCoMo        <a>_and_<b>/session_07/<speaker>/turn_012.md
//	LongMemEval-S chats/2023_05/session_01234/message_003.md
//	generated     synthetic_012/conversation_01234/session_2/message_07.md

// genVersion names the generator's output: a cached tree made by another
// version is made again.
const genVersion = 2

// seed is the generated text's random seed: the same data and seed give the
// same trees, byte for byte.
const seed = 16

// message is one entry of a tree before it is written.
type message struct {
	path   string // relative, slash-separated, ending in .md
	title  string
	task   string // rawConcept.task: provenance
	author string
	time   time.Time
	body   string
}

// corpus is what the trees are made of: the real messages, the questions
// queried against every tree, and a bigram model of the real text for the
// generated rest.
type corpus struct {
	real      []message
	questions []string
	model     *bigrams
	speakers  []string
}

// loadCorpus reads the two data sets. Both are loaded whole (about 60 MB
// of JSON); the trees are never held in memory.
func loadCorpus(locomoPath, lmePath string) (*corpus, error) {
	c := &corpus{}
	convs, _, err := dataset.LoadLocomo(locomoPath)
	if err != nil {
		return nil, err
	}
	seenSpeaker := map[string]bool{}
	for _, cv := range convs {
		domain := dataset.Slug(cv.SpeakerA + " and " + cv.SpeakerB)
		for _, s := range cv.Sessions {
			for _, t := range s.Turns {
				text := strings.TrimSpace(t.Text)
				if cap := strings.TrimSpace(t.Caption); cap != "" {
					text += " [shares a photo: " + cap + "]"
				}
				title := t.Speaker
				if !s.Date.IsZero() {
					title += " on " + dataset.DayText(s.Date)
				}
				c.real = append(c.real, message{
					path:  fmt.Sprintf("%s/session_%02d/%s/turn_%03d.md", domain, s.N, dataset.Slug(t.Speaker), t.ID.Turn),
					title: title, task: fmt.Sprintf("Turn %s of session %d", t.ID, s.N),
					author: t.Speaker, time: s.Date, body: text,
				})
			}
		}
		for _, sp := range []string{cv.SpeakerA, cv.SpeakerB} {
			if !seenSpeaker[sp] {
				seenSpeaker[sp] = true
				c.speakers = append(c.speakers, sp)
			}
		}
		for _, qa := range cv.QA {
			if q := strings.TrimSpace(qa.Question); q != "" {
				c.questions = append(c.questions, q)
			}
		}
	}
	qs, _, err := dataset.LoadLongMemEval(lmePath)
	if err != nil {
		return nil, err
	}
	// Haystacks share sessions: each distinct session once, numbered in
	// order of appearance (the data's session ids name the answer
	// sessions, a label that stays out of the trees, as in bench/retrieval).
	seen := map[string]bool{}
	for _, q := range qs {
		for i, msgs := range q.Sessions {
			id := q.SessionIDs[i]
			if seen[id] {
				continue
			}
			seen[id] = true
			sn := len(seen)
			date := dataset.ParseLMEDate(q.Dates[i])
			topic, on := "undated", ""
			if !date.IsZero() {
				topic, on = date.Format("2006_01"), " on "+dataset.DayText(date)
			}
			for j, m := range msgs {
				role := strings.ToLower(strings.TrimSpace(m.Role))
				who := strings.ToUpper(role[:1]) + role[1:]
				c.real = append(c.real, message{
					path:  fmt.Sprintf("chats/%s/session_%05d/message_%03d.md", topic, sn, j+1),
					title: who + on, task: "Chat with the assistant", author: role, time: date,
					body: strings.TrimSpace(m.Content),
				})
			}
		}
	}
	// Questions of both sets, alternating, so a short list has both.
	lme := make([]string, 0, len(qs))
	for _, q := range qs {
		lme = append(lme, q.Question)
	}
	c.questions = interleave(c.questions, lme)
	c.model = newBigrams(c.real)
	return c, nil
}

func interleave(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	for i := 0; i < len(a) || i < len(b); i++ {
		if i < len(a) {
			out = append(out, a[i])
		}
		if i < len(b) {
			out = append(out, b[i])
		}
	}
	return out
}

// Generated conversations: sessionsPer sessions of messagesPer messages
// between two speakers, conversationsPer conversations to a domain, so no
// folder holds more than 100 entries or subfolders.
const (
	messagesPer      = 10
	sessionsPer      = 4
	conversationsPer = 100
)

// generated is the k-th generated message (k from 0). It depends on k and
// the corpus alone, so generation can stream.
func (c *corpus) generated(k int) message {
	perConv := messagesPer * sessionsPer
	conv, rest := k/perConv, k%perConv
	sess, msg := rest/messagesPer, rest%messagesPer
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	a := c.speakers[(conv*7)%len(c.speakers)]
	b := c.speakers[(conv*7+3)%len(c.speakers)]
	who := a
	if msg%2 == 1 {
		who = b
	}
	date := time.Date(2021, 1, 1, 9, 0, 0, 0, time.UTC).AddDate(0, 0, conv%1500+7*sess)
	return message{
		path:  fmt.Sprintf("synthetic_%03d/conversation_%05d/session_%d/message_%02d.md", conv/conversationsPer, conv, sess+1, msg+1),
		title: who + " on " + dataset.DayText(date), task: fmt.Sprintf("Message %d of session %d of generated conversation %d", msg+1, sess+1, conv),
		author: who, time: date, body: c.model.text(rng),
	}
}

// generate makes the tree of n entries under cache/<n> unless it is
// there, writes the script every host runs on it (script.json: the first
// queries questions), and prints the tree's treeInfo as JSON.
func generate(cache string, n, queries int, locomoPath, lmePath string) error {
	logf("loading %s and %s", locomoPath, lmePath)
	c, err := loadCorpus(locomoPath, lmePath)
	if err != nil {
		return err
	}
	if queries > len(c.questions) {
		return fmt.Errorf("-queries %d: the data sets have %d questions", queries, len(c.questions))
	}
	_, info, err := ensureTree(c, cache, n)
	if err != nil {
		return err
	}
	sc := script{FixedTime: "2026-06-01T12:00:00Z", Queries: c.questions[:queries], Limit: 10}
	if err := writeJSON(filepath.Join(cache, fmt.Sprint(n), "script.json"), sc); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(info)
}

// treeInfo is what a generated tree holds; it is written next to the tree
// (info.json) and marks the tree complete.
type treeInfo struct {
	Version   int   `json:"version"`
	Entries   int   `json:"entries"`
	Real      int   `json:"real"`
	Generated int   `json:"generated"`
	Bytes     int64 `json:"bytes"` // of the entry files
}

// ensureTree returns the tree of n entries under cache/<n>/tree, writing it
// first unless a complete one of this generator version is there.
func ensureTree(c *corpus, cache string, n int) (string, treeInfo, error) {
	base := filepath.Join(cache, fmt.Sprint(n))
	tree, infoPath := filepath.Join(base, "tree"), filepath.Join(base, "info.json")
	var info treeInfo
	if b, err := os.ReadFile(infoPath); err == nil && json.Unmarshal(b, &info) == nil && info.Version == genVersion && info.Entries == n {
		return tree, info, nil
	}
	if err := os.RemoveAll(base); err != nil {
		return "", info, err
	}
	logf("generating %d entries in %s", n, tree)
	info = treeInfo{Version: genVersion, Entries: n}
	lastDir := ""
	for i := range n {
		var m message
		if i < len(c.real) {
			m = c.real[i]
			info.Real++
		} else {
			m = c.generated(i - len(c.real))
			info.Generated++
		}
		file := filepath.Join(tree, filepath.FromSlash(m.path))
		if dir := filepath.Dir(file); dir != lastDir {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", info, err
			}
			lastDir = dir
		}
		b := m.render()
		if err := os.WriteFile(file, b, 0o644); err != nil {
			return "", info, err
		}
		info.Bytes += int64(len(b))
		if (i+1)%100000 == 0 {
			logf("  %d of %d", i+1, n)
		}
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return "", info, err
	}
	// An open reads again every file whose time is not clearly older than
	// the listing that last read it, two seconds (an edit within one tick
	// of the clock keeps the time: docs/design.md, the catalog), so the
	// first reopen of a tree built the moment it was written reads its
	// newest files again. The hosts measure a tree at rest.
	time.Sleep(settle)
	// Written last: a tree without it was interrupted and is made again.
	return tree, info, os.WriteFile(infoPath, b, 0o644)
}

// settle is how long a new tree rests before it is used: more than the two
// seconds within which an open does not trust a file's time.
const settle = 2500 * time.Millisecond

// stamp is the fixed creation time of every entry: the trees must not
// depend on when they were made.
var stamp = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// render is the entry file as curate writes an ADD of the message (title,
// reason, raw concept, narrative; docs/format.md); TestRenderReadsBack
// checks that the engine reads it back as such.
func (m message) render() []byte {
	var b strings.Builder
	ts := stamp.Format(time.RFC3339)
	fmt.Fprintf(&b, "---\ntitle: %s\ncreatedAt: %s\nupdatedAt: %s\n---\n\n", yamlString(m.title), ts, ts)
	b.WriteString("## Reason\nconversation memory import\n\n## Raw Concept\n")
	fmt.Fprintf(&b, "**Task:** %s\n", m.task)
	if !m.time.IsZero() {
		fmt.Fprintf(&b, "**Timestamp:** %s\n", m.time.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "**Author:** %s\n\n## Narrative\n%s\n", m.author, narrative(m.body))
	return []byte(b.String())
}

// narrative is a message as the body of the Narrative section, as curate
// writes it: outside code fences, "## " and "### " lines (which would
// start a section or a named part) pushed down to "#### "; an unclosed
// fence closed. The engine offers hosts no entry encoder, and curating
// every entry to get its bytes would be the very build the benchmark
// measures; TestRenderReadsBack checks the result against curate's on
// the data sets' awkward messages.
func narrative(body string) string {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(body, "\r\n", "\n"), "\n"), "\n")
	fence := "" // the open fence's marker, "" outside code
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if len(l)-len(t) > 3 {
			continue // indented code
		}
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if m := fenceMarker(t); m != "" {
			fence = m
			continue
		}
		for _, h := range []string{"###", "##"} {
			if rest, ok := strings.CutPrefix(t, h); ok && !strings.HasPrefix(rest, "#") && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
				lines[i] = "####" + rest
				break
			}
		}
	}
	if fence != "" {
		lines = append(lines, fence)
	}
	return strings.Join(lines, "\n")
}

// fenceMarker is the run of three or more backticks or tildes that opens
// a fenced code block on line t, or "".
func fenceMarker(t string) string {
	for _, c := range "`~" {
		n := len(t) - len(strings.TrimLeft(t, string(c)))
		if n >= 3 && (c == '~' || !strings.ContainsRune(t[n:], '`')) {
			return t[:n]
		}
	}
	return ""
}

// yamlString quotes a title when YAML would not read it back as written.
func yamlString(s string) string {
	plain := s != "" && !strings.ContainsAny(s, ":#'\"[]{},&*!|>%@`\\") && s == strings.TrimSpace(s)
	if plain {
		return s
	}
	q, _ := json.Marshal(s) // a JSON string is a YAML double-quoted scalar
	return string(q)
}

// bigrams is a word bigram model of the real messages: generated text has
// their vocabulary, their word frequencies and their lengths, so the index
// grows as it would with more real conversations.
type bigrams struct {
	words   []string
	next    [][]int32 // followers of each word, with repeats (frequency)
	starts  []int32   // first words of messages
	lengths []int     // word counts of the real messages
}

// maxWords bounds a generated message (the longest real ones are whole
// documents pasted into a chat).
const maxWords = 1500

func newBigrams(msgs []message) *bigrams {
	m := &bigrams{}
	ids := map[string]int32{}
	id := func(w string) int32 {
		if i, ok := ids[w]; ok {
			return i
		}
		i := int32(len(m.words))
		ids[w] = i
		m.words = append(m.words, w)
		m.next = append(m.next, nil)
		return i
	}
	for _, msg := range msgs {
		ws := strings.Fields(msg.body)
		if len(ws) == 0 {
			continue
		}
		m.lengths = append(m.lengths, min(len(ws), maxWords))
		prev := id(ws[0])
		m.starts = append(m.starts, prev)
		for _, w := range ws[1:] {
			cur := id(w)
			m.next[prev] = append(m.next[prev], cur)
			prev = cur
		}
	}
	return m
}

// text is one generated message: a real message's length in words, each
// word drawn after the previous one as the real text continues it.
func (m *bigrams) text(rng *rand.Rand) string {
	n := m.lengths[rng.IntN(len(m.lengths))]
	w := m.starts[rng.IntN(len(m.starts))]
	var b strings.Builder
	b.WriteString(m.words[w])
	for range n - 1 {
		if f := m.next[w]; len(f) > 0 {
			w = f[rng.IntN(len(f))]
		} else {
			w = m.starts[rng.IntN(len(m.starts))]
		}
		b.WriteByte(' ')
		b.WriteString(m.words[w])
	}
	return b.String()
}

// writeJSON writes v to path through a temporary file, so a reader never
// sees half of it.
func writeJSON(path string, v any) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	err = errors.Join(enc.Encode(v), w.Flush(), f.Close())
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
