package lazyre

import (
	"testing"

	"github.com/dlclark/regexp2"
)

// An expression is compiled at the first text holding one of its words,
// in any case, and never for text holding none.
func TestCompiledAtFirstNeed(t *testing.T) {
	// Invalid: compiling it panics, so a nil For shows it was not compiled.
	r := New(`ago(`, regexp2.IgnoreCase, "ago", "since")
	if re := r.For("When did Melanie paint a sunrise?"); re != nil {
		t.Fatal("For of a question without the words compiled the expression")
	}
	defer func() {
		if recover() == nil {
			t.Error("For of a question holding AGO did not compile the expression")
		}
	}()
	r.For("What did she paint three weeks AGO?")
}

// Without words every text may match, and the expression is compiled once.
func TestNoWords(t *testing.T) {
	r := New(`^\*\*(\w+):`, regexp2.None)
	a, b := r.For("anything"), r.For("")
	if a == nil || a != b || a != r.Compiled() {
		t.Fatalf("For: %p %p %p, want one compiled expression", a, b, r.Compiled())
	}
	if ok, _ := a.MatchString("**User: hello"); !ok {
		t.Error("the compiled expression does not match")
	}
}
