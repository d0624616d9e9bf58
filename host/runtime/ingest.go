package runtime

import (
	"context"

	"github.com/arbormem/arbor/core/api"
)

// Ingest splits files into entries and writes them through curate
// (docs/ABI.md §4.11); re-ingesting an unchanged file writes nothing. A
// file that cannot be split fails alone, in the result, not as an error.
func (e *Engine) Ingest(ctx context.Context, p api.IngestParams) (api.IngestResult, error) {
	return method[api.IngestResult](ctx, e, "ingest", p)
}
