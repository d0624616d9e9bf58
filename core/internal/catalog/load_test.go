package catalog

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/host"
)

func TestDocProbes(t *testing.T) {
	for _, p := range docProbes {
		d, err := probeDoc(p.path, p.text)
		if err != nil {
			t.Fatalf("probe %s: %v", p.path, err)
		}
		if d.Path != p.path || d.Title == "" || d.Content == "" {
			t.Errorf("probe %s: %#v", p.path, d)
		}
	}
	// The first probe exercises the transcript split and every section.
	d, _ := probeDoc(docProbes[0].path, docProbes[0].text)
	if !strings.Contains(d.Aside, "three times") || strings.Contains(d.Content, "three times") {
		t.Errorf("probe transcript: content %q, aside %q", d.Content, d.Aside)
	}
	for _, s := range []string{"Retry at 24 h", "dunning Emails the emails", "retry(3)", "plain fact", "価値観"} {
		if !strings.Contains(d.Content, s) {
			t.Errorf("probe content lacks %q: %q", s, d.Content)
		}
	}
}

// A loaded catalog keeps a bounded number of entries parsed, and still
// gives every entry, read again from its file when it is not.
func TestParsedEntriesAreBounded(t *testing.T) {
	mem := host.NewMemFS()
	const n = maxParsed + 300
	for i := range n {
		p := fmt.Sprintf("notes/log/e%04d.md", i)
		if err := mem.WriteFile(p, []byte(fmt.Sprintf("---\ntitle: Entry %d\n---\n\nBody %d.\n", i, i))); err != nil {
			t.Fatal(err)
		}
	}
	cat, srcs, warnings, err := Load(mem, 1<<20)
	if err != nil || len(warnings) != 0 || len(srcs) != n {
		t.Fatalf("load: %d sources, %v, %v", len(srcs), warnings, err)
	}
	if len(cat.entries) > maxParsed {
		t.Fatalf("%d entries kept parsed, over %d", len(cat.entries), maxParsed)
	}
	for i := range n {
		p := fmt.Sprintf("notes/log/e%04d.md", i)
		en, ok := cat.Get(p)
		if !ok || en.Title != fmt.Sprintf("Entry %d", i) {
			t.Fatalf("Get(%s) = %+v, %v", p, en, ok)
		}
	}
	if len(cat.entries) > maxParsed || len(cat.parsed) > 2*maxParsed {
		t.Fatalf("after reading all: %d parsed, %d in order", len(cat.entries), len(cat.parsed))
	}
}

// A loaded catalog holds every entry's card but only maxParsed parsed
// entries: the cards must not keep the text of every file alive (the
// parser slices its front matter out of the file's text).
func TestCardsDoNotHoldFileTexts(t *testing.T) {
	mem := host.NewMemFS()
	const n, size = 4 * maxParsed, 8 << 10
	filler := strings.Repeat("words of the body ", size/18)
	for i := range n {
		p := fmt.Sprintf("notes/log/e%04d.md", i)
		text := fmt.Sprintf("---\ntitle: Entry %d\ncreatedAt: 2026-01-01T00:00:00Z\n---\n\n%s\n", i, filler)
		if err := mem.WriteFile(p, []byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	heap := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	before := heap()
	cat, _, _, err := Load(mem, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	held := heap() - before
	runtime.KeepAlive(cat)
	// The parsed entries hold about twice their text, 2·maxParsed·size;
	// keeping every file's text would add n·size.
	if limit := int64(2*maxParsed*size + n*size/2); held > limit {
		t.Fatalf("the catalog of %d entries of %d bytes holds %d MB, over %d MB", n, size, held>>20, limit>>20)
	}
}

// A Reload of a restored catalog forgets exactly the files the listing no
// longer shows, whatever else changed outside the engine meanwhile (a
// file added, one rewritten, one renamed, as many added as removed), also
// when the catalog gives its records' slots anew first.
func TestReloadForgetsWhatIsGone(t *testing.T) {
	for _, renumber := range []bool{false, true} {
		t.Run(fmt.Sprintf("renumber=%v", renumber), func(t *testing.T) {
			mem := host.NewMemFS()
			mem.SetNow(func() int64 { return 1_000_000 })
			write := func(p, title string) {
				t.Helper()
				if err := mem.WriteFile(p, []byte("---\ntitle: "+title+"\n---\n\nBody.\n")); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []string{"a/one.md", "a/two.md", "a-b/three.md", "a.md", "b/four.md", "b/context.md"} {
				write(p, p)
			}
			cat, _, _, err := Load(mem, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if err := cat.Save(mem); err != nil {
				t.Fatal(err)
			}
			mem.SetNow(func() int64 { return 2_000_000 })
			if err := mem.Remove("a/two.md"); err != nil {
				t.Fatal(err)
			}
			if err := mem.Remove("b/context.md"); err != nil {
				t.Fatal(err)
			}
			if err := mem.Rename("a-b/three.md", "a-b/three-renamed.md"); err != nil {
				t.Fatal(err)
			}
			write("a.md", "rewritten")
			write("b/five.md", "five")
			prev, err := Restore(mem, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if renumber {
				// Records made and removed since the restore leave their
				// slots unused, which the Reload gives back first.
				for i := range 2000 {
					p := fmt.Sprintf("c/%04d.md", i)
					prev.SetStamp(p, "k")
					prev.Forget(p)
				}
				if prev.recs.Dead() < 2000 {
					t.Fatalf("%d dead records, want 2000", prev.recs.Dead())
				}
			}
			got, warnings, err := Reload(mem, 1<<20, ReloadOptions{Prev: prev, Now: time.UnixMilli(3_000_000)})
			if err != nil || len(warnings) != 0 {
				t.Fatalf("reload: %v %v", warnings, err)
			}
			want := []string{"a-b/three-renamed.md", "a.md", "a/one.md", "b/five.md", "b/four.md"}
			if !slices.Equal(got.Stamped(), want) || !slices.Equal(got.Paths(), want) || len(got.ContextPaths()) != 0 {
				t.Fatalf("stamped %v, entries %v, contexts %v; want %v", got.Stamped(), got.Paths(), got.ContextPaths(), want)
			}
			if title, _ := got.Title("a.md"); title != "rewritten" {
				t.Errorf("a.md: title %q", title)
			}
			if !got.Unsaved() {
				t.Error("the catalog changed but is not to be saved")
			}
			if renumber && got.recs.Slots() > 16 {
				t.Errorf("slots not given anew: %d given", got.recs.Slots())
			}
		})
	}
}
