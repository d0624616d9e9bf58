package ingest

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// maxMIMEDepth bounds nested multiparts: a message nested deeper is
// malformed or hostile.
const maxMIMEDepth = 8

// splitEmail reads one RFC 5322 message (.eml) into one entry: the
// subject as title, the headers that say who and when (From, To, Cc, Date)
// then the text body. Of a multipart message the text/plain part is taken,
// else text/html with its tags stripped; attachments are named, not
// included. Quoted-printable and base64 bodies are decoded, and so are
// encoded-word headers; charsets other than UTF-8, US-ASCII and Latin-1
// refuse the message. The entry goes to mail/<yyyy_mm of Date> (or
// mail/undated), its author is the sender and its timestamp the Date.
func splitEmail(s *source) error {
	msg, err := mail.ReadMessage(strings.NewReader(s.text))
	if err != nil {
		return badf("malformed e-mail: %v", err)
	}
	dec := &mime.WordDecoder{CharsetReader: charsetReader}
	header := func(k string) string {
		v := msg.Header.Get(k)
		if d, err := dec.DecodeHeader(v); err == nil {
			v = d
		}
		return strings.Join(strings.Fields(v), " ")
	}
	body, attachments, err := mailBody(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body, 0)
	if err != nil {
		return badf("malformed e-mail: %v", err)
	}
	var b strings.Builder
	for _, k := range []string{"From", "To", "Cc", "Date"} {
		if v := header(k); v != "" {
			fmt.Fprintf(&b, "- **%s**: %s\n", k, v)
		}
	}
	if len(attachments) > 0 {
		fmt.Fprintf(&b, "- **Attachments**: %s\n", strings.Join(attachments, ", "))
	}
	b.WriteString("\n" + strings.TrimSpace(body))

	subject := header("Subject")
	if subject == "" {
		subject = "(no subject)"
	}
	topic, stampText := "undated", ""
	if d, err := msg.Header.Date(); err == nil {
		topic, stampText = d.UTC().Format("2006_01"), stamp(d)
	}
	author := header("From")
	if a, err := mail.ParseAddress(msg.Header.Get("From")); err == nil {
		author = a.Name
		if author == "" {
			author = a.Address
		}
		if d, err := dec.DecodeHeader(author); err == nil {
			author = d
		}
	}
	task := "E-mail message"
	if id := strings.Trim(msg.Header.Get("Message-Id"), "<> "); id != "" {
		task += " " + id
	}
	s.add(Piece{
		Folder: s.folder("mail", topic), Title: shortTitle(subject, "(no subject)"),
		Text: strings.TrimSpace(b.String()), Task: task, Author: author, Timestamp: stampText,
	})
	return nil
}

// mailBody returns the text of a message body and the names of its
// attachments.
func mailBody(contentType, encoding string, r io.Reader, depth int) (string, []string, error) {
	if depth > maxMIMEDepth {
		return "", nil, fmt.Errorf("multipart nested more than %d levels", maxMIMEDepth)
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if contentType == "" || err != nil {
		mt, params = "text/plain", map[string]string{}
	}
	if strings.HasPrefix(mt, "multipart/") {
		raw, err := io.ReadAll(r)
		if err != nil {
			return "", nil, err
		}
		return multipartBody(string(raw), params["boundary"], depth)
	}
	data, err := decodeTransfer(encoding, r)
	if err != nil {
		return "", nil, err
	}
	text, err := toUTF8(data, params["charset"])
	if err != nil {
		return "", nil, err
	}
	if mt == "text/html" {
		text = htmlText(text)
	}
	return text, nil, nil
}

type mimePart struct {
	header mail.Header
	body   string
}

// multipartBody splits a multipart body at its boundary and picks the text:
// text/plain first, then text/html, then the text of nested multiparts
// (multipart/alternative inside multipart/mixed). Other parts are listed as
// attachments by file name. (mime/multipart is not used: it pulls in
// crypto/rand, which the wasm module must not link; see docs/design.md.)
func multipartBody(raw, boundary string, depth int) (string, []string, error) {
	if boundary == "" {
		return "", nil, fmt.Errorf("multipart message without a boundary")
	}
	delim := "--" + boundary
	var parts []mimePart
	var cur []string
	started, closed := false, false
	endPart := func() {
		if !started {
			return
		}
		c := strings.Join(cur, "\n")
		m, err := mail.ReadMessage(strings.NewReader(c))
		if err != nil {
			// A part with no headers is text/plain.
			parts = append(parts, mimePart{header: mail.Header{}, body: strings.TrimPrefix(c, "\n")})
			return
		}
		b, _ := io.ReadAll(m.Body)
		parts = append(parts, mimePart{m.Header, string(b)})
	}
	for _, l := range strings.Split(raw, "\n") {
		switch strings.TrimRight(l, " \t\r") {
		case delim:
			endPart()
			started, cur = true, nil
			continue
		case delim + "--":
			endPart()
			closed = true
		}
		if closed {
			break
		}
		cur = append(cur, l)
	}
	if !closed {
		return "", nil, fmt.Errorf("multipart body not closed by its boundary %q", boundary)
	}
	var attachments []string
	pick := map[string]string{}
	var nested []string
	for _, p := range parts {
		ct := p.header.Get("Content-Type")
		mt, params, _ := mime.ParseMediaType(ct)
		if mt == "" {
			mt = "text/plain"
		}
		_, dparams, _ := mime.ParseMediaType(p.header.Get("Content-Disposition"))
		name := dparams["filename"]
		if name == "" {
			name = params["name"]
		}
		if name != "" || strings.HasPrefix(p.header.Get("Content-Disposition"), "attachment") {
			if name == "" {
				name = mt
			}
			attachments = append(attachments, name)
			continue
		}
		switch {
		case strings.HasPrefix(mt, "multipart/"):
			t, a, err := mailBody(ct, "", strings.NewReader(p.body), depth+1)
			if err != nil {
				return "", nil, err
			}
			attachments = append(attachments, a...)
			nested = append(nested, t)
		case mt == "text/plain" || mt == "text/html":
			if _, ok := pick[mt]; ok {
				continue
			}
			t, _, err := mailBody(ct, p.header.Get("Content-Transfer-Encoding"), strings.NewReader(p.body), depth+1)
			if err != nil {
				return "", nil, err
			}
			pick[mt] = t
		default:
			attachments = append(attachments, mt)
		}
	}
	for _, mt := range []string{"text/plain", "text/html"} {
		if t, ok := pick[mt]; ok {
			return t, attachments, nil
		}
	}
	return strings.Join(nested, "\n\n"), attachments, nil
}

func decodeTransfer(encoding string, r io.Reader) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		b, err := io.ReadAll(quotedprintable.NewReader(r))
		if err != nil {
			return nil, fmt.Errorf("quoted-printable body: %v", err)
		}
		return b, nil
	case "base64":
		raw, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		clean := strings.Map(func(r rune) rune {
			if r == '\r' || r == '\n' || r == ' ' || r == '\t' {
				return -1
			}
			return r
		}, string(raw))
		b, err := base64.StdEncoding.DecodeString(clean)
		if err != nil {
			return nil, fmt.Errorf("base64 body: %v", err)
		}
		return b, nil
	}
	return io.ReadAll(r)
}

// toUTF8 converts a decoded body to UTF-8 text.
func toUTF8(b []byte, charset string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		if !utf8.Valid(b) {
			return "", fmt.Errorf("body is not valid UTF-8 (charset %q)", charset)
		}
		return string(b), nil
	case "iso-8859-1", "latin1", "latin-1":
		return charmap.ISO8859_1.NewDecoder().String(string(b))
	case "windows-1252", "cp1252":
		// Not Latin-1: 0x80–0x9F are “ ” € and the like, not controls.
		return charmap.Windows1252.NewDecoder().String(string(b))
	}
	return "", fmt.Errorf("charset %q is not supported (UTF-8, US-ASCII, Latin-1 and Windows-1252 are)", charset)
}

func charsetReader(charset string, r io.Reader) (io.Reader, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	s, err := toUTF8(b, charset)
	if err != nil {
		return nil, err
	}
	return strings.NewReader(s), nil
}

var (
	htmlDrop  = &lazyRegexp{pattern: `(?is)<(script|style|head)\b.*?</(script|style|head)>`}
	htmlBreak = &lazyRegexp{pattern: `(?i)<(br|/p|/div|/li|/h[1-6]|/tr)\b[^>]*>`}
	htmlTag   = &lazyRegexp{pattern: `(?s)<[^>]*>`}
	blankRuns = &lazyRegexp{pattern: `\n[ \t]*\n(?:[ \t]*\n)+`}
)

// htmlText reduces an HTML body to its text: scripts and styles dropped,
// block ends as line breaks, tags removed, the common entities decoded.
func htmlText(h string) string {
	h = htmlDrop.get().ReplaceAllString(h, "")
	h = htmlBreak.get().ReplaceAllString(h, "\n")
	h = htmlTag.get().ReplaceAllString(h, "")
	h = strings.NewReplacer("&nbsp;", " ", "&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&apos;", "'").Replace(h)
	var out []string
	for _, l := range strings.Split(h, "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return strings.TrimSpace(blankRuns.get().ReplaceAllString(strings.Join(out, "\n"), "\n\n"))
}
