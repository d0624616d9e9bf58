package ingest

import (
	"encoding/base64"
	"mime"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestSplitEmailTable(t *testing.T) {
	eml := api.FormatEmail
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	multipart := "From: a@example.com\nSubject: Report\nContent-Type: multipart/mixed; boundary=\"outer\"\n\n" +
		"preamble, not a part\n" +
		"--outer\nContent-Type: multipart/alternative; boundary=\"inner\"\n\n" +
		"--inner\nContent-Type: text/plain; charset=utf-8\n\nPlain body.\n" +
		"--inner\nContent-Type: text/html\n\n<p>HTML body</p>\n" +
		"--inner--\n" +
		"--outer\nContent-Type: application/pdf; name=\"report.pdf\"\nContent-Transfer-Encoding: base64\n\nJVBERi0=\n" +
		"--outer\nContent-Type: image/png\n\niVBOR\n" +
		"--outer\nContent-Disposition: attachment\n\ndata\n" +
		"--outer\nContent-Type: text/plain\nContent-Disposition: attachment; filename=\"notes.txt\"\n\nnot inlined\n" +
		"--outer--\nepilogue, not a part\n"
	runSplit(t, []splitCase{
		{name: "plain message", file: "lunch.eml", format: eml,
			content: "From: \"Ana Costa\" <ana@example.com>\nTo: bo@example.com\nSubject: Lunch on Friday\nDate: Fri, 13 Mar 2026 10:00:00 +0100\nMessage-ID: <m1@example.com>\nX-Mailer: ignored\n\nLet's meet at noon.\n",
			want: []piece{{path: "mail/2026_03/lunch_on_friday.md", title: "Lunch on Friday",
				text:   "- **From**: \"Ana Costa\" <ana@example.com>\n- **To**: bo@example.com\n- **Date**: Fri, 13 Mar 2026 10:00:00 +0100\n\nLet's meet at noon.",
				task:   "E-mail message m1@example.com",
				author: "Ana Costa", stamp: "2026-03-13T09:00:00Z"}}},
		// The month of the folder and the timestamp are those of UTC.
		{name: "date in UTC", file: "late.eml", format: eml,
			content: "From: bo@example.com\nCc: c@example.com, d@example.com\nSubject: Late\nDate: Sun, 01 Mar 2026 00:30:00 +0200\n\nok\n",
			want: []piece{{path: "mail/2026_02/late.md", title: "Late",
				text: "- **From**: bo@example.com\n- **Cc**: c@example.com, d@example.com\n- **Date**: Sun, 01 Mar 2026 00:30:00 +0200\n\nok",
				task: "E-mail message", author: "bo@example.com", stamp: "2026-02-28T22:30:00Z"}}},
		{name: "no subject, no date", file: "x.eml", format: eml,
			content: "From: bo@example.com\n\nhi\n",
			want: []piece{{path: "mail/undated/no_subject.md", title: "(no subject)", text: "- **From**: bo@example.com\n\nhi",
				task: "E-mail message", author: "bo@example.com"}}},
		{name: "unreadable date and sender", file: "x.eml", format: eml,
			content: "From: not an address\nSubject: S\nDate: someday\n\nhi\n",
			want: []piece{{path: "mail/undated/s.md", title: "S", text: "- **From**: not an address\n- **Date**: someday\n\nhi",
				task: "E-mail message", author: "not an address"}}},
		{name: "folded and spaced headers", file: "f.eml", format: eml,
			content: "From: bo@example.com\nSubject: A long\n   subject   line\n\nbody\n",
			want: []piece{{path: "mail/undated/a_long_subject_line.md", title: "A long subject line", text: "- **From**: bo@example.com\n\nbody",
				task: "E-mail message", author: "bo@example.com"}}},
		{name: "encoded words", file: "w.eml", format: eml,
			content: "From: =?ISO-8859-1?Q?Jos=E9_Silva?= <jose@example.com>\nTo: " + mime.BEncoding.Encode("UTF-8", "Zoë") + " <zoe@example.com>\n" +
				"Subject: =?windows-1252?Q?Caf=E9?= =?UTF-8?Q?_today?=\n\nbody\n",
			want: []piece{{path: "mail/undated/café_today.md", title: "Café today",
				text: "- **From**: José Silva <jose@example.com>\n- **To**: Zoë <zoe@example.com>\n\nbody",
				task: "E-mail message", author: "José Silva"}}},
		{name: "quoted-printable UTF-8", file: "q.eml", format: eml,
			content: "Subject: q\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: Quoted-Printable\n\nCaf=C3=A9 soft=\nbreak, a=3Db\n",
			want:    []piece{{path: "mail/undated/q.md", title: "q", text: "Café softbreak, a=b", task: "E-mail message"}}},
		{name: "base64 across lines", file: "b.eml", format: eml,
			content: "Subject: b\nContent-Transfer-Encoding: base64\n\nSGVsbG8s\nIHdvcmxk\r\nIQ==\n",
			want:    []piece{{path: "mail/undated/b.md", title: "b", text: "Hello, world!", task: "E-mail message"}}},
		{name: "Latin-1 body", file: "l.eml", format: eml,
			content: "Subject: l\nContent-Type: text/plain; charset=ISO-8859-1\nContent-Transfer-Encoding: base64\n\n" + b64("Caf\xe9 cr\xe8me") + "\n",
			want:    []piece{{path: "mail/undated/l.md", title: "l", text: "Café crème", task: "E-mail message"}}},
		{name: "HTML body reduced to text", file: "h.eml", format: eml,
			content: "Subject: h\nContent-Type: text/html\n\n<html><head><title>t</title></head><body><h1>Hi&nbsp;there</h1><script>x()</script><p>a &lt;b&gt; &amp; &quot;c&quot;</p><br>end</body></html>\n",
			want:    []piece{{path: "mail/undated/h.md", title: "h", text: "Hi there\na <b> & \"c\"\n\nend", task: "E-mail message"}}},
		{name: "an unreadable content type is plain text", file: "u.eml", format: eml,
			content: "Subject: u\nContent-Type: ;;;\n\n<p>kept</p>\n",
			want:    []piece{{path: "mail/undated/u.md", title: "u", text: "<p>kept</p>", task: "E-mail message"}}},
		// Of a multipart the plain text wins, nested alternatives included;
		// every other part is named as an attachment, never inlined.
		{name: "multipart", file: "m.eml", format: eml, content: multipart,
			want: []piece{{path: "mail/undated/report.md", title: "Report",
				text: "- **From**: a@example.com\n- **Attachments**: report.pdf, image/png, text/plain, notes.txt\n\nPlain body.",
				task: "E-mail message", author: "a@example.com"}}},
		{name: "multipart: HTML when there is no plain text", file: "m.eml", format: eml,
			content: "Subject: m\nContent-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/html\nContent-Transfer-Encoding: quoted-printable\n\n<div>caf=C3=A9</div>\n--b--\n",
			want:    []piece{{path: "mail/undated/m.md", title: "m", text: "café", task: "E-mail message"}}},
		{name: "multipart: a part without headers is plain text", file: "m.eml", format: eml,
			content: "Subject: m\nContent-Type: multipart/mixed; boundary=b\n\n--b\n\nno headers\n--b\nContent-Type: text/plain\n\nsecond plain part\n--b--\n",
			want:    []piece{{path: "mail/undated/m.md", title: "m", text: "no headers", task: "E-mail message"}}},
		{name: "Domain option", file: "d.eml", format: eml, opts: api.IngestOptions{Domain: "Inbox"},
			content: "Subject: d\nDate: Tue, 06 Jan 2026 08:00:00 +0000\n\nx\n",
			want: []piece{{path: "inbox/2026_01/d.md", title: "d", text: "- **Date**: Tue, 06 Jan 2026 08:00:00 +0000\n\nx",
				task: "E-mail message", stamp: "2026-01-06T08:00:00Z"}}},
	})
}

func TestHTMLText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"tags removed", "<b>bold</b> and <i>italic</i>", "bold and italic"},
		{"block ends break lines", "<p>one</p><div>two</div><li>three</li><h2>four</h2>five<br/>six<BR>seven", "one\ntwo\nthree\nfour\nfive\nsix\nseven"},
		{"script, style and head dropped", "<head><title>T</title></head><style>p{}</style>a<SCRIPT type=x>if (a<b) {}</SCRIPT>b", "ab"},
		{"entities", "&lt;&gt;&amp;&quot;&#39;&apos;&nbsp;x", "<>&\"'' x"},
		{"entities decoded once", "&amp;lt;", "&lt;"},
		{"blank runs collapse", "a<br><br><br><br>b", "a\n\nb"},
		{"lines trimmed", "  a  \n   b", "a\nb"},
		{"multi-line tag", "a<span\nclass=x>b</span>", "ab"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := htmlText(tc.in); got != tc.want {
				t.Errorf("htmlText(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestToUTF8(t *testing.T) {
	tests := []struct {
		in, charset, want string
		ok                bool
	}{
		{"héllo", "", "héllo", true},
		{"héllo", "UTF-8", "héllo", true},
		{"plain", "us-ascii", "plain", true},
		{"caf\xe9", "latin1", "café", true},
		{"cr\xe8me \xff", "windows-1252", "crème ÿ", true},
		// 0x80–0x9F are printable in Windows-1252, controls in Latin-1.
		{"\x93Hi\x94 \x80 \x85", "cp1252", "“Hi” € …", true},
		{"\x93", "iso-8859-1", "\u0093", true},
		{"caf\xe9", "utf8", "", false},
		{"x", "shift_jis", "", false},
	}
	for _, tc := range tests {
		got, err := toUTF8([]byte(tc.in), tc.charset)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("toUTF8(%q, %q) = %q, %v; want %q, ok %v", tc.in, tc.charset, got, err, tc.want, tc.ok)
		}
	}
}
