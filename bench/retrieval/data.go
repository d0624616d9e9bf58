package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// readJSON decodes a JSON file, gunzipping it when it starts with the gzip
// magic bytes (bench/data/fetch.sh stores them as .json.gz).
func readJSON(path string, v any) (int64, error) {
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

type locomoConv struct {
	SampleID           string
	SpeakerA, SpeakerB string
	Sessions           []locomoSession // by session number
	QA                 []locomoQA
	turns              map[TurnID]bool
}

type locomoSession struct {
	N        int
	DateText string    // as in the data: "1:56 pm on 8 May, 2023"
	Date     time.Time // parsed; zero when it does not parse
	Turns    []locomoTurn
}

type locomoTurn struct {
	ID      TurnID
	Speaker string
	Text    string
	Caption string // blip_caption of an image turn
}

type locomoQA struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

func loadLocomo(path string) ([]*locomoConv, int64, error) {
	var raw []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []locomoQA                 `json:"qa"`
	}
	n, err := readJSON(path, &raw)
	if err != nil {
		return nil, 0, err
	}
	var out []*locomoConv
	for ci, r := range raw {
		c := &locomoConv{SampleID: r.SampleID, QA: r.QA, turns: map[TurnID]bool{}}
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
			s := locomoSession{N: sn, DateText: str(k + "_date_time")}
			s.Date = parseLocomoDate(s.DateText)
			for i, t := range turns {
				id, _, ok := ParseTurnID(t.DiaID)
				if !ok || id.Session != sn || c.turns[id] {
					// Fall back to the position, as ingestion does: turn ids
					// must be unique.
					id = TurnID{sn, i + 1}
				}
				c.turns[id] = true
				s.Turns = append(s.Turns, locomoTurn{ID: id, Speaker: t.Speaker, Text: t.Text, Caption: t.Caption})
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

// parseLocomoDate reads "1:56 pm on 8 May, 2023".
func parseLocomoDate(s string) time.Time {
	for _, layout := range []string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006", "3:04 PM on 2 January, 2006"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t
		}
	}
	return time.Time{}
}

// ---- LongMemEval -----------------------------------------------------

type lmeQuestion struct {
	ID       string `json:"question_id"`
	Type     string `json:"question_type"`
	Question string `json:"question"`
	Date     string `json:"question_date"`
	// AnswerIDs and SessionIDs are gold labels: they never reach the engine.
	AnswerIDs  []string       `json:"answer_session_ids"`
	SessionIDs []string       `json:"haystack_session_ids"`
	Dates      []string       `json:"haystack_dates"`
	Sessions   [][]lmeMessage `json:"haystack_sessions"`
}

type lmeMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// has_answer is deliberately not decoded: it must never reach the engine.
}

func loadLongMemEval(path string) ([]*lmeQuestion, int64, error) {
	var qs []*lmeQuestion
	n, err := readJSON(path, &qs)
	if err != nil {
		return nil, 0, err
	}
	for _, q := range qs {
		if len(q.Dates) != len(q.Sessions) || len(q.SessionIDs) != len(q.Sessions) {
			return nil, 0, fmt.Errorf("%s: %s: %d sessions, %d dates, %d ids", path, q.ID, len(q.Sessions), len(q.Dates), len(q.SessionIDs))
		}
		for i, msgs := range q.Sessions {
			for _, m := range msgs {
				if !isRole(m.Role) {
					// Ingestion would lay such a session out per turn (lmeUnits).
					return nil, 0, fmt.Errorf("%s: %s: session %d: role %q is not a chat role", path, q.ID, i+1, m.Role)
				}
			}
		}
	}
	return qs, n, nil
}

// gold returns the haystack positions of the answer sessions.
func (q *lmeQuestion) gold() []int {
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

func (q *lmeQuestion) abstention() bool { return strings.HasSuffix(q.ID, "_abs") }

// parseLMEDate reads "2023/05/20 (Sat) 02:21".
func parseLMEDate(s string) time.Time {
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
