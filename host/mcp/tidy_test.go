package mcp

import (
	"testing"

	"github.com/arbormem/arbor/core/api"
)

// arbor-tidy plans without writing, and applies with apply: two entries
// that hold the same knowledge become one.
func TestTidyTool(t *testing.T) {
	cs := serve(t, t.TempDir())
	narrative := "Failed invoices are retried three times, two days apart, then the account goes to the collections team."
	call(t, cs, ToolCurate, map[string]any{"operations": []any{
		map[string]any{"type": "ADD", "path": "engineering/billing", "title": "Invoice retries", "content": map[string]any{"narrative": narrative}, "reason": "from the billing sync"},
		map[string]any{"type": "ADD", "path": "finance/billing", "title": "Invoice retries", "content": map[string]any{"narrative": narrative}, "reason": "saved twice"},
	}})
	var plan api.TidyResult
	decode(t, call(t, cs, ToolTidy, map[string]any{"kinds": []string{"merge"}}), &plan)
	if len(plan.Suggestions) != 1 || plan.Applied != nil || len(plan.Suggestions[0].Operations) != 1 {
		t.Fatalf("plan: %+v", plan)
	}
	var search api.SearchResult
	decode(t, call(t, cs, ToolSearch, map[string]any{"query": "invoices retried collections"}), &search)
	if search.Total != 2 {
		t.Fatalf("the plan wrote: %+v", search)
	}
	var applied api.TidyResult
	decode(t, call(t, cs, ToolTidy, map[string]any{"kinds": []string{"merge"}, "apply": true}), &applied)
	if applied.Applied == nil || applied.Applied.Summary.Merged != 1 {
		t.Fatalf("apply: %+v", applied)
	}
	decode(t, call(t, cs, ToolSearch, map[string]any{"query": "invoices retried collections"}), &search)
	if search.Total != 1 {
		t.Errorf("after apply: %+v", search)
	}
}
