package ingest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestSplitGoTable(t *testing.T) {
	goSrc := `// Package demo is a demo.
package demo

import "fmt"

// Greet says hello.
func Greet(name string) string {
	return fmt.Sprint("hi ", name)
}

type (
	A int
	B string
)

var x, y = 1, 2

const (
	c1 = iota
	c2
	c3
	c4
	c5
)

func (p *Pair[K, V]) Key() K { return p.k }

func (l List[T]) Len() int { return 0 }
`
	fence := func(lines ...string) string { return "```go\n" + strings.Join(lines, "\n") + "\n```" }
	runSplit(t, []splitCase{
		{name: "declarations", file: "demo.go", format: api.FormatGo, content: goSrc,
			want: []piece{
				{path: "code/demo/package_demo.md", title: "package demo", text: fence("// Package demo is a demo.", "package demo"), task: "Go package demo (lines 1-2)"},
				{path: "code/demo/func_greet.md", title: "func Greet", text: fence("// Greet says hello.", "func Greet(name string) string {", `	return fmt.Sprint("hi ", name)`, "}"), task: "Go func Greet (lines 6-9)"},
				{path: "code/demo/type_a_b.md", title: "type A, B", text: fence("type (", "	A int", "	B string", ")"), task: "Go type A, B (lines 11-14)"},
				{path: "code/demo/var_x_y.md", title: "var x, y", text: fence("var x, y = 1, 2"), task: "Go var x, y (line 16)"},
				// More than four names are cut.
				{path: "code/demo/const_c1_c2_c3_c4.md", title: "const c1, c2, c3, c4, …", text: fence("const (", "	c1 = iota", "	c2", "	c3", "	c4", "	c5", ")"), task: "Go const c1, c2, c3, c4, … (lines 18-24)"},
				// Generic receivers are named by their type.
				{path: "code/demo/method_pair_key.md", title: "method Pair.Key", text: fence("func (p *Pair[K, V]) Key() K { return p.k }"), task: "Go method Pair.Key (line 26)"},
				{path: "code/demo/method_list_len.md", title: "method List.Len", text: fence("func (l List[T]) Len() int { return 0 }"), task: "Go method List.Len (line 28)"},
			}},
		{name: "package only, folders in the topic", file: "pkg/db/doc.go", format: api.FormatGo,
			content: "package db\n",
			want:    []piece{{path: "code/pkg_db_doc/package_db.md", title: "package db", text: fence("package db"), task: "Go package db (line 1)"}}},
		// A body holding a fence gets a longer one.
		{name: "fence inside the code", file: "f.go", format: api.FormatGo,
			content: "package f\n\n// Doc shows ```code```.\nfunc F() {}\n",
			want: []piece{
				{path: "code/f/package_f.md", title: "package f", text: fence("package f"), task: "Go package f (line 1)"},
				{path: "code/f/func_f.md", title: "func F", text: "````go\n// Doc shows ```code```.\nfunc F() {}\n````", task: "Go func F (lines 3-4)"},
			}},
		// A comment separated by a blank line is not the doc comment.
		{name: "detached comment left out", file: "d.go", format: api.FormatGo,
			content: "package d\n\n// stray\n\nfunc G() {}\n",
			want: []piece{
				{path: "code/d/package_d.md", title: "package d", text: fence("package d"), task: "Go package d (line 1)"},
				{path: "code/d/func_g.md", title: "func G", text: fence("func G() {}"), task: "Go func G (line 5)"},
			}},
		{name: "Domain option", file: "d.go", format: api.FormatGo, opts: api.IngestOptions{Domain: "src"},
			content: "package d\n",
			want:    []piece{{path: "src/d/package_d.md", title: "package d", text: fence("package d"), task: "Go package d (line 1)"}}},
	})
}

func TestSplitJSTable(t *testing.T) {
	js := api.FormatJS
	kinds := "export default class Foo {}\nexport abstract class Base {}\ndeclare module Mod {}\nconst enum Color { Red }\n" +
		"export interface Shape {}\nnamespace NS {}\nexport type ID = string;\nexport async function* gen() {}\n" +
		"let counter = 0;\nvar legacy = 1;\nexport default function () {}\n"
	var kindPieces []piece
	for i, k := range []struct{ title, slug string }{
		{"class Foo", "class_foo"}, {"abstract class Base", "abstract_class_base"}, {"module Mod", "module_mod"},
		{"const enum Color", "const_enum_color"}, {"interface Shape", "interface_shape"}, {"namespace NS", "namespace_ns"},
		{"type ID", "type_id"}, {"function* gen", "function_gen"}, {"let counter", "let_counter"},
		{"var legacy", "var_legacy"}, {"export default", "export_default"},
	} {
		line := strings.Split(kinds, "\n")[i]
		kindPieces = append(kindPieces, piece{path: "code/k/" + k.slug + ".md", title: k.title, text: "```ts\n" + line + "\n```", task: "TypeScript " + k.title + " (" + lines(i+1, i+1) + ")"})
	}
	runSplit(t, []splitCase{
		{name: "declaration kinds", file: "k.ts", format: js, content: kinds, want: kindPieces},
		{name: "comments attach unless a blank line follows", file: "c.js", format: js,
			content: "// about a\nconst a = 1;\n\n// loose note\n\n/*\n * header of f\n */\nfunction f() {\n  return '}';\n}\n",
			want: []piece{
				{path: "code/c/const_a.md", title: "const a", text: "```js\n// about a\nconst a = 1;\n```", task: "JavaScript const a (lines 1-2)"},
				{path: "code/c/function_f.md", title: "function f", text: "```js\n/*\n * header of f\n */\nfunction f() {\n  return '}';\n}\n```", task: "JavaScript function f (lines 6-11)"},
				{path: "code/c/module_code.md", title: "module code", text: "```js\n// loose note\n```", task: "JavaScript top-level statements (line 4)"},
			}},
		{name: "imports and re-exports dropped", file: "index.mjs", format: js,
			content: "import a from 'a';\nexport { b } from './b';\nexport * from './c';\nexport { d };\nexport type { E } from './e';\n'use strict';\n"},
		// Continuation lines (".then") do not start a statement; separate
		// statements are joined with a blank line.
		{name: "module code", file: "run.js", format: js,
			content: "console.log(1);\nfetch(u)\n.then(r => r);\n\nrun();\n",
			want:    []piece{{path: "code/run/module_code.md", title: "module code", text: "```js\nconsole.log(1);\nfetch(u)\n.then(r => r);\n\nrun();\n```", task: "JavaScript top-level statements (lines 1-5)"}}},
		{name: "template literals and block comments hide brackets", file: "t.ts", format: js,
			content: "const t = `\n}\n${ {a: 1}.a }\n`;\n/* { */\nconst u = 2;\n",
			want: []piece{
				{path: "code/t/const_t.md", title: "const t", text: "```ts\nconst t = `\n}\n${ {a: 1}.a }\n`;\n```", task: "TypeScript const t (lines 1-4)"},
				{path: "code/t/const_u.md", title: "const u", text: "```ts\n/* { */\nconst u = 2;\n```", task: "TypeScript const u (lines 5-6)"},
			}},
		// An unterminated quote ends with its line instead of swallowing the file.
		{name: "unterminated string", file: "s.js", format: js,
			content: "let s = 'oops\nlet t = 1;\n",
			want: []piece{
				{path: "code/s/let_s.md", title: "let s", text: "```js\nlet s = 'oops\n```", task: "JavaScript let s (line 1)"},
				{path: "code/s/let_t.md", title: "let t", text: "```js\nlet t = 1;\n```", task: "JavaScript let t (line 2)"},
			}},
		{name: "multi-line call", file: "m.js", format: js,
			content: "app.use(\n  cors(),\n)\nfunction h() {}\n",
			want: []piece{
				{path: "code/m/function_h.md", title: "function h", text: "```js\nfunction h() {}\n```", task: "JavaScript function h (line 4)"},
				{path: "code/m/module_code.md", title: "module code", text: "```js\napp.use(\n  cors(),\n)\n```", task: "JavaScript top-level statements (lines 1-3)"},
			}},
	})
}

// The language and the fence follow the extension.
func TestSplitJSLanguages(t *testing.T) {
	tests := []struct {
		file, lang, fence string
	}{
		{"a.js", "JavaScript", "js"},
		{"a.jsx", "JavaScript", "jsx"},
		{"a.mjs", "JavaScript", "mjs"},
		{"a.cjs", "JavaScript", "cjs"},
		{"a.ts", "TypeScript", "ts"},
		{"a.tsx", "TypeScript", "tsx"},
		{"a.mts", "TypeScript", "mts"},
		{"a.cts", "TypeScript", "cts"},
		{"A.TS", "TypeScript", "ts"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			ps, _, err := Split(api.SourceFile{Name: tc.file, Content: "let v = 1;\n"}, api.IngestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 1 || ps[0].Task != tc.lang+" let v (line 1)" || ps[0].Text != "```"+tc.fence+"\nlet v = 1;\n```" {
				t.Fatalf("got %d pieces, first %+v; want task %q, fence %q", len(ps), ps, tc.lang+" let v (line 1)", tc.fence)
			}
		})
	}
}

func TestSplitPythonTable(t *testing.T) {
	py := api.FormatPython
	src := "\"\"\"Module doc.\"\"\"\nimport os\nfrom x import y\n\nX = 1\n\n@deco\n@other(1)\nclass A:\n    '''doc\ndef not_here():\n    '''\n    def m(self):\n        pass\n\n\nasync def run():\n    await x\n\nif __name__ == \"__main__\":\n    run()\n"
	runSplit(t, []splitCase{
		{name: "definitions, decorators, module code", file: "m.py", format: py, content: src,
			want: []piece{
				// The decorators belong to the class; a "def" in a string does not start a symbol.
				{path: "code/m/class_a.md", title: "class A", text: "```python\n@deco\n@other(1)\nclass A:\n    '''doc\ndef not_here():\n    '''\n    def m(self):\n        pass\n```", task: "Python class A (lines 7-14)"},
				{path: "code/m/def_run.md", title: "def run", text: "```python\nasync def run():\n    await x\n```", task: "Python def run (lines 17-18)"},
				// Everything else but the imports, in order, separated where lines were skipped.
				{path: "code/m/module_code.md", title: "module code", text: "```python\n\"\"\"Module doc.\"\"\"\n\nX = 1\n\nif __name__ == \"__main__\":\n    run()\n```", task: "Python top-level statements (lines 1-21)"},
			}},
		{name: "backslash continuation, decorator across a blank line", file: "c.pyi", format: py,
			content: "TOTAL = 1 + \\\n2\n@d\n\ndef f(): pass\n",
			want: []piece{
				{path: "code/c/def_f.md", title: "def f", text: "```python\n@d\n\ndef f(): pass\n```", task: "Python def f (lines 3-5)"},
				{path: "code/c/module_code.md", title: "module code", text: "```python\nTOTAL = 1 + \\\n2\n```", task: "Python top-level statements (lines 1-2)"},
			}},
		{name: "a trailing comment joins the module code", file: "t.py", format: py,
			content: "x = 1\n# the end\n",
			want:    []piece{{path: "code/t/module_code.md", title: "module code", text: "```python\nx = 1\n# the end\n```", task: "Python top-level statements (lines 1-2)"}}},
		{name: "brackets over several lines", file: "b.py", format: py,
			content: "NAMES = [\n'a',\n'b',\n]\ndef g(): pass\n",
			want: []piece{
				{path: "code/b/def_g.md", title: "def g", text: "```python\ndef g(): pass\n```", task: "Python def g (line 5)"},
				{path: "code/b/module_code.md", title: "module code", text: "```python\nNAMES = [\n'a',\n'b',\n]\n```", task: "Python top-level statements (lines 1-4)"},
			}},
		{name: "imports only", file: "i.py", format: py, content: "import os\nfrom a import (\n  b,\n)\n"},
		{name: "empty", file: "e.py", format: py, content: ""},
	})
}

func TestTopLevelStarts(t *testing.T) {
	tests := []struct {
		name string
		py   bool
		src  string
		want []int
	}{
		{"js: closing brackets and operators continue", false, "a(\n)\n}\n]\n.x\n+y\n? z\n: w\n|| v\nb", []int{0, 9}},
		{"js: a line comment hides a bracket", false, "f() // {\ng()", []int{0, 1}},
		{"js: a block comment spans lines", false, "/* a\nb\n*/ c\nd", []int{0, 3}},
		{"js: escaped quote", false, "s = 'it\\'s {'\nt", []int{0, 1}},
		{"js: template nesting", false, "t = `${`${ {} }`}`\nu", []int{0, 1}},
		{"py: triple quotes span lines", true, "s = \"\"\"\nx\n\"\"\"\ny", []int{0, 3}},
		{"py: hash hides a bracket", true, "a = 1  # (\nb", []int{0, 1}},
		{"py: comment inside a block", true, "def f():\n    a\n# note\n    b\nc", []int{0, 4}},
		{"py: comment before code", true, "# note\n\nc", []int{0, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := jsLexer()
			if tc.py {
				x = pyLexer()
			}
			if got := topLevelStarts(strings.Split(tc.src, "\n"), x); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("topLevelStarts(%q) = %v, want %v", tc.src, got, tc.want)
			}
		})
	}
}
