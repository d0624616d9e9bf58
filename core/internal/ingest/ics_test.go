package ingest

import (
	"reflect"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestSplitCalendarTable(t *testing.T) {
	cal := api.FormatCalendar
	wrap := func(body string) string { return "BEGIN:VCALENDAR\nVERSION:2.0\n" + body + "END:VCALENDAR\n" }
	runSplit(t, []splitCase{
		{name: "every field", file: "team.ics", format: cal,
			content: wrap("BEGIN:VEVENT\nUID:e1@example.com\nSUMMARY:Design review\\, round 2\n" +
				"DTSTART;TZID=Europe/Lisbon:20260302T140000\nDTEND;TZID=Europe/Lisbon:20260302T150000\n" +
				"LOCATION:Room 4\\; east wing\nORGANIZER;CN=\"Costa, Ana\":mailto:ana@example.com\n" +
				"RRULE:FREQ=WEEKLY;BYDAY=MO\nSTATUS:CONFIRMED\n" +
				"DESCRIPTION:Agenda:\\nfirst the API\n \\, then the UI\n\tand a \\\\ backslash\nEND:VEVENT\n"),
			want: []piece{{path: "calendar/team/design_review_round_2.md", title: "Design review, round 2",
				text: "- **Starts**: Monday 2 March 2026 14:00 (Europe/Lisbon)\n- **Ends**: Monday 2 March 2026 15:00 (Europe/Lisbon)\n" +
					"- **Location**: Room 4; east wing\n- **Organizer**: Costa, Ana <ana@example.com>\n" +
					"- **Repeats**: FREQ=WEEKLY;BYDAY=MO\n- **Status**: CONFIRMED\n\n" +
					"Agenda:\nfirst the API, then the UIand a \\ backslash",
				task: "Calendar event e1@example.com (lines 3-15)", author: "Costa, Ana", stamp: "2026-03-02T14:00:00 Europe/Lisbon"}}},
		{name: "UTC, floating and all-day times", file: "t.ics", format: cal,
			content: wrap("BEGIN:VEVENT\nSUMMARY:utc\nDTSTART:20260302T140000Z\nEND:VEVENT\n" +
				"BEGIN:VEVENT\nSUMMARY:floating\nDTSTART:20260302T140000\nEND:VEVENT\n" +
				"BEGIN:VEVENT\nSUMMARY:all day\nDTSTART;VALUE=DATE:20260415\nDTEND;VALUE=DATE:20260417\nEND:VEVENT\n"),
			want: []piece{
				{path: "calendar/t/utc.md", title: "utc", text: "- **Starts**: Monday 2 March 2026 14:00 UTC", task: "Calendar event (lines 3-6)", stamp: "2026-03-02T14:00:00Z"},
				{path: "calendar/t/floating.md", title: "floating", text: "- **Starts**: Monday 2 March 2026 14:00", task: "Calendar event (lines 7-10)", stamp: "2026-03-02T14:00:00"},
				{path: "calendar/t/all_day.md", title: "all day", text: "- **Starts**: Wednesday 15 April 2026\n- **Ends**: Friday 17 April 2026", task: "Calendar event (lines 11-15)", stamp: "2026-04-15"},
			}},
		{name: "unreadable time shown as written", file: "t.ics", format: cal,
			content: wrap("BEGIN:VEVENT\nSUMMARY:soon\nDTSTART:tomorrow\nEND:VEVENT\n"),
			want:    []piece{{path: "calendar/t/soon.md", title: "soon", text: "- **Starts**: tomorrow", task: "Calendar event (lines 3-6)"}}},
		{name: "untitled events are numbered, the first property wins", file: "n.ics", format: cal,
			content: wrap("BEGIN:VEVENT\nLOCATION:A\nLOCATION:B\nEND:VEVENT\nBEGIN:VEVENT\nSTATUS:TENTATIVE\nEND:VEVENT\n"),
			want: []piece{
				{path: "calendar/n/event_1.md", title: "Event 1", text: "- **Location**: A", task: "Calendar event (lines 3-6)"},
				{path: "calendar/n/event_2.md", title: "Event 2", text: "- **Status**: TENTATIVE", task: "Calendar event (lines 7-9)"},
			}},
		{name: "organizer without a name, upper-case MAILTO", file: "o.ics", format: cal,
			content: wrap("BEGIN:VEVENT\nSUMMARY:s\nORGANIZER:MAILTO:bo@example.com\nEND:VEVENT\n"),
			want:    []piece{{path: "calendar/o/s.md", title: "s", text: "- **Organizer**: bo@example.com", task: "Calendar event (lines 3-6)"}}},
		{name: "names and BEGIN values in any case, CRLF, leading blank lines", file: "c.ics", format: cal,
			content: "\r\n\r\nbegin:vcalendar\r\nbegin:vevent\r\nsummary:Lower\r\nuid:u1\r\nend:vevent\r\nend:vcalendar\r\n",
			want:    []piece{{path: "calendar/c/lower.md", title: "Lower", text: "", task: "Calendar event u1 (lines 4-7)"}}},
		{name: "other components are not events", file: "todo.ics", format: cal,
			content: wrap("BEGIN:VTODO\nSUMMARY:a task\nEND:VTODO\nBEGIN:VTIMEZONE\nTZID:Europe/Lisbon\nEND:VTIMEZONE\n")},
		{name: "same summary twice", file: "r.ics", format: cal,
			content: wrap("BEGIN:VEVENT\nSUMMARY:Standup\nEND:VEVENT\nBEGIN:VEVENT\nSUMMARY:Standup\nEND:VEVENT\n"),
			want: []piece{
				{path: "calendar/r/standup.md", title: "Standup", text: "", task: "Calendar event (lines 3-5)"},
				{path: "calendar/r/standup_2.md", title: "Standup", text: "", task: "Calendar event (lines 6-8)"},
			}},
		{name: "an alarm's properties are not the event's", file: "a.ics", format: cal,
			content: wrap("BEGIN:VEVENT\nSUMMARY:Dentist\nBEGIN:VALARM\nACTION:DISPLAY\nDESCRIPTION:Reminder\nTRIGGER:-PT15M\nEND:VALARM\nLOCATION:Main St\nEND:VEVENT\n"),
			want:    []piece{{path: "calendar/a/dentist.md", title: "Dentist", text: "- **Location**: Main St", task: "Calendar event (lines 3-11)"}}},
		{name: "Domain option", file: "r.ics", format: cal, opts: api.IngestOptions{Domain: "Agenda"},
			content: wrap("BEGIN:VEVENT\nSUMMARY:x\nEND:VEVENT\n"),
			want:    []piece{{path: "agenda/r/x.md", title: "x", text: "", task: "Calendar event (lines 3-5)"}}},
		{name: "empty calendar", file: "e.ics", format: cal, content: "BEGIN:VCALENDAR\nEND:VCALENDAR\n"},
	})
}

func TestParseICSLine(t *testing.T) {
	tests := []struct {
		line   string
		name   string
		params map[string]string
		value  string
		ok     bool
	}{
		{"SUMMARY:Hello", "SUMMARY", map[string]string{}, "Hello", true},
		{"summary:Hello: world", "SUMMARY", map[string]string{}, "Hello: world", true},
		{"DTSTART;TZID=Europe/Lisbon:20260302T140000", "DTSTART", map[string]string{"TZID": "Europe/Lisbon"}, "20260302T140000", true},
		{`ORGANIZER;cn="Doe: J";ROLE=CHAIR:mailto:j@example.com`, "ORGANIZER", map[string]string{"CN": "Doe: J", "ROLE": "CHAIR"}, "mailto:j@example.com", true},
		{"X-EMPTY:", "X-EMPTY", map[string]string{}, "", true},
		{"NOCOLON", "", nil, "", false},
		{":VALUE", "", nil, "", false},
		{`A;P="open:never closed`, "", nil, "", false},
	}
	for _, tc := range tests {
		name, p, ok := parseICSLine(tc.line)
		if ok != tc.ok || name != tc.name || p.value != tc.value || (tc.ok && !reflect.DeepEqual(p.params, tc.params)) {
			t.Errorf("parseICSLine(%q) = %q %v %q %v, want %q %v %q %v", tc.line, name, p.params, p.value, ok, tc.name, tc.params, tc.value, tc.ok)
		}
	}
}
