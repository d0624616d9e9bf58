package ingest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// codeItem is one top-level symbol of a source file: lines from..to
// (0-based, inclusive), its leading comment included.
type codeItem struct {
	kind, name string // "func", "Open"; kind "module" for loose statements
	from, to   int
}

// addCode turns the items of a source file into entries under
// code/<file name>: each titled "<kind> <name>", its text the symbol's code
// in a fenced block, its task the language, symbol and lines. Statements
// outside any symbol (other than imports) are gathered into one "module"
// entry so that nothing the file says is lost.
func (s *source) addCode(lang, fence string, items []codeItem, loose []int) {
	all := strings.Split(s.text, "\n")
	folder := s.folder("code", s.topic())
	block := func(ls []string) string {
		body := strings.Trim(strings.Join(ls, "\n"), "\n")
		f := "```"
		for strings.Contains(body, f) {
			f += "`"
		}
		return f + fence + "\n" + body + "\n" + f
	}
	for _, it := range items {
		title := it.kind + " " + it.name
		s.add(Piece{
			Folder: folder, Title: title, Text: block(all[it.from : it.to+1]),
			Task: fmt.Sprintf("%s %s (%s)", lang, title, lines(it.from+1, it.to+1)),
		})
	}
	if len(loose) == 0 {
		return
	}
	var ls []string
	prev := -2
	for _, i := range loose {
		if prev >= 0 && i != prev+1 {
			ls = append(ls, "")
		}
		ls = append(ls, all[i])
		prev = i
	}
	if strings.TrimSpace(strings.Join(ls, "")) == "" {
		return
	}
	s.add(Piece{
		Folder: folder, Title: "module code", Text: block(ls),
		Task: fmt.Sprintf("%s top-level statements (%s)", lang, lines(loose[0]+1, loose[len(loose)-1]+1)),
	})
}

// ---- Go ------------------------------------------------------------

// splitGo parses a Go file with go/parser: the package clause with its doc
// comment, then each function, method, type, and const or var declaration
// (a parenthesized group is one entry), doc comments included. Imports are
// left out. A file that does not parse is refused.
func splitGo(s *source) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, s.name, s.text, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return badf("malformed Go: %v", err)
	}
	line := func(p token.Pos) int { return fset.Position(p).Line - 1 }
	var items []codeItem
	pkgFrom := line(f.Package)
	if f.Doc != nil {
		pkgFrom = line(f.Doc.Pos())
	}
	items = append(items, codeItem{"package", f.Name.Name, pkgFrom, line(f.Name.End())})
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			from := line(d.Pos())
			if d.Doc != nil {
				from = line(d.Doc.Pos())
			}
			kind, name := "func", d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				kind, name = "method", recvName(d.Recv.List[0].Type)+"."+name
			}
			items = append(items, codeItem{kind, name, from, line(d.End())})
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			from := line(d.Pos())
			if d.Doc != nil {
				from = line(d.Doc.Pos())
			}
			var names []string
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					names = append(names, sp.Name.Name)
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						names = append(names, n.Name)
					}
				}
			}
			name := strings.Join(names, ", ")
			if len(names) > 4 {
				name = strings.Join(names[:4], ", ") + ", …"
			}
			items = append(items, codeItem{d.Tok.String(), name, from, line(d.End())})
		}
	}
	s.addCode("Go", "go", items, nil)
	return nil
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// ---- JavaScript and TypeScript --------------------------------------

// jsDecl recognizes a top-level declaration line: functions (async,
// generators), classes (abstract), interfaces, type aliases, enums,
// namespaces and const/let/var, each optionally exported (default) or
// declared.
var jsDecl = &lazyRegexp{pattern: `^(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:async\s+)?(function\s*\*?|abstract\s+class|class|interface|type|enum|const\s+enum|const|let|var|namespace|module)\s+([A-Za-z_$][\w$]*)`}

// jsOther recognizes exports that are not declarations of a name.
var (
	jsDefault = &lazyRegexp{pattern: `^export\s+default\b`}
	jsCJS     = &lazyRegexp{pattern: `^(?:module\.)?exports(?:\.([A-Za-z_$][\w$]*))?\s*=`}
	jsImport  = &lazyRegexp{pattern: `^(?:import\b|export\s+(?:\*|\{[^}]*\})\s*from\b|export\s*\{|export\s+type\s*\{|['"]use strict['"])`}
)

// splitJS splits JavaScript or TypeScript by a line scanner, not a parser:
// it tracks strings, template literals (with ${…} nesting), comments and
// bracket depth, and starts an item at each line that begins at column 0
// at depth 0. Declarations (see jsDecl, plus export default and CommonJS
// exports) become entries with the comments right above them; imports and
// re-exports are dropped; any other top-level statement joins the "module
// code" entry. Known limit: a regular-expression literal holding an
// unbalanced bracket ("/[{]/") can throw the depth off until the file
// ends; the file is then still ingested, with coarser pieces.
func splitJS(s *source) error {
	all := strings.Split(s.text, "\n")
	starts := topLevelStarts(all, jsLexer())
	items, loose := classify(all, starts, func(l string) (string, string, bool) {
		if m := jsDecl.get().FindStringSubmatch(l); m != nil {
			kind := strings.Join(strings.Fields(strings.ReplaceAll(m[1], "*", "* ")), " ")
			return kind, m[2], true
		}
		if jsDefault.get().MatchString(l) {
			return "export", "default", true
		}
		if m := jsCJS.get().FindStringSubmatch(l); m != nil {
			if m[1] != "" {
				return "exports", m[1], true
			}
			return "module.exports", "", true
		}
		return "", "", false
	}, func(l string) bool { return jsImport.get().MatchString(l) }, "//", "/*")
	lang := "JavaScript"
	if ext := strings.ToLower(pathExt(s.name)); strings.Contains(ext, "ts") {
		lang = "TypeScript"
	}
	s.addCode(lang, strings.TrimPrefix(strings.ToLower(pathExt(s.name)), "."), items, loose)
	return nil
}

// ---- Python ----------------------------------------------------------

var (
	pyDecl   = &lazyRegexp{pattern: `^(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)`}
	pyImport = &lazyRegexp{pattern: `^(?:import|from)\s`}
)

// splitPython splits Python by a line scanner: an item starts at each line
// at column 0 outside brackets, strings (triple-quoted included) and
// backslash continuations. def, async def and class become entries with
// their decorators and the comments right above them; imports are dropped;
// other statements (constants, the module docstring, a __main__ block)
// join the "module code" entry.
func splitPython(s *source) error {
	all := strings.Split(s.text, "\n")
	starts := topLevelStarts(all, pyLexer())
	items, loose := classify(all, starts, func(l string) (string, string, bool) {
		if m := pyDecl.get().FindStringSubmatch(l); m != nil {
			return m[1], m[2], true
		}
		return "", "", false
	}, func(l string) bool { return pyImport.get().MatchString(l) }, "#", "@")
	s.addCode("Python", "python", items, loose)
	return nil
}

// classify groups the lines from each top-level start to the next into
// items. Comment lines (and, for Python, decorators: prefixes) right above
// an item belong to it; an item whose first code line is a declaration
// becomes a codeItem, an import is dropped, anything else is loose.
func classify(all []string, starts []int, decl func(string) (string, string, bool), isImport func(string) bool, prefixes ...string) ([]codeItem, []int) {
	var items []codeItem
	var loose []int
	attached := -1 // first line of comments/decorators waiting for an item
	for k, st := range starts {
		end := len(all) - 1
		if k+1 < len(starts) {
			end = starts[k+1] - 1
		}
		for end > st && strings.TrimSpace(all[end]) == "" {
			end--
		}
		line := all[st]
		prefix := false
		for _, p := range prefixes {
			if strings.HasPrefix(line, p) {
				prefix = true
			}
		}
		if prefix {
			if attached < 0 {
				attached = st
			}
			// A blank line after a comment detaches it from what follows.
			if end+1 < len(all) && k+1 < len(starts) && starts[k+1] > end+1 && !strings.HasPrefix(line, "@") {
				for i := attached; i <= end; i++ {
					loose = append(loose, i)
				}
				attached = -1
			}
			continue
		}
		from := st
		if attached >= 0 {
			from, attached = attached, -1
		}
		if kind, name, ok := decl(line); ok {
			items = append(items, codeItem{kind, name, from, end})
			continue
		}
		if isImport(line) {
			continue
		}
		for i := from; i <= end; i++ {
			loose = append(loose, i)
		}
	}
	if attached >= 0 {
		for i := attached; i < len(all); i++ {
			if strings.TrimSpace(all[i]) != "" {
				loose = append(loose, i)
			}
		}
	}
	return items, loose
}

// lexer tracks what a scanner is inside of across lines.
type lexer struct {
	depth int
	str   string // the open string's delimiter ("'", `"`, "`", `"""`, "'''")
	block bool   // inside a /* */ comment
	tmpl  []int  // JS: depths at which ${ opened inside template literals
	js    bool
	cont  bool // Python: the last line ended with a backslash
}

func jsLexer() *lexer { return &lexer{js: true} }
func pyLexer() *lexer { return &lexer{} }

// topLevel reports whether a line starting now is at the top level.
func (x *lexer) topLevel() bool {
	return x.depth == 0 && x.str == "" && !x.block && !x.cont
}

// scan advances the lexer over one line.
func (x *lexer) scan(l string) {
	x.cont = false
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case x.block:
			if c == '*' && i+1 < len(l) && l[i+1] == '/' {
				x.block = false
				i++
			}
		case x.str != "":
			if c == '\\' {
				i++
				continue
			}
			if x.str == "`" && c == '$' && i+1 < len(l) && l[i+1] == '{' {
				x.tmpl = append(x.tmpl, x.depth)
				x.depth++
				x.str = ""
				i++
				continue
			}
			if strings.HasPrefix(l[i:], x.str) {
				i += len(x.str) - 1
				x.str = ""
			}
		case x.js && c == '/' && i+1 < len(l) && l[i+1] == '/':
			return
		case x.js && c == '/' && i+1 < len(l) && l[i+1] == '*':
			x.block = true
			i++
		case !x.js && c == '#':
			return
		case c == '\'' || c == '"' || (x.js && c == '`'):
			q := string(c)
			if !x.js && strings.HasPrefix(l[i:], strings.Repeat(q, 3)) {
				q = strings.Repeat(q, 3)
				i += 2
			}
			x.str = q
		case c == '{' || c == '(' || c == '[':
			x.depth++
		case c == '}' || c == ')' || c == ']':
			if x.depth > 0 {
				x.depth--
			}
			if c == '}' && len(x.tmpl) > 0 && x.tmpl[len(x.tmpl)-1] == x.depth {
				x.tmpl = x.tmpl[:len(x.tmpl)-1]
				x.str = "`"
			}
		}
	}
	// A line ends a single-quoted string: unterminated ones are errors the
	// scanner forgives rather than carry to the end of the file.
	if x.str == "'" || x.str == `"` {
		x.str = ""
	}
	if !x.js && x.str == "" && strings.HasSuffix(strings.TrimRight(l, " \t"), `\`) {
		x.cont = true
	}
}

// topLevelStarts returns the lines that begin a top-level item: at depth
// 0, outside strings and comments, starting at column 0 with something
// other than a closing bracket or an operator that continues the previous
// statement. In Python a comment at column 0 inside an indented block
// belongs to the block: it starts an item only when the next code line is
// at column 0 too.
func topLevelStarts(all []string, x *lexer) []int {
	var out []int
	for i, l := range all {
		start := x.topLevel() && l != "" && (!strings.ContainsRune(" \t}])>.,?:|&+-=*", rune(l[0])) || strings.HasPrefix(l, "/*"))
		if start && !x.js && l[0] == '#' {
			start = nextCodeAtColumn0(all[i+1:])
		}
		if start {
			out = append(out, i)
		}
		x.scan(l)
	}
	return out
}

// nextCodeAtColumn0 reports whether the first line of rest that is neither
// blank nor a comment starts at column 0 (true at the end of the file).
func nextCodeAtColumn0(rest []string) bool {
	for _, l := range rest {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		return l[0] != ' ' && l[0] != '\t'
	}
	return true
}
