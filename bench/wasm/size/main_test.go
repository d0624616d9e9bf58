package main

import "testing"

func TestPackageOfName(t *testing.T) {
	pkgs := newPackages([]string{
		"github.com/blugelabs/bluge/index", "github.com/blugelabs/bluge/index/mergeplan",
		"gopkg.in/yaml.v2", "slices", "regexp", "regexp/syntax", "runtime",
	})
	for name, want := range map[string]string{
		// The linker's names, with every byte but letters, digits, '_' and '.' written '_'.
		"github.com_blugelabs_bluge_index.__Writer_.Batch": "github.com/blugelabs/bluge/index",
		"github.com_blugelabs_bluge_index_mergeplan.plan":  "github.com/blugelabs/bluge/index/mergeplan",
		"gopkg.in_yaml_2ev2.yaml_parser_scan_flow_scalar":  "gopkg.in/yaml.v2",
		"slices.SortFunc_go.shape.string_":                 "slices",
		"regexp_syntax.__compiler_.compile":                "regexp/syntax",
		"regexp.makeOnePass.func1":                         "regexp",
		"runtime.mallocgc":                                 "runtime",
		"type_.eq.github.com_blugelabs_bluge_index.Config": "(type and linker functions)",
		"github.com_example_unknown.F":                     "(unattributed) github.com_example_unknown.F",
	} {
		if got := pkgs.of(name); got != want {
			t.Errorf("of(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestGroupOf(t *testing.T) {
	for pkg, want := range map[string]string{
		"github.com/arbormem/arbor/core/internal/search": "Arbor (core/..., wasm)",
		"regexp":           "regexp",
		"regexp/syntax":    "regexp",
		"runtime":          "Go runtime (runtime, internal/runtime, sync, ...)",
		"sync/atomic":      "Go runtime (runtime, internal/runtime, sync, ...)",
		"net/mail":         "net/mail, mime, net, net/netip, net/textproto",
		"encoding/json":    "encoding/* (json, binary, csv, base64, ...)",
		"strconv":          "fmt, strconv, strings, bytes, unicode",
		"unicode/utf8":     "fmt, strconv, strings, bytes, unicode",
		"internal/poll":    "rest of the standard library",
		"gopkg.in/yaml.v2": "gopkg.in/yaml.v2",
	} {
		if got := groupOf(pkg); got != want {
			t.Errorf("groupOf(%q) = %q, want %q", pkg, got, want)
		}
	}
}
