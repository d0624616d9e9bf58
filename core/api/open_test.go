package api

import (
	"math"
	"testing"
)

func TestLifecycleModelValidate(t *testing.T) {
	if err := DefaultLifecycleModel().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	bad := []func(*LifecycleModel){
		func(p *LifecycleModel) { p.DailyDecay = 0 },
		func(p *LifecycleModel) { p.DailyDecay = 1.1 },
		func(p *LifecycleModel) { p.RelevanceWeight = -1 },
		func(p *LifecycleModel) { p.RelevanceWeight, p.ImportanceWeight, p.RecencyWeight = 0, 0, 0 },
		func(p *LifecycleModel) { p.CoreBoost = 0 },
		func(p *LifecycleModel) { p.RecencyDays = 0 },
		func(p *LifecycleModel) { p.InitialImportance = 101 },
		func(p *LifecycleModel) { p.DemoteDraft = 70 },
		func(p *LifecycleModel) { p.PromoteCore = 50 },
		func(p *LifecycleModel) { p.AccessBonus = math.NaN() },
	}
	for i, f := range bad {
		p := DefaultLifecycleModel()
		f(&p)
		if err := p.Validate(); err == nil {
			t.Errorf("case %d: %+v accepted", i, p)
		}
	}
}
