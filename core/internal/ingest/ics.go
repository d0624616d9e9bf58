package ingest

import (
	"fmt"
	"strings"
	"time"
)

// icsFields are the event properties an entry shows, in order.
var icsFields = []struct{ prop, label string }{
	{"DTSTART", "Starts"}, {"DTEND", "Ends"}, {"LOCATION", "Location"},
	{"ORGANIZER", "Organizer"}, {"RRULE", "Repeats"}, {"STATUS", "Status"},
}

// splitCalendar reads an iCalendar file (.ics): folded lines are unfolded,
// and every VEVENT becomes an entry titled by its SUMMARY with its start,
// end, location, organizer and recurrence as fields and its DESCRIPTION as
// text. Events go to calendar/<file name>; the timestamp is DTSTART.
// A file that does not begin with BEGIN:VCALENDAR, or an event left open,
// is refused.
func splitCalendar(s *source) error {
	lines := unfold(s.text)
	first := 0
	for first < len(lines) && strings.TrimSpace(lines[first].text) == "" {
		first++
	}
	if first == len(lines) || !strings.EqualFold(strings.TrimSpace(lines[first].text), "BEGIN:VCALENDAR") {
		return badf("malformed iCalendar: the file must begin with BEGIN:VCALENDAR")
	}
	var ev map[string]icsProp
	evFrom, n := 0, 0
	nested := 0 // depth of components inside the event (VALARM), whose properties are not the event's
	for _, l := range lines {
		name, prop, ok := parseICSLine(l.text)
		if !ok {
			if strings.TrimSpace(l.text) == "" {
				continue
			}
			return badf("malformed iCalendar at line %d: %q is not NAME:VALUE", l.n, l.text)
		}
		switch {
		case name == "BEGIN" && strings.EqualFold(prop.value, "VEVENT"):
			if ev != nil {
				return badf("malformed iCalendar at line %d: an event begins inside the event of line %d", l.n, evFrom)
			}
			ev, evFrom, nested = map[string]icsProp{}, l.n, 0
		case name == "END" && strings.EqualFold(prop.value, "VEVENT"):
			if ev == nil {
				return badf("malformed iCalendar at line %d: END:VEVENT without BEGIN:VEVENT", l.n)
			}
			n++
			s.addEvent(ev, n, evFrom, l.n)
			ev = nil
		case ev != nil && name == "BEGIN":
			nested++
		case ev != nil && name == "END" && nested > 0:
			nested--
		case ev != nil && nested == 0:
			if _, dup := ev[name]; !dup {
				ev[name] = prop
			}
		}
	}
	if ev != nil {
		return badf("malformed iCalendar: the event of line %d is never closed (END:VEVENT)", evFrom)
	}
	return nil
}

type icsLine struct {
	text string
	n    int // 1-based line where it starts
}

type icsProp struct {
	params map[string]string
	value  string
}

// unfold joins RFC 5545 continuation lines (starting with a space or tab).
func unfold(text string) []icsLine {
	var out []icsLine
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, "\r")
		if len(out) > 0 && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) {
			out[len(out)-1].text += l[1:]
			continue
		}
		out = append(out, icsLine{l, i + 1})
	}
	return out
}

// parseICSLine splits "NAME;PARAM=x:VALUE".
func parseICSLine(l string) (string, icsProp, bool) {
	colon := -1
	quoted := false
	for i, c := range l {
		if c == '"' {
			quoted = !quoted
		}
		if c == ':' && !quoted {
			colon = i
			break
		}
	}
	if colon <= 0 {
		return "", icsProp{}, false
	}
	head := strings.Split(l[:colon], ";")
	p := icsProp{params: map[string]string{}, value: l[colon+1:]}
	for _, kv := range head[1:] {
		k, v, _ := strings.Cut(kv, "=")
		p.params[strings.ToUpper(k)] = strings.Trim(v, `"`)
	}
	return strings.ToUpper(strings.TrimSpace(head[0])), p, true
}

// icsText unescapes a TEXT value.
func icsText(v string) string {
	return strings.NewReplacer(`\n`, "\n", `\N`, "\n", `\,`, ",", `\;`, ";", `\\`, `\`).Replace(v)
}

// icsTime reads a DATE or DATE-TIME value. A time with a TZID, or a
// floating one, is read as the wall time written: the core has no time
// zone database (that would be a file read outside the host interface,
// and answers would differ between hosts), so its zone is only named.
func icsTime(p icsProp) (time.Time, bool) {
	v := strings.TrimSpace(p.value)
	layout := "20060102T150405"
	switch {
	case len(v) == 8:
		layout = "20060102"
	case strings.HasSuffix(v, "Z"):
		layout = "20060102T150405Z"
	}
	t, err := time.Parse(layout, v)
	return t, err == nil
}

// icsStamp is the provenance timestamp of a DTSTART: RFC 3339 in UTC, or
// the wall time followed by its TZID.
func icsStamp(p icsProp) string {
	t, ok := icsTime(p)
	switch v := strings.TrimSpace(p.value); {
	case !ok:
		return ""
	case strings.HasSuffix(v, "Z"):
		return stamp(t)
	case len(v) == 8:
		return t.Format("2006-01-02")
	case p.params["TZID"] != "":
		return t.Format("2006-01-02T15:04:05") + " " + p.params["TZID"]
	}
	return t.Format("2006-01-02T15:04:05")
}

// showTime renders a property for people: "2 March 2026 14:00 (Europe/Lisbon)".
func showTime(p icsProp) string {
	t, ok := icsTime(p)
	if !ok {
		return p.value
	}
	if len(strings.TrimSpace(p.value)) == 8 {
		return t.Format("Monday 2 January 2006")
	}
	out := t.Format("Monday 2 January 2006 15:04")
	switch {
	case strings.HasSuffix(p.value, "Z"):
		out += " UTC"
	case p.params["TZID"] != "":
		out += " (" + p.params["TZID"] + ")"
	}
	return out
}

func (s *source) addEvent(ev map[string]icsProp, n, from, to int) {
	title := strings.TrimSpace(icsText(ev["SUMMARY"].value))
	if title == "" {
		title = fmt.Sprintf("Event %d", n)
	}
	var b strings.Builder
	for _, f := range icsFields {
		p, ok := ev[f.prop]
		if !ok || strings.TrimSpace(p.value) == "" {
			continue
		}
		v := icsText(p.value)
		switch f.prop {
		case "DTSTART", "DTEND":
			v = showTime(p)
		case "ORGANIZER":
			v = strings.TrimPrefix(strings.TrimPrefix(v, "mailto:"), "MAILTO:")
			if cn := p.params["CN"]; cn != "" {
				v = cn + " <" + v + ">"
			}
		}
		fmt.Fprintf(&b, "- **%s**: %s\n", f.label, strings.TrimSpace(v))
	}
	if d := strings.TrimSpace(icsText(ev["DESCRIPTION"].value)); d != "" {
		b.WriteString("\n" + d)
	}
	ts := icsStamp(ev["DTSTART"])
	task := fmt.Sprintf("Calendar event (%s)", lines(from, to))
	if uid := strings.TrimSpace(ev["UID"].value); uid != "" {
		task = fmt.Sprintf("Calendar event %s (%s)", uid, lines(from, to))
	}
	author := ev["ORGANIZER"].params["CN"]
	s.add(Piece{
		Folder: s.folder("calendar", s.topic()), Title: shortTitle(title, "Event"),
		Text: strings.TrimSpace(b.String()), Task: task, Author: author, Timestamp: ts,
	})
}
