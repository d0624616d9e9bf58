package main

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arbormem/arbor/bench/internal/dataset"
)

func TestRecallAtK(t *testing.T) {
	ranked := []string{"a", "b", "c", "d"}
	for _, tc := range []struct {
		gold []string
		k    int
		want float64
	}{
		{[]string{"a"}, 1, 1},
		{[]string{"c"}, 2, 0},
		{[]string{"a", "d"}, 2, 0.5},
		{[]string{"a", "d"}, 4, 1},
		{[]string{"a", "d"}, 10, 1}, // k beyond the ranking
		{[]string{"a", "a", "z"}, 5, 0.5},
		{nil, 5, 0},
	} {
		if got := RecallAtK(ranked, tc.gold, tc.k); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("RecallAtK(%v, %d) = %v, want %v", tc.gold, tc.k, got, tc.want)
		}
	}
	if got := RecallAtK(nil, []string{"a"}, 5); got != 0 {
		t.Errorf("empty ranking: %v", got)
	}
}

func TestAnyAllAtK(t *testing.T) {
	ranked := []int{7, 3, 9, 1, 4, 8}
	for _, tc := range []struct {
		gold     []int
		k        int
		any, all bool
	}{
		{[]int{7}, 1, true, true},
		{[]int{3}, 1, false, false},
		{[]int{3, 4}, 5, true, true},
		{[]int{3, 8}, 5, true, false},
		{[]int{8}, 5, false, false},
		{[]int{2}, 10, false, false},
		{nil, 5, false, false},
	} {
		if got := AnyAtK(ranked, tc.gold, tc.k); got != tc.any {
			t.Errorf("AnyAtK(%v, %d) = %v", tc.gold, tc.k, got)
		}
		if got := AllAtK(ranked, tc.gold, tc.k); got != tc.all {
			t.Errorf("AllAtK(%v, %d) = %v", tc.gold, tc.k, got)
		}
	}
}

func TestDedupe(t *testing.T) {
	if got := dataset.Dedupe([]int{3, 1, 3, 2, 1}); !reflect.DeepEqual(got, []int{3, 1, 2}) {
		t.Errorf("Dedupe = %v", got)
	}
}

func TestParseTurnID(t *testing.T) {
	for _, tc := range []struct {
		in        string
		want      TurnID
		fixed, ok bool
	}{
		{"D1:3", TurnID{Session: 1, Turn: 3}, false, true},
		{"D:11:26", TurnID{Session: 11, Turn: 26}, true, true},
		{"D30:05", TurnID{Session: 30, Turn: 5}, true, true},
		{"D", TurnID{}, false, false},
		{"D0:1", TurnID{}, false, false},
		{"X1:2", TurnID{}, false, false},
		{"D1:2:3", TurnID{}, false, false},
	} {
		id, fixed, ok := ParseTurnID(tc.in)
		if id != tc.want || fixed != tc.fixed || ok != tc.ok {
			t.Errorf("ParseTurnID(%q) = %v %v %v", tc.in, id, fixed, ok)
		}
	}
	if s := (TurnID{Session: 8, Turn: 6}).String(); s != "D8:6" {
		t.Errorf("String = %q", s)
	}
}

func TestParseEvidence(t *testing.T) {
	turns := map[TurnID]bool{{Session: 8, Turn: 6}: true, {Session: 9, Turn: 17}: true, {Session: 11, Turn: 26}: true, {Session: 30, Turn: 5}: true, {Session: 1, Turn: 3}: true, {Session: 4, Turn: 4}: true}
	exists := func(id TurnID) bool { return turns[id] }
	raw := []string{"D8:6; D9:17", "D:11:26", "D30:05", "D", "D1:3", "D1:3", "D4:4 D4:99"}
	got, rep := ParseEvidence(raw, exists)
	want := []TurnID{{Session: 8, Turn: 6}, {Session: 9, Turn: 17}, {Session: 11, Turn: 26}, {Session: 30, Turn: 5}, {Session: 1, Turn: 3}, {Session: 4, Turn: 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
	if rep.Split != 2 || rep.Fixed != 2 || !reflect.DeepEqual(rep.Malformed, []string{"D"}) || !reflect.DeepEqual(rep.Missing, []string{"D4:99"}) {
		t.Errorf("report = %+v", rep)
	}
	// Without an existence check nothing well-formed is dropped.
	if got, _ := ParseEvidence([]string{"D99:1"}, nil); len(got) != 1 {
		t.Errorf("nil exists: %v", got)
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if p := Percentile(ds, 50); p != 50*time.Millisecond {
		t.Errorf("p50 = %v", p)
	}
	if p := Percentile(ds, 95); p != 95*time.Millisecond {
		t.Errorf("p95 = %v", p)
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("Percentile sorted its input")
	}
	if p := Percentile(nil, 50); p != 0 {
		t.Errorf("empty: %v", p)
	}
}

// The text the engine sees must never carry LongMemEval's gold labels.
func TestLMEUnitsHideGold(t *testing.T) {
	q := &lmeQuestion{
		ID: "q1", SessionIDs: []string{"answer_abc_1", "sharegpt_x"}, AnswerIDs: []string{"answer_abc_1"},
		Dates:    []string{"2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 10:00"},
		Sessions: [][]lmeMessage{{{Role: "user", Content: "I bought a red bike."}, {Role: "assistant", Content: "Nice!"}}, {{Role: "user", Content: "Hello"}}},
	}
	for _, turns := range []int{0, 1} {
		us := lmeUnits(q, turns)
		for _, u := range us {
			all := strings.Join([]string{u.Path, u.Title, u.Task, u.Author, u.Body}, " ")
			if strings.Contains(all, "answer_") || strings.Contains(all, "sharegpt") || strings.Contains(all, "has_answer") {
				t.Errorf("unit exposes a session id: %q", all)
			}
			if err := validPath(u.Path); err != nil {
				t.Errorf("%s: %v", u.Path, err)
			}
		}
		if turns == 1 && len(us) != 3 {
			t.Errorf("one turn per entry: %d units", len(us))
		}
	}
	if g := q.Gold(); !reflect.DeepEqual(g, []int{0}) {
		t.Errorf("gold = %v", g)
	}
	u := lmeUnits(q, 0)[0]
	if u.Path != "chats/2023_05/session_01.md" || u.Title != "Chat on 20 May 2023" {
		t.Errorf("unit = %+v", u)
	}
}

func validPath(p string) error {
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || strings.HasPrefix(seg, ".") || strings.ToLower(seg) != seg {
			return &pathError{p}
		}
	}
	return nil
}

type pathError struct{ p string }

func (e *pathError) Error() string { return "bad path " + e.p }

func TestLocomoUnits(t *testing.T) {
	c := &locomoConv{SampleID: "conv-1", SpeakerA: "Caroline", SpeakerB: "Melanie", Sessions: []locomoSession{{
		N: 1, DateText: "1:56 pm on 8 May, 2023", Date: parseLocomoDate("1:56 pm on 8 May, 2023"),
		Turns: []locomoTurn{{ID: TurnID{Session: 1, Turn: 3}, Speaker: "Caroline", Text: "I went to a support group.", Caption: "a photo of a flag"}},
	}}}
	us := locomoUnits(c, 0)
	if len(us) != 1 {
		t.Fatalf("%d units", len(us))
	}
	u := us[0]
	if u.Path != "caroline_and_melanie/session_01/turn_003.md" || u.Title != "Caroline on 8 May 2023" ||
		u.Body != "I went to a support group. [shares a photo: a photo of a flag]" || u.Turn != (TurnID{Session: 1, Turn: 3}) {
		t.Errorf("unit = %+v", u)
	}
	op := u.operation()
	if op.Reason == "" || op.Content.RawConcept.Timestamp != "2023-05-08T13:56:00Z" || op.Content.RawConcept.Author != "Caroline" {
		t.Errorf("operation = %+v", op)
	}
}

func TestAgreement(t *testing.T) {
	var a agreement
	x, y := TurnID{Session: 1, Turn: 2}, TurnID{Session: 3, Turn: 4}
	a.add([]TurnID{x, y}, []TurnID{x, y})
	a.add([]TurnID{x, y}, []TurnID{y, x})
	a.add([]int{1, 2}, []int{1, 3})
	if a != (agreement{same: 1, sameSet: 2, compared: 3}) {
		t.Errorf("agreement %+v", a)
	}
}
