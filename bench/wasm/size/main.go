// Command size reports what a Go wasm module is made of: the bytes of its
// sections, its data segments, and its code summed by Go package. Go's
// linker writes no symbol table for wasm that `go tool nm` can read, so the
// code is attributed through the module's name section, which names every
// function of the code section: build the module without `-s -w` to keep it
// (the shipped module is stripped), and list the build's packages for it.
// The data section has no symbols.
//
//	./build.sh wasm   # leaves the vendored, patched tree in .build/wasm
//	(cd .build/wasm && GOOS=wasip1 GOARCH=wasm GOFLAGS=-mod=vendor go build -trimpath -buildmode=c-shared -o /tmp/arbor-names.wasm ./wasm)
//	(cd .build/wasm && GOOS=wasip1 GOARCH=wasm GOFLAGS=-mod=vendor go list -deps ./wasm) >/tmp/arbor-pkgs.txt
//	go run ./bench/wasm/size -pkgs /tmp/arbor-pkgs.txt [-group] [-top 40] [-funcs 30] /tmp/arbor-names.wasm
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/arbormem/arbor/internal/wasmbin"
)

func main() {
	top := flag.Int("top", 40, "packages to list")
	group := flag.Bool("group", false, "sum packages into the groups of bench/wasm/REPORT.md")
	funcs := flag.Int("funcs", 0, "also list the N largest functions")
	pkgList := flag.String("pkgs", "", "file listing the build's packages, one a line (go list -deps)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: size -pkgs packages.txt [-top N] [-group] [-funcs N] module.wasm")
		os.Exit(2)
	}
	bin, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	m, err := parse(bin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "size: %s: %v\n", flag.Arg(0), err)
		os.Exit(1)
	}
	var paths []string
	if *pkgList != "" {
		b, err := os.ReadFile(*pkgList)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		paths = strings.Fields(string(b))
	}
	report(os.Stdout, bin, m, newPackages(paths), *top, *group, *funcs)
}

// module is what size reads of a wasm binary.
type module struct {
	sections     []wasmbin.Section
	importedFns  int
	bodies       []int          // size of each function body, in code-section order
	names        map[int]string // function index (imports first) to name
	dataSegments int
	dataPayload  int
}

var sectionNames = map[byte]string{0: "custom", 1: "type", 2: "import", 3: "function", 4: "table",
	5: "memory", 6: "global", 7: "export", 8: "start", 9: "element", 10: "code", 11: "data", 12: "datacount"}

func parse(bin []byte) (*module, error) {
	sections, err := wasmbin.Sections(bin)
	if err != nil {
		return nil, err
	}
	m := &module{sections: sections, names: map[int]string{}}
	for _, s := range sections {
		switch {
		case s.ID == wasmbin.SectionImport:
			if m.importedFns, err = wasmbin.ImportedFunctions(s.Body); err != nil {
				return nil, fmt.Errorf("import section: %w", err)
			}
		case s.ID == wasmbin.SectionCode:
			if m.bodies, err = wasmbin.CodeSizes(s.Body); err != nil {
				return nil, fmt.Errorf("code section: %w", err)
			}
		case s.ID == wasmbin.SectionData:
			segs, err := wasmbin.DataSegments(s.Body)
			if err != nil {
				return nil, fmt.Errorf("data section: %w", err)
			}
			m.dataSegments = len(segs)
			for _, seg := range segs {
				m.dataPayload += len(seg.Data)
			}
		case s.ID == wasmbin.SectionCustom && s.Name == "name":
			if m.names, err = wasmbin.FunctionNames(s.Body); err != nil {
				return nil, fmt.Errorf("name section: %w", err)
			}
		}
	}
	return m, nil
}

// packages maps a function name of the name section to its Go package. The
// linker writes a symbol's name with every byte other than a letter, digit,
// '_' or '.' replaced by '_' (so "github.com/blugelabs/bluge/index.(*Writer).Batch"
// is "github.com_blugelabs_bluge_index.__Writer_.Batch"): the package is
// recovered as the longest package of the build whose name, written the same
// way, is followed by a '.'.
type packages struct {
	byMangled map[string]string
}

var nameRegexp = regexp.MustCompile(`[^\w.]`)

func newPackages(paths []string) *packages {
	p := &packages{byMangled: map[string]string{}}
	for _, path := range paths {
		p.byMangled[nameRegexp.ReplaceAllString(pathToPrefix(path), "_")] = path
	}
	return p
}

// pathToPrefix is cmd/internal/objabi.PathToPrefix: how the linker writes an
// import path in symbol names.
func pathToPrefix(s string) string {
	slash := strings.LastIndex(s, "/")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || (c == '.' && i > slash) || c == '%' || c == '"' || c >= 0x7F {
			fmt.Fprintf(&b, "%%%02x", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func (p *packages) of(sym string) string {
	if strings.HasPrefix(sym, "type_.") || strings.HasPrefix(sym, "go_.") {
		return "(type and linker functions)"
	}
	best := ""
	for i := 0; i < len(sym); i++ {
		if sym[i] != '.' {
			continue
		}
		if path, ok := p.byMangled[sym[:i]]; ok && len(path) > len(best) {
			best = path
		}
	}
	if best == "" {
		return "(unattributed) " + sym
	}
	return best
}

// groups sums packages as bench/wasm/REPORT.md does; the first prefix that
// matches wins.
var groups = []struct{ name, prefixes string }{
	{"Arbor (core/..., wasm)", "github.com/arbormem/"},
	{"bluge (bluge/..., ice)", "github.com/blugelabs/"},
	{"RoaringBitmap, vellum, bleve segment, snowball, snappy", "github.com/RoaringBitmap/ github.com/blevesearch/ github.com/golang/snappy github.com/bits-and-blooms github.com/kljensen/ github.com/axiomhq/ github.com/caio/ github.com/dgryski/ github.com/mschoch/"},
	{"dlclark/regexp2", "github.com/dlclark/"},
	{"gopkg.in/yaml.v2", "gopkg.in/yaml.v2"},
	{"gopkg.in/yaml.v3", "gopkg.in/yaml.v3"},
	{"adrg/frontmatter", "github.com/adrg/"},
	{"golang.org/x/text", "golang.org/x/text"},
	{"sergi/go-diff", "github.com/sergi/"},
	{"other modules", "github.com/ golang.org/ gopkg.in/"},
	{"Go runtime (runtime, internal/runtime, sync, ...)", "runtime internal/runtime/ internal/abi internal/bytealg internal/chacha8rand internal/godebug internal/sync sync unique weak internal/cpu internal/goarch internal/stringslite internal/race internal/synctest internal/trace"},
	{"regexp", "regexp"},
	{"encoding/* (json, binary, csv, base64, ...)", "encoding/"},
	{"go/* (ast, parser, scanner, ...)", "go/"},
	{"reflect, type equality functions", "reflect internal/reflectlite (type and linker functions)"},
	{"slices, maps, sort, iter", "slices maps sort iter"},
	{"net/mail, mime, net, net/netip, net/textproto", "net mime"},
	{"crypto/*", "crypto"},
	{"fmt, strconv, strings, bytes, unicode", "fmt strconv strings bytes unicode"},
	{"rest of the standard library", ""},
}

func groupOf(pkg string) string {
	for _, g := range groups {
		if g.prefixes == "" {
			return g.name
		}
		for _, p := range strings.Fields(g.prefixes) {
			if pkg == p || strings.HasPrefix(pkg, p) && (strings.HasSuffix(p, "/") || strings.HasPrefix(pkg[len(p):], "/") || strings.HasPrefix(pkg[len(p):], ".")) {
				return g.name
			}
		}
	}
	return groups[len(groups)-1].name
}

func report(w io.Writer, bin []byte, m *module, pkgs *packages, top int, group bool, funcs int) {
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(bin)
	zw.Close()
	fmt.Fprintf(w, "module: %d bytes, gzip -9 %d bytes\n\nsection\tbytes\n", len(bin), gz.Len())
	for _, s := range m.sections {
		name := sectionNames[s.ID]
		if s.ID == wasmbin.SectionCustom {
			name = "custom " + s.Name
		}
		fmt.Fprintf(w, "%s\t%d\n", name, s.Size())
	}
	fmt.Fprintf(w, "data: %d segments, %d bytes of payload\n\n", m.dataSegments, m.dataPayload)
	if len(m.names) == 0 {
		fmt.Fprintln(w, "no name section: build without -s -w to attribute the code to packages")
		return
	}
	byPkg := map[string]int{}
	total := 0
	type fn struct {
		name string
		size int
	}
	var fns []fn
	for i, sz := range m.bodies {
		name := m.names[m.importedFns+i]
		if name == "" {
			name = "(unnamed)"
		}
		byPkg[pkgs.of(name)] += sz
		fns = append(fns, fn{name, sz})
		total += sz
	}
	keys := byPkg
	if group {
		keys = map[string]int{}
		for p, sz := range byPkg {
			keys[groupOf(p)] += sz
		}
	}
	type row struct {
		name string
		size int
	}
	var rows []row
	for k, v := range keys {
		rows = append(rows, row{k, v})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].size != rows[j].size {
			return rows[i].size > rows[j].size
		}
		return rows[i].name < rows[j].name
	})
	fmt.Fprintf(w, "code: %d function bodies, %d bytes\n\nKB\t%%\tpackage\n", len(m.bodies), total)
	for i, r := range rows {
		if !group && i == top {
			break
		}
		fmt.Fprintf(w, "%.0f\t%.1f\t%s\n", float64(r.size)/1000, 100*float64(r.size)/float64(total), r.name)
	}
	if funcs > 0 {
		sort.Slice(fns, func(i, j int) bool { return fns[i].size > fns[j].size })
		fmt.Fprintf(w, "\nlargest functions\nbytes\tfunction\n")
		for i := 0; i < funcs && i < len(fns); i++ {
			fmt.Fprintf(w, "%d\t%s\n", fns[i].size, fns[i].name)
		}
	}
}
