package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// fixture splits testdata/<name> and fails the test on an error.
func fixture(t *testing.T, name string) ([]Piece, api.Format) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	ps, format, err := Split(api.SourceFile{Name: name, Content: string(b)}, api.IngestOptions{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ps, format
}

// want describes one expected piece: path, title, a task prefix and
// substrings its text must (and must not) hold.
type want struct {
	path, title, task string
	has, hasNot       []string
	author, stamp     string
	flow              string
}

func check(t *testing.T, name string, ps []Piece, wants []want) {
	t.Helper()
	if len(ps) != len(wants) {
		for _, p := range ps {
			t.Logf("  %s %q", p.Path(), p.Title)
		}
		t.Fatalf("%s: %d pieces, want %d", name, len(ps), len(wants))
	}
	for i, w := range wants {
		p := ps[i]
		if p.Path() != w.path || p.Title != w.title || !strings.HasPrefix(p.Task, w.task) {
			t.Errorf("%s #%d: got %s %q task %q, want %s %q task %q…", name, i, p.Path(), p.Title, p.Task, w.path, w.title, w.task)
		}
		if p.Source != name {
			t.Errorf("%s #%d: source %q", name, i, p.Source)
		}
		if p.Author != w.author || p.Timestamp != w.stamp || p.Flow != w.flow {
			t.Errorf("%s #%d: author %q stamp %q flow %q, want %q %q %q", name, i, p.Author, p.Timestamp, p.Flow, w.author, w.stamp, w.flow)
		}
		for _, h := range w.has {
			if !strings.Contains(p.Text, h) {
				t.Errorf("%s #%d (%s): text lacks %q:\n%s", name, i, p.Title, h, p.Text)
			}
		}
		for _, h := range w.hasNot {
			if strings.Contains(p.Text, h) {
				t.Errorf("%s #%d (%s): text holds %q:\n%s", name, i, p.Title, h, p.Text)
			}
		}
	}
}

func TestMarkdown(t *testing.T) {
	ps, f := fixture(t, "guide.md")
	if f != api.FormatMarkdown {
		t.Errorf("format %s", f)
	}
	// One note, titled by its front matter (the opening "# Deploy guide"
	// repeats it and leaves the text), its headings renested from level 2
	// on, the setext "Examples" made ATX, the fenced "#" line untouched.
	check(t, "guide.md", ps, []want{
		{path: "documents/guide/guide.md", title: "Deploy guide", task: "Note (lines 7-45)",
			has: []string{"How services reach production", "#### Pipeline\n", "##### Canary\n", "# not a heading: a comment in a fence",
				"##### Rollback\n", "###### Database migrations\n", "#### Secrets\n", "#### Examples\n", "Tuesdays"},
			hasNot: []string{"owner: platform", "# Deploy guide", "----"}},
	})
	if ps[0].Extra[0] != (api.KeyValue{Key: "owner", Value: "platform"}) {
		t.Errorf("front matter kept: %q", ps[0].Extra)
	}
}

func TestText(t *testing.T) {
	ps, _ := fixture(t, "journal.txt")
	check(t, "journal.txt", ps, []want{
		// Short paragraphs are grouped...
		{path: "documents/journal/monday_started_the_half_marathon_plan_three_easy_runs_and_one_long_run.md",
			title: "Monday. Started the half-marathon plan: three easy runs and one long run", task: "Text, lines 1-9",
			has: []string{"Monday.", "Knee felt fine.", "Tuesday."}, hasNot: []string{"Wednesday"}},
		// ...a long one closes the group and starts the next.
		{path: "documents/journal/wednesday_interval_session_6_x_800_m_at_5_10_km_with_2_minutes_of.md",
			title: "Wednesday. Interval session: 6 x 800 m at 5:10/km with 2 minutes of…", task: "Text, lines 11-26",
			has: []string{"Wednesday.", "Thursday. Easy 5 km."}},
	})
}

func TestCSVAndTSV(t *testing.T) {
	ps, _ := fixture(t, "contacts.csv")
	check(t, "contacts.csv", ps, []want{
		{path: "data/contacts/ana_costa.md", title: "Ana Costa", task: "Row 1 (line 2)", has: []string{"- **role**: Engineering manager", "- **notes**: Prefers async updates; weekly 1:1 on Thursdays"}},
		{path: "data/contacts/bruno_lima.md", title: "Bruno Lima", task: "Row 2 (line 3)", has: []string{"- **email**: bruno@example.com"}},
		// A quoted field with a comma and a line break stays one field.
		{path: "data/contacts/chen_wei.md", title: "Chen, Wei", task: "Row 3 (line 4)", has: []string{"- **name**: Chen, Wei", "Owns the design system.\n  Ask before adding components."}},
	})
	ps, f := fixture(t, "watchlist.tsv")
	if f != api.FormatTSV {
		t.Errorf("format %s", f)
	}
	// The "name" column titles the row, not the first one.
	check(t, "watchlist.tsv", ps, []want{
		{path: "data/watchlist/asml_holding.md", title: "ASML Holding", task: "Row 1 (line 2)", has: []string{"- **ticker**: ASML", "- **note**: Lithography monopoly"}},
		{path: "data/watchlist/taiwan_semiconductor.md", title: "Taiwan Semiconductor", task: "Row 2 (line 3)", has: []string{"- **sector**: Semiconductors"}},
	})
}

func TestJSON(t *testing.T) {
	ps, f := fixture(t, "services.json")
	if f != api.FormatJSON {
		t.Errorf("format %s", f)
	}
	check(t, "services.json", ps, []want{
		// Fields keep their order; lists of scalars are joined, objects stay JSON.
		{path: "data/services/billing.md", title: "billing", task: "Record 1 (lines 2-8)", has: []string{"- **name**: billing\n- **owner**: payments team", "- **depends_on**: auth, ledger", `- **sla**: {"availability":99.95,"p99_ms":300}`}},
		{path: "data/services/auth.md", title: "auth", task: "Record 2 (lines 9-15)", has: []string{"refresh tokens rotate"}, hasNot: []string{"depends_on"}},
		{path: "data/services/record_3.md", title: "Record 3", task: "Record 3 (line 16)", has: []string{"- **owner**: nobody"}},
	})
	ps, f = fixture(t, "events.jsonl")
	if f != api.FormatJSONL {
		t.Errorf("format %s", f)
	}
	check(t, "events.jsonl", ps, []want{
		{path: "data/events/record_1.md", title: "Record 1", task: "Record 1 (line 1)", has: []string{"- **event**: deploy", "1.42.0"}},
		{path: "data/events/record_2.md", title: "Record 2", task: "Record 2 (line 2)", has: []string{"- **reason**: error rate 2%"}},
		{path: "data/events/record_3.md", title: "Record 3", task: "Record 3 (line 4)", has: []string{"1.42.1"}},
	})
}

func TestEmail(t *testing.T) {
	ps, _ := fixture(t, "invoice.eml")
	check(t, "invoice.eml", ps, []want{{
		path: "mail/2026_01/invoice_run_failed_retry_tonight.md", title: "Invoice run failed — retry tonight",
		task: "E-mail message 20260113091400.abc@example.com", author: "Ana Costa", stamp: "2026-01-13T09:14:00Z",
		has: []string{
			`- **From**: "Ana Costa" <ana@example.com>`, "- **Cc**: finance@example.com", "- **Attachments**: pool-graph.pdf",
			// quoted-printable soft line break joined
			"exhausted (40 of 40 in use)",
		},
		// text/plain is preferred over text/html; attachments are not inlined.
		hasNot: []string{"<p>", "<b>", "JVBERi0"},
	}})
	html := "From: bob@example.com\nSubject: Hello\nContent-Type: text/html; charset=iso-8859-1\n\n<html><head><style>p{}</style></head><body><p>Caf\xe9 at <b>noon</b>&amp;later</p></body></html>\n"
	// Latin-1 bytes are not UTF-8: the file itself is refused...
	if _, _, err := Split(api.SourceFile{Name: "hello.eml", Content: html}, api.IngestOptions{}); !errors.Is(err, api.ErrBadInput) {
		t.Errorf("latin-1 bytes in the file: %v", err)
	}
	// ...but a quoted-printable Latin-1 body is decoded.
	qp := "From: Bob <bob@example.com>\nSubject: Hello\nContent-Type: text/html; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\n<html><head><style>p{}</style></head><body><p>Caf=E9 at <b>noon</b>&amp;later</p></body></html>\n"
	ps, _, err := Split(api.SourceFile{Name: "hello.eml", Content: qp}, api.IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := ps[0]; p.Path() != "mail/undated/hello.md" || !strings.Contains(p.Text, "Café at noon&later") || strings.Contains(p.Text, "p{}") || p.Author != "Bob" {
		t.Errorf("html mail: %s author %q\n%s", p.Path(), p.Author, p.Text)
	}
}

func TestCalendar(t *testing.T) {
	ps, _ := fixture(t, "team.ics")
	check(t, "team.ics", ps, []want{
		{path: "calendar/team/sprint_retrospective.md", title: "Sprint retrospective", task: "Calendar event retro-2026-03@example.com (lines 4-13)",
			author: "Ana Costa", stamp: "2026-03-02T14:00:00Z",
			// Escapes undone and the folded DESCRIPTION line joined ("each").
			has: []string{"- **Starts**: Monday 2 March 2026 14:00 UTC", "- **Location**: Room 4, second floor", "- **Organizer**: Ana Costa <ana@example.com>", "What went well, what did not.\nBring one improvement idea each."}},
		{path: "calendar/team/team_offsite_in_porto.md", title: "Team offsite in Porto", task: "Calendar event offsite-2026@example.com", stamp: "2026-04-15",
			has: []string{"- **Starts**: Wednesday 15 April 2026", "- **Ends**: Friday 17 April 2026", "Train from Lisbon"}},
		{path: "calendar/team/standup.md", title: "Standup", task: "Calendar event standup@example.com", stamp: "2026-01-05T09:30:00 Europe/Lisbon",
			has: []string{"09:30 (Europe/Lisbon)", "- **Repeats**: FREQ=WEEKLY;BYDAY=MO,WE,FR"}},
	})
}

func TestGo(t *testing.T) {
	ps, _ := fixture(t, "store.go")
	check(t, "store.go", ps, []want{
		{path: "code/store/package_store.md", title: "package store", task: "Go package store (lines 1-2)", has: []string{"// Package store keeps invoices in memory."}},
		{path: "code/store/var_errnotfound.md", title: "var ErrNotFound", task: "Go var ErrNotFound (lines 9-10)", has: []string{"// ErrNotFound is returned"}},
		{path: "code/store/const_maxinvoices_maxlines.md", title: "const MaxInvoices, MaxLines", task: "Go const MaxInvoices, MaxLines (lines 12-16)", has: []string{"MaxLines    = 200"}},
		{path: "code/store/type_invoice.md", title: "type Invoice", task: "Go type Invoice (lines 18-22)", has: []string{"```go\n// Invoice is one bill", "Total int64 // cents\n}\n```"}},
		{path: "code/store/type_store.md", title: "type Store", task: "Go type Store"},
		{path: "code/store/func_new.md", title: "func New", task: "Go func New (lines 30-31)"},
		{path: "code/store/method_store_get.md", title: "method Store.Get", task: "Go method Store.Get (lines 33-42)", has: []string{"return inv, nil\n}"}},
	})
	for _, p := range ps {
		if strings.Contains(p.Text, "import (") {
			t.Errorf("%s holds the imports", p.Title)
		}
	}
	if _, _, err := Split(api.SourceFile{Name: "bad.go", Content: "package x\nfunc {"}, api.IngestOptions{}); !errors.Is(err, api.ErrBadInput) || !strings.Contains(err.Error(), "malformed Go") {
		t.Errorf("bad Go: %v", err)
	}
}

func TestTypeScript(t *testing.T) {
	ps, f := fixture(t, "retry.ts")
	if f != api.FormatJS {
		t.Errorf("format %s", f)
	}
	check(t, "retry.ts", ps, []want{
		{path: "code/retry/const_backoff_ms.md", title: "const BACKOFF_MS", task: "TypeScript const BACKOFF_MS (lines 4-5)", has: []string{"/** How long to wait"}},
		{path: "code/retry/interface_retryoptions.md", title: "interface RetryOptions", task: "TypeScript interface RetryOptions (lines 7-11)", has: []string{"// Options of retry().", "onRetry?"}},
		// Braces in strings and template literals do not end the function.
		{path: "code/retry/function_retry.md", title: "function retry", task: "TypeScript function retry (lines 13-28)", has: []string{"Calls fn until", "await sleep("}},
		{path: "code/retry/class_retryerror.md", title: "class RetryError", task: "TypeScript class RetryError (lines 30-34)", has: []string{"`gave up after ${attempts} attempts`"}},
		{path: "code/retry/type_clock.md", title: "type Clock", task: "TypeScript type Clock (lines 36-38)"},
		{path: "code/retry/module_code.md", title: "module code", task: "TypeScript top-level statements (line 40)", has: []string{"console.log"}, hasNot: []string{"import", "helper"}},
	})
	js := "const a = require('a');\n\nmodule.exports = function handler(req) {\n  return a(req);\n};\n\nexports.name = 'x';\n"
	ps, _, err := Split(api.SourceFile{Name: "h.cjs", Content: js}, api.IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, p := range ps {
		titles = append(titles, p.Title)
	}
	if got := strings.Join(titles, "|"); got != "const a|module.exports |exports name" {
		t.Errorf("CommonJS titles: %q", got)
	}
}

func TestPython(t *testing.T) {
	ps, _ := fixture(t, "ratelimit.py")
	check(t, "ratelimit.py", ps, []want{
		// The decorator belongs to the class; a "def" inside a string does not start a symbol.
		{path: "code/ratelimit/class_bucket.md", title: "class Bucket", task: "Python class Bucket (lines 9-24)", has: []string{"@dataclass\nclass Bucket", "def not_a_function", "return False"}},
		// The comment right above belongs to the function; the bracket continuation stays in it.
		{path: "code/ratelimit/def_limiter_for.md", title: "def limiter_for", task: "Python def limiter_for (lines 27-30)", has: []string{"# Shared by the request handlers.", "rate: float = DEFAULT_RATE) -> Bucket:"}},
		{path: "code/ratelimit/def_drain.md", title: "def drain", task: "Python def drain (lines 33-35)"},
		{path: "code/ratelimit/module_code.md", title: "module code", task: "Python top-level statements", has: []string{`"""A token bucket rate limiter."""`, "DEFAULT_RATE = 10", `if __name__ == "__main__":`}, hasNot: []string{"import"}},
	})
}

// A comment at column 0 inside a function body does not end the function.
func TestPythonCommentInBody(t *testing.T) {
	src := "def f():\n    a = 1\n# TODO: explain\n    return a\n\n# about g\ndef g():\n    pass\n"
	ps, _, err := Split(api.SourceFile{Name: "m.py", Content: src}, api.IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || !strings.Contains(ps[0].Text, "return a") || !strings.Contains(ps[1].Text, "# about g\ndef g") {
		for _, p := range ps {
			t.Logf("%s:\n%s", p.Title, p.Text)
		}
		t.Errorf("%d pieces", len(ps))
	}
}

func TestChatLoCoMo(t *testing.T) {
	ps, f := fixture(t, "locomo_sample.json")
	if f != api.FormatChat {
		t.Fatalf("format %s", f)
	}
	first := "In reply to Caroline: Hey Mel! I went to the LGBTQ support group yesterday."
	check(t, "locomo_sample.json", ps, []want{
		{path: "caroline_and_melanie/session_01/turn_001.md", title: "Caroline on 8 May 2023", task: "Turn D1:1 of session 1", author: "Caroline", stamp: "2023-05-08T13:56:00Z", has: []string{"support group yesterday"}},
		{path: "caroline_and_melanie/session_01/turn_002.md", title: "Melanie on 8 May 2023", task: "Turn D1:2 of session 1", author: "Melanie", stamp: "2023-05-08T13:56:00Z", flow: first},
		{path: "caroline_and_melanie/session_01/turn_003.md", title: "Caroline on 8 May 2023", task: "Turn D1:3 of session 1", author: "Caroline", stamp: "2023-05-08T13:56:00Z",
			flow: first + "\nIn reply to Melanie: That's great! How did it feel?", has: []string{"counseling. [shares a photo: a photo of a poster about counseling courses]"}},
		// A repeated dia_id gives way to the turn's position.
		{path: "caroline_and_melanie/session_01/turn_004.md", title: "Melanie on 8 May 2023", task: "Turn D1:4 of session 1", author: "Melanie", stamp: "2023-05-08T13:56:00Z",
			flow: "In reply to Melanie: That's great! How did it feel?\nIn reply to Caroline: Really moving. I'm thinking of studying counseling. [shares a photo: a photo of a poster about counseling courses]"},
		{path: "caroline_and_melanie/session_02/turn_001.md", title: "Melanie on 25 May 2023", task: "Turn D2:1 of session 2", author: "Melanie", stamp: "2023-05-25T19:05:00Z"},
		{path: "caroline_and_melanie/session_02/turn_002.md", title: "Caroline on 25 May 2023", task: "Turn D2:2 of session 2", author: "Caroline", stamp: "2023-05-25T19:05:00Z", flow: "In reply to Melanie: We went camping at the lake last weekend."},
	})
	for _, p := range ps {
		if strings.Contains(p.Text+p.Flow, "derived, not memory") || strings.Contains(p.Text, "support group?") {
			t.Errorf("%s indexes the benchmark's observations or questions", p.Path())
		}
	}
	zero := 0
	b, _ := os.ReadFile("testdata/locomo_sample.json")
	ps, _, _ = Split(api.SourceFile{Name: "locomo_sample.json", Content: string(b)}, api.IngestOptions{ContextTurns: &zero, Domain: "People"})
	if ps[1].Flow != "" || ps[1].Path() != "people/session_01/turn_002.md" {
		t.Errorf("contextTurns 0, domain People: %s flow %q", ps[1].Path(), ps[1].Flow)
	}
}

func TestChatLongMemEval(t *testing.T) {
	ps, _ := fixture(t, "lme_sample.json")
	// The session shared by both questions is kept once; ids never show.
	check(t, "lme_sample.json", ps, []want{
		{path: "chats/lme_sample/2023_05/session_01.md", title: "Chat on 20 May 2023", task: "Chat with the assistant", author: "user", stamp: "2023-05-20T02:21:00Z",
			has: []string{"**User:** I finally bought a Mazda CX-5 yesterday!\n\n**Assistant:** Congratulations!"}},
		{path: "chats/lme_sample/2023_04/session_02.md", title: "Chat on 2 April 2023", task: "Chat with the assistant", author: "user", stamp: "2023-04-02T18:40:00Z", has: []string{"chickpea curry"}},
		{path: "chats/lme_sample/2023_05/session_03.md", title: "Chat on 28 May 2023", task: "Chat with the assistant", author: "user", stamp: "2023-05-28T09:00:00Z", has: []string{"**User:** How do I rotate tyres?"}},
	})
	for _, p := range ps {
		if strings.Contains(p.Text+p.Task+p.Title, "answer_") || strings.Contains(p.Text, "has_answer") || strings.Contains(p.Text, "What car") {
			t.Errorf("%s exposes gold labels or questions", p.Path())
		}
	}
	ps, f := fixture(t, "support_chat.jsonl")
	if f != api.FormatChat {
		t.Fatalf("format %s", f)
	}
	check(t, "support_chat.jsonl", ps, []want{{path: "chats/support_chat/2026_02/session_01.md", title: "Chat on 10 February 2026", task: "Chat with the assistant", author: "user", stamp: "2026-02-10T08:00:00Z",
		has: []string{"**System:** You are a helpful support agent.", "**Assistant:** That is a known bug"}}})
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name, content string
		opts          api.IngestOptions
		msg           string
	}{
		{"notes.md", "ok\xff\xfe", api.IngestOptions{}, "not valid UTF-8 text (at byte 2, line 1)"},
		{"big.txt", strings.Repeat("x", 101), api.IngestOptions{MaxSourceBytes: 100}, "101 bytes is over the 100-byte limit"},
		{"blob.txt", "abc\x00def", api.IngestOptions{}, "binary"},
		{"list.json", "[{\"a\": 1},\n {\"a\": 2,}]", api.IngestOptions{}, "malformed JSON at line 2"},
		{"cut.json", `{"a": [1, 2`, api.IngestOptions{}, "malformed JSON"},
		{"two.json", "{}\n{}", api.IngestOptions{}, "more than one value"},
		{"log.jsonl", "{\"a\":1}\n{\"a\":\n", api.IngestOptions{}, "malformed JSON on line 2"},
		{"rows.csv", "a,b\n1,2\n3\n", api.IngestOptions{}, "malformed CSV"},
		{"quote.csv", "a,b\n\"1,2\n", api.IngestOptions{}, "malformed CSV"},
		{"cal.ics", "BEGIN:VEVENT\nSUMMARY:x\nEND:VEVENT\n", api.IngestOptions{}, "must begin with BEGIN:VCALENDAR"},
		{"open.ics", "BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:x\nEND:VCALENDAR\n", api.IngestOptions{}, "never closed"},
		{"mail.eml", "no headers here", api.IngestOptions{}, "malformed e-mail"},
		{"parts.eml", "Subject: x\nContent-Type: multipart/mixed; boundary=b\n\n--b\n\nhello\n", api.IngestOptions{}, "not closed by its boundary"},
		{"chat.json", `{"conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": "oops"}}`, api.IngestOptions{}, "session_1 is not a list of turns"},
		{"../up.md", "x", api.IngestOptions{}, "name"},
	}
	for _, c := range cases {
		ps, _, err := Split(api.SourceFile{Name: c.name, Content: c.content}, c.opts)
		if !errors.Is(err, api.ErrBadInput) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.msg)
		}
		if ps != nil {
			t.Errorf("%s: %d pieces from bad input", c.name, len(ps))
		}
	}
}

// TestLongSectionIsCut splits a markdown note longer than partBytes,
// a fenced block longer than that among its paragraphs: entries of whole
// paragraphs, in order, each at most partBytes, the block closed and
// opened again where it is cut, each entry's task naming the lines it
// holds and its title the section it continues, and not a word lost.
func TestLongSectionIsCut(t *testing.T) {
	var src strings.Builder
	src.WriteString("---\ntitle: x\n---\n# Big\n\n")
	para := func(i int) string { return fmt.Sprintf("Paragraph %d %s", i, strings.Repeat("word ", 400)) }
	for i := range 20 {
		src.WriteString(para(i) + "\n\n")
	}
	src.WriteString("```go\n")
	for i := range 1500 {
		fmt.Fprintf(&src, "x%d := %d // a line of code\n", i, i)
	}
	src.WriteString("```\n\n")
	for i := 20; i < 40; i++ {
		src.WriteString(para(i) + "\n\n")
	}
	src.WriteString("## Next\n\nA short section.\n")
	text := src.String()
	ps, _, err := Split(api.SourceFile{Name: "big.md", Content: text}, api.IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text, "\n")
	if last := ps[len(ps)-1]; !strings.HasSuffix(last.Text, "##### Next\n\nA short section.") {
		t.Errorf("the last part: %+v", last)
	}
	var words, code, prevTo int
	for i, p := range ps {
		section := "Big"
		if i == len(ps)-1 {
			section = "Next"
		}
		if len(p.Text) > partBytes || p.Title != fmt.Sprintf("x: %s (part %d of %d)", section, i+1, len(ps)) || p.Name != fmt.Sprintf("big_part_%02d", i+1) {
			t.Fatalf("piece %d: %s %q, %d bytes", i, p.Name, p.Title, len(p.Text))
		}
		var from, to int
		if _, err := fmt.Sscanf(p.Task, "Note (lines %d-%d)", &from, &to); err != nil || from <= prevTo || (i == 0) != (from == 4) {
			t.Fatalf("piece %d: task %q after line %d", i, p.Task, prevTo)
		}
		prevTo = to
		// Its text is its lines', but for the fence lines it adds.
		own := strings.Join(lines[from-1:to], "\n")
		for _, l := range strings.Split(p.Text, "\n") {
			// The headings are renested: "# Big" is "#### Big".
			if l != "```go" && l != "```" && !strings.Contains(own, strings.TrimPrefix(strings.TrimPrefix(l, "###"), "#")) {
				t.Fatalf("piece %d (lines %d-%d) holds %q", i, from, to, l)
			}
		}
		if strings.Count(p.Text, "```")%2 != 0 {
			t.Errorf("piece %d leaves its code block open", i)
		}
		words += strings.Count(p.Text, "word")
		code += strings.Count(p.Text, "// a line of code")
	}
	if words != 40*400 || code != 1500 || len(ps) < len(text)/partBytes {
		t.Errorf("%d pieces hold %d words and %d lines of code", len(ps), words, code)
	}
}

// TestLongParagraphIsCut: a plain-text paragraph over partBytes becomes
// entries of its lines, each titled by its first line, with its lines.
func TestLongParagraphIsCut(t *testing.T) {
	var src strings.Builder
	src.WriteString("Intro.\n\n")
	for i := range 2000 {
		fmt.Fprintf(&src, "line %d of one long paragraph\n", i)
	}
	src.WriteString("\nOutro.\n")
	ps, _, err := Split(api.SourceFile{Name: "log.txt", Content: src.String()}, api.IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 4 || ps[0].Text != "Intro." || ps[len(ps)-1].Text != "Outro." || ps[len(ps)-1].Task != "Text, line 2004" {
		t.Fatalf("%d pieces: first %+v, last %+v", len(ps), ps[0], ps[len(ps)-1])
	}
	next := 0
	for _, p := range ps[1 : len(ps)-1] {
		first := fmt.Sprintf("line %d of one long paragraph", next)
		n := strings.Count(p.Text, "\n") + 1
		if len(p.Text) > partBytes || p.Title != first || !strings.HasPrefix(p.Text, first+"\n") || p.Task != fmt.Sprintf("Text, lines %d-%d", next+3, next+2+n) {
			t.Fatalf("piece %q %q, %d bytes, want from %q", p.Title, p.Task, len(p.Text), first)
		}
		next += n
	}
	if next != 2000 {
		t.Errorf("the pieces hold %d lines", next)
	}
}

// TestLongPieceIsCut: a piece of another format over maxPieceBytes (a
// record) is cut into numbered parts, whatever its splitter made.
func TestLongPieceIsCut(t *testing.T) {
	note := strings.Repeat(strings.Repeat("word ", 1000)+"\n\n", 60) // 300 KB
	rec, _ := json.Marshal(map[string]string{"title": "Log", "note": note})
	ps, _, err := Split(api.SourceFile{Name: "logs.jsonl", Content: string(rec) + "\n"}, api.IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, p := range ps {
		if len(p.Text) > maxPieceBytes || p.Title != fmt.Sprintf("Log (part %d of 2)", i+1) || p.Name != fmt.Sprintf("log_part_%02d", i+1) || p.Task != "Record 1 (line 1)" {
			t.Errorf("piece %d: %s %q %q, %d bytes", i, p.Name, p.Title, p.Task, len(p.Text))
		}
		total += strings.Count(p.Text, "word")
	}
	if len(ps) != 2 || total != 60*1000 {
		t.Errorf("%d pieces, %d words", len(ps), total)
	}
}
