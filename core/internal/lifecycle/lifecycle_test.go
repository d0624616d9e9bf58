package lifecycle

import (
	"math"
	"testing"
	"time"

	"github.com/arbormem/arbor/core/api"
)

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func days(n float64) time.Time { return t0.Add(time.Duration(n * float64(24*time.Hour))) }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestNewEntryStartsAsDraftAt50(t *testing.T) {
	p := api.DefaultLifecycleModel()
	s := New(p, t0)
	if s.Importance != 50 || s.Maturity != api.MaturityDraft || !s.LastActivity.Equal(t0) {
		t.Fatalf("new signal = %+v, want importance 50, draft, last activity %v", s, t0)
	}
}

func TestBonusesAndCounts(t *testing.T) {
	p := api.DefaultLifecycleModel()
	s := New(p, t0).Access(p, t0).Access(p, t0).Update(p, t0)
	if !near(s.Importance, 50+3+3+5) || s.Accesses != 2 || s.Updates != 1 {
		t.Fatalf("after 2 accesses and 1 update at once: %+v, want importance 61, 2 accesses, 1 update", s)
	}
}

func TestImportanceIsCappedAt100(t *testing.T) {
	p := api.DefaultLifecycleModel()
	s := New(p, t0)
	for range 40 {
		s = s.Update(p, t0)
	}
	if s.Importance != api.MaxImportance {
		t.Fatalf("importance after 40 updates = %g, want %d", s.Importance, api.MaxImportance)
	}
}

func TestDecayPerDayWithoutActivity(t *testing.T) {
	p := api.DefaultLifecycleModel()
	s := New(p, t0)
	for _, d := range []float64{0, 1, 10, 30, 365} {
		got := s.At(p, days(d)).Importance
		want := 50 * math.Pow(0.995, d)
		if !near(got, want) {
			t.Errorf("importance after %g days = %.6f, want %.6f", d, got, want)
		}
	}
	// Decay is lazy: At does not change the recorded signal.
	if s.Importance != 50 {
		t.Fatalf("At changed the receiver: %+v", s)
	}
	// An access decays first, then adds its bonus; the clock restarts there.
	a := s.Access(p, days(10))
	if want := 50*math.Pow(0.995, 10) + 3; !near(a.Importance, want) || !a.LastActivity.Equal(days(10)) {
		t.Fatalf("access after 10 quiet days = %+v, want importance %.6f from day 10", a, want)
	}
	if want := (50*math.Pow(0.995, 10) + 3) * math.Pow(0.995, 5); !near(a.At(p, days(15)).Importance, want) {
		t.Fatalf("5 days after that: %.6f, want %.6f", a.At(p, days(15)).Importance, want)
	}
}

func TestUnrecordedEntryDoesNotDecay(t *testing.T) {
	p := api.DefaultLifecycleModel()
	s := New(p, time.Time{})
	if got := s.At(p, days(400)); got.Importance != 50 || got.Maturity != api.MaturityDraft {
		t.Fatalf("unrecorded entry after 400 days = %+v, want 50 draft", got)
	}
	if a := s.Access(p, days(400)); a.Importance != 53 || !a.LastActivity.Equal(days(400)) {
		t.Fatalf("first access of an unrecorded entry = %+v, want 53 from day 400", a)
	}
}

func TestHysteresisUpward(t *testing.T) {
	p := api.DefaultLifecycleModel()
	s := New(p, t0)
	// 50 → 5 accesses → 65: validated exactly at the threshold.
	for i := range 4 {
		s = s.Access(p, t0)
		if s.Maturity != api.MaturityDraft {
			t.Fatalf("after %d accesses (ι %g): %s, want draft below 65", i+1, s.Importance, s.Maturity)
		}
	}
	s = s.Access(p, t0)
	if s.Importance != 65 || s.Maturity != api.MaturityValidated {
		t.Fatalf("at ι 65: %+v, want validated", s)
	}
	// 65 → 4 updates → 85: core exactly at the threshold.
	for range 3 {
		s = s.Update(p, t0)
	}
	if s.Importance != 80 || s.Maturity != api.MaturityValidated {
		t.Fatalf("at ι 80: %+v, want still validated", s)
	}
	s = s.Update(p, t0)
	if s.Importance != 85 || s.Maturity != api.MaturityCore {
		t.Fatalf("at ι 85: %+v, want core", s)
	}
}

func TestHysteresisDownward(t *testing.T) {
	p := api.DefaultLifecycleModel()
	core := Signal{Importance: 85, Maturity: api.MaturityCore, LastActivity: t0}
	// Core holds until ι < 60, though it is far below the 85 that promoted it.
	dayAt := func(target float64) float64 { return math.Log(target/85) / math.Log(0.995) }
	if s := core.At(p, days(dayAt(60.5))); s.Maturity != api.MaturityCore {
		t.Fatalf("core at ι %.2f = %s, want core (demotion only below 60)", s.Importance, s.Maturity)
	}
	if s := core.At(p, days(dayAt(59.5))); s.Maturity != api.MaturityValidated {
		t.Fatalf("core at ι %.2f = %s, want validated", s.Importance, s.Maturity)
	}
	// Validated holds until ι < 35, far below the 65 that promoted it.
	if s := core.At(p, days(dayAt(35.5))); s.Maturity != api.MaturityValidated {
		t.Fatalf("at ι %.2f = %s, want validated (demotion only below 35)", s.Importance, s.Maturity)
	}
	low := core.At(p, days(dayAt(34.5)))
	if low.Maturity != api.MaturityDraft {
		t.Fatalf("at ι %.2f = %s, want draft", low.Importance, low.Maturity)
	}
	// Back up: a draft at 50 stays a draft, though a validated entry at 50 stays validated.
	if s := (Signal{Importance: 50, Maturity: api.MaturityDraft, LastActivity: t0}).At(p, t0); s.Maturity != api.MaturityDraft {
		t.Fatalf("draft at 50 = %s", s.Maturity)
	}
	if s := (Signal{Importance: 50, Maturity: api.MaturityValidated, LastActivity: t0}).At(p, t0); s.Maturity != api.MaturityValidated {
		t.Fatalf("validated at 50 = %s", s.Maturity)
	}
}

func TestDemotionDuringQuietDaysHappensBeforeTheBonus(t *testing.T) {
	p := api.DefaultLifecycleModel()
	v := Signal{Importance: 40, Maturity: api.MaturityValidated, LastActivity: t0}
	// 40 days later ι ≈ 32.7 < 35: demoted to draft; the access brings it to
	// ≈ 35.7, which keeps a validated entry validated but does not promote a draft.
	s := v.Access(p, days(40))
	if s.Maturity != api.MaturityDraft {
		t.Fatalf("access after decay below 35: %+v, want draft", s)
	}
}

func TestSettleCrossesTwoTiers(t *testing.T) {
	p := api.DefaultLifecycleModel()
	if s := (Signal{Importance: 90, Maturity: api.MaturityDraft, LastActivity: t0}).At(p, t0); s.Maturity != api.MaturityCore {
		t.Fatalf("draft at 90 = %s, want core", s.Maturity)
	}
	if s := (Signal{Importance: 10, Maturity: api.MaturityCore, LastActivity: t0}).At(p, t0); s.Maturity != api.MaturityDraft {
		t.Fatalf("core at 10 = %s, want draft", s.Maturity)
	}
	if s := (Signal{Importance: 90, Maturity: "bogus", LastActivity: t0}).At(p, t0); s.Maturity != api.MaturityCore {
		t.Fatalf("unknown tier at 90 = %s, want core (treated as draft)", s.Maturity)
	}
}

func TestRecency(t *testing.T) {
	p := api.DefaultLifecycleModel()
	if r := Recency(p, t0, t0); r != 1 {
		t.Fatalf("recency now = %g, want 1", r)
	}
	if r := Recency(p, t0, days(30)); !near(r, math.Exp(-1)) {
		t.Fatalf("recency after 30 days = %g, want e^-1", r)
	}
	half := 30 * math.Ln2
	if r := Recency(p, t0, days(half)); !near(r, 0.5) {
		t.Fatalf("recency after %.1f days = %g, want 0.5 (≈21-day half-life)", half, r)
	}
	if r := Recency(p, days(5), t0); r != 1 {
		t.Fatalf("recency of a future update = %g, want 1", r)
	}
	if r := Recency(p, time.Time{}, t0); r != 0 {
		t.Fatalf("recency with no update time = %g, want 0", r)
	}
}

func TestScoreWeightsAndBoosts(t *testing.T) {
	p := api.DefaultLifecycleModel()
	s := Signal{Importance: 50, Maturity: api.MaturityDraft}
	if got, want := Score(p, 0.9, s, 1), (0.6*0.9+0.2*0.5+0.2*1)*0.85; !near(got, want) {
		t.Fatalf("draft score = %g, want %g", got, want)
	}
	s.Maturity = api.MaturityValidated
	if got, want := Score(p, 0.9, s, 1), 0.6*0.9+0.2*0.5+0.2*1; !near(got, want) {
		t.Fatalf("validated score = %g, want %g", got, want)
	}
	s.Maturity = api.MaturityCore
	if got, want := Score(p, 0.9, s, 1), (0.6*0.9+0.2*0.5+0.2*1)*1.15; !near(got, want) {
		t.Fatalf("core score = %g, want %g", got, want)
	}
	// The weights are parameters: relevance alone ranks by relevance.
	q := p
	q.RelevanceWeight, q.ImportanceWeight, q.RecencyWeight = 1, 0, 0
	q.DraftBoost = 1
	if got := Score(q, 0.42, Signal{Importance: 99, Maturity: api.MaturityDraft}, 1); !near(got, 0.42) {
		t.Fatalf("relevance-only score = %g, want 0.42", got)
	}
	// A core entry outranks a draft with a slightly better relevance.
	if Score(p, 0.80, Signal{Importance: 90, Maturity: api.MaturityCore}, 1) <= Score(p, 0.85, Signal{Importance: 50, Maturity: api.MaturityDraft}, 1) {
		t.Fatal("core entry at relevance 0.80 should outrank a draft at relevance 0.85")
	}
}

func TestMergeKeepsTheHigherImportanceAndBothCounts(t *testing.T) {
	p := api.DefaultLifecycleModel()
	target := Signal{Importance: 55, Maturity: api.MaturityDraft, Accesses: 1, Updates: 1, LastActivity: t0}
	source := Signal{Importance: 88, Maturity: api.MaturityCore, Accesses: 12, Updates: 2, LastActivity: t0}
	m := target.Merge(p, source, t0).Update(p, t0)
	if m.Importance != 93 || m.Maturity != api.MaturityCore || m.Accesses != 13 || m.Updates != 4 {
		t.Fatalf("merged = %+v, want importance 93, core, 13 accesses, 4 updates", m)
	}
	// The other way round the survivor's own importance wins.
	m = source.Merge(p, target, t0)
	if m.Importance != 88 || m.Maturity != api.MaturityCore {
		t.Fatalf("merged = %+v, want 88 core", m)
	}
}
