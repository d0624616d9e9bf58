package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// printJSON prints a raw JSON result, indented.
func printJSON(w io.Writer, raw json.RawMessage) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return fmt.Errorf("format JSON: %w", err)
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// oneLine collapses whitespace and cuts s to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}

// ms formats a duration in milliseconds the way every command shows it.
func ms(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

// palette colors human output: on a terminal, unless NO_COLOR is set or
// TERM is dumb (--color overrides both); never when piped.
type palette struct{ on bool }

func (p palette) wrap(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p palette) bold(s string) string   { return p.wrap("1", s) }
func (p palette) dim(s string) string    { return p.wrap("2", s) }
func (p palette) red(s string) string    { return p.wrap("31", s) }
func (p palette) green(s string) string  { return p.wrap("32", s) }
func (p palette) yellow(s string) string { return p.wrap("33", s) }
func (p palette) cyan(s string) string   { return p.wrap("36", s) }

// colorFor decides whether output to w is colored, for --color WHEN.
func colorFor(when string, w io.Writer) (bool, error) {
	switch when {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && isTerminal(w), nil
	}
	return false, usageErr(fmt.Sprintf("--color %q: want auto, always or never", when))
}

// isTerminal reports whether w is a character device (a terminal), without
// a dependency on x/term.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// table prints rows as aligned columns; right-aligned columns are numbers.
type table struct {
	rows  [][]string
	right map[int]bool
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write prints the rows, each prefixed by indent; style, when not nil,
// colors a cell after it was padded (so escapes do not break alignment).
func (t *table) write(w io.Writer, indent string, style func(row, col int, s string) string) {
	var width []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for ri, r := range t.rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			cell := c + pad
			if t.right[i] {
				cell = pad + c
			}
			if i == len(r)-1 && !t.right[i] {
				cell = c
			}
			if style != nil {
				cell = style(ri, i, cell)
			}
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(cell)
		}
		fmt.Fprintln(w, b.String())
	}
}

// bytesHuman formats a size in bytes as people read it.
func bytesHuman(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}
