package ingest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/internal/atoms"
	"github.com/arbormem/arbor/core/internal/tree"
)

// Conversation is a chat transcript: sessions of turns, as the LoCoMo and
// LongMemEval benchmarks and chat exports hold them.
type Conversation struct {
	// Participants name the speakers of a conversation between people
	// (LoCoMo's speaker_a and speaker_b); empty for a chat with an assistant.
	Participants []string
	Sessions     []Session
}

// Session is one sitting of a conversation.
type Session struct {
	// N numbers the session within its conversation, from 1.
	N    int
	Date time.Time // zero when unknown
	// Turns are the messages, in order.
	Turns []Turn
}

// Turn is one message.
type Turn struct {
	// ID is the turn's id in the source ("D7:12"), empty when it has none;
	// N is its number within the session (from the id, else its position).
	ID string
	N  int
	// Speaker is a person's name or a role (user, assistant, system).
	Speaker string
	Text    string
	// Caption describes an image the turn shared (LoCoMo's blip_caption).
	Caption string
}

// layoutChat adds the entries of a conversation.
//
// A conversation between named people (Participants, or speakers that are
// not roles) gets one entry per turn, so that a fact is found by the turn
// that says it:
//
//	<speaker_a>_and_<speaker_b>/session_07/turn_012.md
//	title "Caroline on 8 May 2023"; task "Turn D7:12 of session 7";
//	author the speaker; flow "In reply to <speaker>: <text>" for each of
//	the ContextTurns turns before it, since a reply alone ("Yup, we did it
//	yesterday!") rarely makes sense.
//
// A chat with an assistant gets one entry per session, its messages as
// "**User:** …" / "**Assistant:** …":
//
//	chats/<file>/2023_05/session_07.md
//	title "Chat on 20 May 2023"; task "Chat with the assistant"; author "user"
//
// Numbers in paths are zero-padded so that they never equal a number in a
// question; dates are "2 January 2006" so that they match how people ask.
// The retrieval benchmark lays its conversations out the same way
// (bench/retrieval/corpus.go, checked against this by its tests).
func layoutChat(s *source, c Conversation) {
	if perTurn(c) {
		turnEntries(s, c)
		return
	}
	sessionEntries(s, c)
}

func pathExt(name string) string {
	base := name[strings.LastIndexByte(name, '/')+1:]
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		return base[i:]
	}
	return ""
}

func perTurn(c Conversation) bool {
	if len(c.Participants) > 0 {
		return true
	}
	for _, se := range c.Sessions {
		for _, t := range se.Turns {
			if !atoms.IsRole(t.Speaker) {
				return true
			}
		}
	}
	return false
}

// dayText is "8 May 2023".
func dayText(t time.Time) string { return t.Format("2 January 2006") }

// Said is what a turn says, an image's caption included: the text of its
// entry.
func (t Turn) Said() string {
	text := strings.TrimSpace(t.Text)
	if c := strings.TrimSpace(t.Caption); c != "" {
		text += " [shares a photo: " + c + "]"
	}
	return text
}

func turnEntries(s *source, c Conversation) {
	people := c.Participants
	if len(people) == 0 {
		for _, se := range c.Sessions {
			for _, t := range se.Turns {
				if !slices.Contains(people, t.Speaker) {
					people = append(people, t.Speaker)
				}
			}
		}
	}
	domain := folderSlug(strings.Join(people, " and "))
	ctx := contextTurns(s.opts)
	for _, se := range c.Sessions {
		folder := s.folder(domain, fmt.Sprintf("session_%02d", se.N))
		for i, t := range se.Turns {
			var flow []string
			for _, p := range se.Turns[max(i-ctx, 0):i] {
				flow = append(flow, tree.ReplyPrefix+p.Speaker+": "+p.Said())
			}
			title := t.Speaker
			if !se.Date.IsZero() {
				title += " on " + dayText(se.Date)
			}
			id := t.ID
			if id == "" {
				id = fmt.Sprintf("%d", t.N)
			}
			s.add(Piece{
				Folder: folder, Name: fmt.Sprintf("turn_%03d", t.N), Title: title,
				Text: t.Said(), Task: fmt.Sprintf("Turn %s of session %d", id, se.N),
				Author: t.Speaker, Flow: strings.Join(flow, "\n"), Timestamp: stamp(se.Date),
			})
		}
	}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func sessionEntries(s *source, c Conversation) {
	for _, se := range c.Sessions {
		topic := "undated"
		title := "Chat"
		if !se.Date.IsZero() {
			topic = se.Date.Format("2006_01")
			title += " on " + dayText(se.Date)
		}
		if s.stem != "" {
			topic = s.topic() + "/" + topic
		}
		s.add(Piece{
			Folder: s.folder("chats", topic), Name: fmt.Sprintf("session_%02d", se.N), Title: title,
			Text: sessionText(se.Turns), Task: "Chat with the assistant", Author: "user", Timestamp: stamp(se.Date),
		})
	}
}

// sessionText is a session's messages, "**User:** …" / "**Assistant:** …".
func sessionText(turns []Turn) string {
	parts := make([]string, 0, len(turns))
	for _, t := range turns {
		who := strings.TrimSpace(t.Speaker)
		if atoms.IsRole(who) {
			r := strings.ToLower(who)
			who = strings.ToUpper(r[:1]) + r[1:]
		}
		parts = append(parts, "**"+who+":** "+t.Said())
	}
	return strings.Join(parts, "\n\n")
}

// ---- chat transcripts in JSON ---------------------------------------

// chatFromJSON recognizes the chat shapes of a JSON document (ok) and
// decodes them:
//
//   - LoCoMo: an object (or a list of them) with "conversation":
//     {speaker_a, speaker_b, session_<n>: [{speaker, dia_id, text,
//     blip_caption?}], session_<n>_date_time}, or that inner object itself;
//   - LongMemEval: an object (or a list) with "haystack_sessions" (lists of
//     {role, content}) and "haystack_dates"; sessions repeated across
//     questions (same haystack_session_ids) are kept once, and the ids are
//     never written;
//   - generic: {"sessions": [{"date", "messages"|"turns": [...]} | [...]]};
//   - a bare list of messages [{role|speaker, content|text}]: one session.
//
// A recognized document that breaks its shape is bad input (err).
func chatFromJSON(v value) ([]Conversation, bool, error) {
	items := []value{v}
	if v.kind == 'a' {
		if c, ok := chatFromMessages(v); ok {
			return []Conversation{c}, true, nil
		}
		items = v.arr
	}
	if len(items) == 0 {
		return nil, false, nil
	}
	shape := chatShape(items[0])
	if shape == "" {
		return nil, false, nil
	}
	for i, it := range items {
		if chatShape(it) != shape {
			return nil, true, badf("chat transcript: item %d does not have the shape of the first (%s)", i+1, shape)
		}
	}
	switch shape {
	case "locomo":
		var out []Conversation
		for i, it := range items {
			c, err := locomoConversation(it)
			if err != nil {
				return nil, true, badf("chat transcript: conversation %d: %v", i+1, err)
			}
			out = append(out, c)
		}
		return out, true, nil
	case "longmemeval":
		c, err := lmeConversation(items)
		return []Conversation{c}, true, err
	}
	var out []Conversation
	for i, it := range items {
		c, err := genericConversation(it)
		if err != nil {
			return nil, true, badf("chat transcript: item %d: %v", i+1, err)
		}
		out = append(out, c)
	}
	return out, true, nil
}

func chatShape(v value) string {
	if v.kind != 'o' {
		return ""
	}
	if c, ok := v.get("conversation"); ok && c.kind == 'o' {
		if _, ok := c.get("speaker_a"); ok {
			return "locomo"
		}
	}
	if _, ok := v.get("speaker_a"); ok {
		if _, ok := v.get("session_1"); ok {
			return "locomo"
		}
	}
	if _, ok := v.get("haystack_sessions"); ok {
		return "longmemeval"
	}
	if ss, ok := v.get("sessions"); ok && ss.kind == 'a' {
		return "sessions"
	}
	return ""
}

var (
	sessionKey = &lazyRegexp{pattern: `^session_(\d+)$`}
	diaID      = &lazyRegexp{pattern: `^D(\d+):(\d+)$`}
)

func locomoConversation(v value) (Conversation, error) {
	if c, ok := v.get("conversation"); ok {
		v = c
	}
	var c Conversation
	for _, k := range []string{"speaker_a", "speaker_b"} {
		if p := strings.TrimSpace(v.str(k)); p != "" {
			c.Participants = append(c.Participants, p)
		}
	}
	for _, m := range v.obj {
		sm := sessionKey.get().FindStringSubmatch(m.key)
		if sm == nil {
			continue
		}
		if m.val.kind != 'a' {
			return c, fmt.Errorf("%s is not a list of turns", m.key)
		}
		n, _ := strconv.Atoi(sm[1])
		se := Session{N: n, Date: ParseDate(v.str(m.key + "_date_time"))}
		seen := map[int]bool{}
		for i, t := range m.val.arr {
			if t.kind != 'o' {
				return c, fmt.Errorf("%s turn %d is not an object", m.key, i+1)
			}
			turn := Turn{ID: t.str("dia_id"), Speaker: t.str("speaker"), Text: t.str("text"), Caption: t.str("blip_caption")}
			d := diaID.get().FindStringSubmatch(turn.ID)
			if d != nil && d[1] == strconv.Itoa(n) {
				turn.N, _ = strconv.Atoi(d[2])
			}
			if turn.N == 0 || seen[turn.N] {
				// Ids must be unique: a malformed one gives way to the position.
				turn.ID, turn.N = fmt.Sprintf("D%d:%d", n, i+1), i+1
			}
			seen[turn.N] = true
			se.Turns = append(se.Turns, turn)
		}
		if len(se.Turns) > 0 {
			c.Sessions = append(c.Sessions, se)
		}
	}
	slices.SortFunc(c.Sessions, func(a, b Session) int { return a.N - b.N })
	return c, nil
}

func lmeConversation(items []value) (Conversation, error) {
	var c Conversation
	seen := map[string]bool{}
	type dated struct {
		date  time.Time
		turns []Turn
	}
	var all []dated
	for qi, q := range items {
		hs, _ := q.get("haystack_sessions")
		ds, _ := q.get("haystack_dates")
		ids, _ := q.get("haystack_session_ids")
		if hs.kind != 'a' {
			return c, badf("chat transcript: item %d: haystack_sessions is not a list", qi+1)
		}
		for i, sv := range hs.arr {
			if i < len(ids.arr) {
				id := ids.arr[i].text
				if seen[id] {
					continue
				}
				seen[id] = true
			}
			var date time.Time
			if i < len(ds.arr) {
				date = ParseDate(ds.arr[i].text)
			}
			turns, err := messages(sv)
			if err != nil {
				return c, badf("chat transcript: item %d session %d: %v", qi+1, i+1, err)
			}
			all = append(all, dated{date, turns})
		}
	}
	for i, d := range all {
		c.Sessions = append(c.Sessions, Session{N: i + 1, Date: d.date, Turns: d.turns})
	}
	return c, nil
}

func genericConversation(v value) (Conversation, error) {
	var c Conversation
	ss, _ := v.get("sessions")
	if ps, ok := v.get("participants"); ok && ps.kind == 'a' {
		for _, p := range ps.arr {
			if p.kind == 's' && strings.TrimSpace(p.text) != "" {
				c.Participants = append(c.Participants, strings.TrimSpace(p.text))
			}
		}
	}
	for i, sv := range ss.arr {
		se := Session{N: i + 1}
		list := sv
		if sv.kind == 'o' {
			se.Date = ParseDate(firstString(sv, "date", "time", "timestamp", "started_at", "created_at"))
			var ok bool
			if list, ok = sv.get("messages"); !ok {
				list, _ = sv.get("turns")
			}
		}
		turns, err := messages(list)
		if err != nil {
			return c, fmt.Errorf("session %d: %v", i+1, err)
		}
		if se.Date.IsZero() && len(list.arr) > 0 {
			se.Date = ParseDate(firstString(list.arr[0], "date", "time", "timestamp", "created_at"))
		}
		se.Turns = turns
		if len(turns) > 0 {
			c.Sessions = append(c.Sessions, se)
		}
	}
	return c, nil
}

// chatFromMessages reads a list of messages as one session when every
// element is a message (ok).
func chatFromMessages(v value) (Conversation, bool) {
	if v.kind != 'a' || len(v.arr) == 0 {
		return Conversation{}, false
	}
	for _, m := range v.arr {
		if !isMessage(m) {
			return Conversation{}, false
		}
	}
	turns, err := messages(v)
	if err != nil {
		return Conversation{}, false
	}
	date := ParseDate(firstString(v.arr[0], "date", "time", "timestamp", "created_at"))
	return Conversation{Sessions: []Session{{N: 1, Date: date, Turns: turns}}}, true
}

func isMessage(m value) bool {
	if m.kind != 'o' {
		return false
	}
	who, text := firstString(m, "role", "speaker"), ""
	if c, ok := m.get("content"); ok {
		text = contentText(c)
	} else {
		text = m.str("text")
	}
	return who != "" && text != ""
}

// messages decodes a list of {role|speaker, content|text, id?} turns.
func messages(list value) ([]Turn, error) {
	if list.kind != 'a' {
		return nil, fmt.Errorf("not a list of messages")
	}
	var out []Turn
	for i, m := range list.arr {
		if m.kind != 'o' {
			return nil, fmt.Errorf("message %d is not an object", i+1)
		}
		t := Turn{Speaker: strings.TrimSpace(firstString(m, "role", "speaker", "author", "from")), N: i + 1}
		if c, ok := m.get("content"); ok {
			t.Text = contentText(c)
		} else {
			t.Text = m.str("text")
		}
		if id, ok := m.get("id"); ok && (id.kind == 's' || id.kind == 'l') {
			t.ID = id.text
		}
		if t.Speaker == "" {
			return nil, fmt.Errorf("message %d has no role or speaker", i+1)
		}
		if strings.TrimSpace(t.Text) == "" {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// contentText reads a message's content: a string, or a list of parts
// ({type: "text", text}) as chat APIs write it.
func contentText(c value) string {
	switch c.kind {
	case 's':
		return c.text
	case 'a':
		var parts []string
		for _, p := range c.arr {
			if p.kind == 's' {
				parts = append(parts, p.text)
			} else if t := p.str("text"); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func firstString(v value, keys ...string) string {
	for _, k := range keys {
		if s := v.str(k); s != "" {
			return s
		}
	}
	return ""
}

// dateLayouts are the date forms ParseDate reads, most specific first.
var dateLayouts = []string{
	time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02",
	"2006/01/02 15:04", "2006/01/02",
	"3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006", "3:04 PM on 2 January, 2006",
	time.RFC1123Z, time.RFC1123, "20060102T150405Z", "20060102T150405", "20060102",
}

// ParseDate reads the dates chat transcripts and calendars write: RFC 3339
// and ISO forms, LongMemEval's "2023/05/20 (Sat) 02:21", LoCoMo's "1:56 pm
// on 8 May, 2023", iCalendar's "20260302T140000Z". It returns the zero time
// for anything else.
func ParseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "("); i >= 0 {
		if j := strings.Index(s[i:], ")"); j >= 0 {
			s = strings.TrimSpace(strings.TrimSpace(s[:i]) + " " + strings.TrimSpace(s[i+j+1:]))
		}
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t
		}
	}
	return time.Time{}
}
