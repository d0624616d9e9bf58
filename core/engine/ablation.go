package engine

import (
	"github.com/arbormem/arbor/core/internal/retrieve"
	"github.com/arbormem/arbor/core/internal/search"
	"github.com/arbormem/arbor/internal/ablation"
)

// ablate switches off, in the search options and the retrieval rules of an
// engine being opened, the mechanisms the retrieval benchmark's ablation
// switched off (internal/ablation). Outside that benchmark none is, and o
// and the rules are left as they are.
func ablate(o *search.Options, r *retrieve.Off) {
	off := ablation.Off()
	if off == 0 {
		return
	}
	if off.Has(ablation.TitleBoost) {
		o.TitleBoost = 1
	}
	if off.Has(ablation.PrefixExpansion) {
		o.PrefixBoost = -1
	}
	if off.Has(ablation.FuzzyExpansion) {
		o.FuzzyBoost = -1
	}
	o.KeepScaffolding = off.Has(ablation.Scaffolding)
	o.AsideInContent = off.Has(ablation.AssistantAside)
	*r = retrieve.Off{
		TimeWindow:    off.Has(ablation.TimeWindow),
		DurationWords: off.Has(ablation.DurationWords),
		NamedAuthors:  off.Has(ablation.NamedAuthors),
		Siblings:      off.Has(ablation.Siblings),
		Openers:       off.Has(ablation.Openers),
		OwnWords:      off.Has(ablation.OwnWords),
		PieceLength:   off.Has(ablation.PieceLength),
		RepliedTo:     off.Has(ablation.RepliedTo),
		FuzzyCache:    off.Has(ablation.FuzzyCache),
	}
}
