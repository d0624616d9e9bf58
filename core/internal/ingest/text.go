package ingest

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Plain text is grouped into entries of whole paragraphs: a group closes
// once it holds textGroupBytes, so that short paragraphs (a list of
// one-liners, a dialogue) make entries large enough to stand alone while a
// long paragraph is an entry of its own.
const textGroupBytes = 1200

// splitText cuts plain text at blank lines and groups consecutive
// paragraphs up to textGroupBytes; a paragraph over partBytes is cut at
// its lines into entries of its own. Each group is titled by its first
// line and records its line range.
func splitText(s *source) error {
	all := strings.Split(s.text, "\n")
	var group []string
	from, size := 0, 0
	flush := func(to int) {
		if len(group) == 0 {
			return
		}
		text := strings.Join(group, "\n\n")
		s.add(Piece{
			Folder: s.folder("documents", s.topic()),
			Title:  shortTitle(text, "Text"),
			Text:   text,
			Task:   fmt.Sprintf("Text, %s", lines(from, to)),
		})
		group, size = nil, 0
	}
	var para []string
	paraFrom, last := 0, 0
	endPara := func() {
		if len(para) == 0 {
			return
		}
		p := strings.Join(para, "\n")
		if len(p) > partBytes {
			// A paragraph too long for one entry: entries of its lines.
			flush(last)
			for _, pt := range cutText(p, partBytes) {
				s.add(Piece{
					Folder: s.folder("documents", s.topic()),
					Title:  shortTitle(pt.text, "Text"),
					Text:   pt.text,
					Task:   fmt.Sprintf("Text, %s", lines(paraFrom+pt.first, paraFrom+pt.last)),
				})
			}
			last, para = paraFrom+len(para)-1, nil
			return
		}
		if size > 0 && size+len(p) > textGroupBytes {
			flush(last)
		}
		if len(group) == 0 {
			from = paraFrom
		}
		group = append(group, p)
		size += len(p)
		last = paraFrom + len(para) - 1
		para = nil
	}
	for i, l := range all {
		if strings.TrimSpace(l) == "" {
			endPara()
			continue
		}
		if len(para) == 0 {
			paraFrom = i + 1
		}
		para = append(para, strings.TrimRight(l, " \t"))
	}
	endPara()
	flush(last)
	return nil
}

// lazyRegexp is a pattern compiled on first use: the engine module runs
// its package initializers at every start of an instance, and only
// ingestion uses these. (A sync.OnceValue per pattern would cost the module
// about 1.5 KB of code each, its closures instantiated at every call site.)
type lazyRegexp struct {
	pattern string
	once    sync.Once
	re      *regexp.Regexp
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.pattern) })
	return l.re
}
