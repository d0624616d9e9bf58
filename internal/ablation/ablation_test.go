package ablation

import "testing"

func TestNamesRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range All() {
		name := m.String()
		if name == "" || seen[name] {
			t.Fatalf("mechanism %d: name %q empty or repeated", m, name)
		}
		seen[name] = true
		got, err := Parse(name)
		if err != nil || got != m {
			t.Errorf("Parse(%q) = %v, %v; want %v", name, got, err, m)
		}
	}
	if _, err := Parse("no-such-thing"); err == nil {
		t.Error("Parse accepted an unknown name")
	}
}

func TestSwitchOff(t *testing.T) {
	if Off() != 0 {
		t.Fatalf("switched off before any switch: %b", Off())
	}
	s := Of(Siblings, TitleBoost)
	if prev := SwitchOff(s); prev != 0 {
		t.Errorf("SwitchOff returned %b, want the empty set", prev)
	}
	if !Off().Has(Siblings) || !Off().Has(TitleBoost) || Off().Has(Openers) {
		t.Errorf("Off() = %b, want siblings and title-boost only", Off())
	}
	if prev := SwitchOff(0); prev != s {
		t.Errorf("SwitchOff(0) returned %b, want %b", prev, s)
	}
	if Off() != 0 {
		t.Errorf("Off() = %b after SwitchOff(0)", Off())
	}
}
