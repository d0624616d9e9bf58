// Package dataset reads the two public conversation data sets the
// benchmarks run on, LoCoMo and LongMemEval-S (bench/README.md says where
// they come from): bench/retrieval scores retrieval on them, bench/scale
// builds its trees from their messages.
package dataset

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ReadJSON decodes a JSON file, gunzipping it when it starts with the gzip
// magic bytes (bench/data/fetch.sh stores them as .json.gz).
func ReadJSON(path string, v any) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	cr := &countingReader{r: r}
	if err := json.NewDecoder(cr).Decode(v); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return cr.n, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ---- LoCoMo ----------------------------------------------------------

// LocomoConv is one LoCoMo conversation: its two speakers, its sessions in
// order, and its questions.
type LocomoConv struct {
	SampleID           string
	SpeakerA, SpeakerB string
	Sessions           []LocomoSession // by session number
	QA                 []LocomoQA
	turns              map[TurnID]bool
}

// HasTurn reports whether the conversation has the turn id.
func (c *LocomoConv) HasTurn(id TurnID) bool { return c.turns[id] }

// LocomoSession is one session of a conversation, its turns in order.
type LocomoSession struct {
	N        int
	DateText string    // as in the data: "1:56 pm on 8 May, 2023"
	Date     time.Time // parsed; zero when it does not parse
	Turns    []LocomoTurn
}

// LocomoTurn is what one speaker said (or shared) in a session.
type LocomoTurn struct {
	ID      TurnID
	Speaker string
	Text    string
	Caption string // blip_caption of an image turn
}

// LocomoQA is one question with its gold evidence (raw dialogue ids).
type LocomoQA struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// LoadLocomo reads locomo10.json (gzip-compressed or not) and returns its
// conversations and the bytes of JSON read.
func LoadLocomo(path string) ([]*LocomoConv, int64, error) {
	var raw []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []LocomoQA                 `json:"qa"`
	}
	n, err := ReadJSON(path, &raw)
	if err != nil {
		return nil, 0, err
	}
	var out []*LocomoConv
	for ci, r := range raw {
		c := &LocomoConv{SampleID: r.SampleID, QA: r.QA, turns: map[TurnID]bool{}}
		if c.SampleID == "" {
			c.SampleID = fmt.Sprintf("conv-%d", ci)
		}
		str := func(k string) string {
			var s string
			_ = json.Unmarshal(r.Conversation[k], &s)
			return s
		}
		c.SpeakerA, c.SpeakerB = str("speaker_a"), str("speaker_b")
		for k, v := range r.Conversation {
			m := sessionKey.FindStringSubmatch(k)
			if m == nil {
				continue
			}
			sn, _ := strconv.Atoi(m[1])
			var turns []struct {
				Speaker string `json:"speaker"`
				DiaID   string `json:"dia_id"`
				Text    string `json:"text"`
				Caption string `json:"blip_caption"`
			}
			if err := json.Unmarshal(v, &turns); err != nil {
				return nil, 0, fmt.Errorf("%s: %s %s: %w", path, c.SampleID, k, err)
			}
			s := LocomoSession{N: sn, DateText: str(k + "_date_time")}
			s.Date = ParseLocomoDate(s.DateText)
			for i, t := range turns {
				id, _, ok := ParseTurnID(t.DiaID)
				if !ok || id.Session != sn || c.turns[id] {
					// Fall back to the position, as ingestion does: turn ids
					// must be unique.
					id = TurnID{sn, i + 1}
				}
				c.turns[id] = true
				s.Turns = append(s.Turns, LocomoTurn{ID: id, Speaker: t.Speaker, Text: t.Text, Caption: t.Caption})
			}
			if len(s.Turns) > 0 {
				c.Sessions = append(c.Sessions, s)
			}
		}
		sort.Slice(c.Sessions, func(i, j int) bool { return c.Sessions[i].N < c.Sessions[j].N })
		out = append(out, c)
	}
	return out, n, nil
}

// ParseLocomoDate reads "1:56 pm on 8 May, 2023".
func ParseLocomoDate(s string) time.Time {
	for _, layout := range []string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006", "3:04 PM on 2 January, 2006"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t
		}
	}
	return time.Time{}
}

// ---- LongMemEval -----------------------------------------------------

// LMEQuestion is one LongMemEval-S question with its haystack of chat
// sessions.
type LMEQuestion struct {
	ID       string `json:"question_id"`
	Type     string `json:"question_type"`
	Question string `json:"question"`
	Date     string `json:"question_date"`
	// AnswerIDs and SessionIDs are gold labels: they never reach the engine.
	AnswerIDs  []string       `json:"answer_session_ids"`
	SessionIDs []string       `json:"haystack_session_ids"`
	Dates      []string       `json:"haystack_dates"`
	Sessions   [][]LMEMessage `json:"haystack_sessions"`
}

// LMEMessage is one message of a chat session.
type LMEMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// has_answer is deliberately not decoded: it must never reach the engine.
}

// LoadLongMemEval reads a file of the LongMemEval-S shape (gzip-compressed
// or not), checks its sessions, and returns its questions and the bytes of
// JSON read.
func LoadLongMemEval(path string) ([]*LMEQuestion, int64, error) {
	var qs []*LMEQuestion
	n, err := ReadJSON(path, &qs)
	if err != nil {
		return nil, 0, err
	}
	for _, q := range qs {
		if len(q.Dates) != len(q.Sessions) || len(q.SessionIDs) != len(q.Sessions) {
			return nil, 0, fmt.Errorf("%s: %s: %d sessions, %d dates, %d ids", path, q.ID, len(q.Sessions), len(q.Dates), len(q.SessionIDs))
		}
		for i, msgs := range q.Sessions {
			for _, m := range msgs {
				if !IsRole(m.Role) {
					// Ingestion would lay such a session out per turn (lmeUnits).
					return nil, 0, fmt.Errorf("%s: %s: session %d: role %q is not a chat role", path, q.ID, i+1, m.Role)
				}
			}
		}
	}
	return qs, n, nil
}

// Gold returns the haystack positions of the answer sessions.
func (q *LMEQuestion) Gold() []int {
	pos := map[string]int{}
	for i, id := range q.SessionIDs {
		pos[id] = i
	}
	var out []int
	for _, id := range q.AnswerIDs {
		if i, ok := pos[id]; ok {
			out = append(out, i)
		}
	}
	return Dedupe(out)
}

// Abstention reports an abstention question: its answer is not in the haystack.
func (q *LMEQuestion) Abstention() bool { return strings.HasSuffix(q.ID, "_abs") }

// ParseLMEDate reads "2023/05/20 (Sat) 02:21".
func ParseLMEDate(s string) time.Time {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "("); i >= 0 {
		if j := strings.Index(s[i:], ")"); j >= 0 {
			s = strings.TrimSpace(s[:i]) + " " + strings.TrimSpace(s[i+j+1:])
		}
	}
	for _, layout := range []string{"2006/01/02 15:04", "2006/01/02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// Dedupe keeps the first occurrence of each item, in order: it turns a
// ranking of entries into a ranking of the sessions they belong to.
func Dedupe[T comparable](xs []T) []T {
	seen := make(map[T]bool, len(xs))
	out := make([]T, 0, len(xs))
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// TurnID is a LoCoMo dialogue id "D<session>:<turn>".
type TurnID struct{ Session, Turn int }

func (t TurnID) String() string { return fmt.Sprintf("D%d:%d", t.Session, t.Turn) }

// turnRe accepts a well-formed id and the repairable forms found in the
// data: "D:11:26" (an extra colon) and "D30:05" (a leading zero).
var turnRe = regexp.MustCompile(`^D:?(\d+):(\d+)$`)

// ParseTurnID parses one dialogue id; fixed reports that it was repaired.
func ParseTurnID(s string) (id TurnID, fixed bool, ok bool) {
	m := turnRe.FindStringSubmatch(s)
	if m == nil {
		return TurnID{}, false, false
	}
	sn, err1 := strconv.Atoi(m[1])
	tn, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil || sn <= 0 || tn <= 0 {
		return TurnID{}, false, false
	}
	id = TurnID{sn, tn}
	return id, id.String() != s, true
}

// roles are the speaker names that mark a chat with an assistant.
var roles = []string{"user", "assistant", "system", "tool", "human", "ai", "bot", "model", "function", "developer"}

// IsRole reports a speaker name that marks a chat with an assistant.
func IsRole(speaker string) bool {
	return slices.Contains(roles, strings.ToLower(strings.TrimSpace(speaker)))
}

// DayText is "8 May 2023", as people ask about dates.
func DayText(t time.Time) string { return t.Format("2 January 2006") }

// Slug is a folder or file name made of names: lowercase letters and
// digits, runs of anything else as one "_" ("entry" when nothing is left).
// Speakers' names are slugged so; bench/retrieval's TestLayoutMatchesIngest
// checks it against ingestion's.
func Slug(s string) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		return "entry"
	}
	return strings.Join(words, "_")
}
