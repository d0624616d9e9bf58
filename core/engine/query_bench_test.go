package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// BenchmarkQueryLength queries examples/notes with questions of growing
// length, up to api.MaxQueryBytes: prose that names times ("a week ago",
// "in the past two weeks"), and prose of distinct words. The time per
// query grows with the length, no faster (bench/ingest/REPORT.md).
func BenchmarkQueryLength(b *testing.B) {
	e, _, err := Open(Options{FS: benchTree(b, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	shapes := map[string]func(i int) string{
		"times": func(i int) string {
			return []string{"what did we decide a week ago about invoice retries", "in the past two weeks", "how many days ago was the outage", "on May 3, 2023", "last weekend"}[i%5]
		},
		"words": func(i int) string { return fmt.Sprintf("deploy%d canary%d rollback%d", i, i*7, i*13) },
	}
	for _, name := range []string{"times", "words"} {
		for _, n := range []int{api.MaxQueryBytes / 4, api.MaxQueryBytes / 2, api.MaxQueryBytes} {
			var q strings.Builder
			for i := 0; ; i++ {
				s := shapes[name](i) + ". "
				if q.Len()+len(s) > n {
					break
				}
				q.WriteString(s)
			}
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				for b.Loop() {
					// Another query each time: the caches would answer a repeat.
					e.retriever.Changed()
					if _, err := e.Query(api.SearchParams{Query: q.String()}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
