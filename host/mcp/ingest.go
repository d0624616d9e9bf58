package mcp

import (
	"context"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
)

// ToolIngest is the name of the ingest tool.
const ToolIngest = "arbor-ingest"

// ingestInput is the input of arbor-ingest: documents the agent holds, as
// text. The server reads no file of its own machine for an agent: the
// names only say what each document is.
type ingestInput struct {
	Files  []ingestFile `json:"files" jsonschema:"the documents to split into entries"`
	Domain string       `json:"domain,omitempty" jsonschema:"put every entry under this domain (a folder name, slugged) instead of the one each document's kind gives (documents, data, mail, calendar, code, chats)"`
}

type ingestFile struct {
	Name    string `json:"name" jsonschema:"a relative name for the document, e.g. notes/deploy.md or exports/tickets.csv: its identity (ingesting the same name again updates its entries) and, by its extension, its format"`
	Content string `json:"content" jsonschema:"the document's text (UTF-8)"`
}

const ingestDescription = `Split documents into entries of the memory, deterministically and without an LLM, and write them as arbor-curate would (each entry atomic, audited, with its provenance: the document's name and where in it the entry comes from). The format follows the name's extension: markdown (.md: one entry per note, its headings kept), plain text (paragraph groups), JSON and JSON Lines (one entry per record; chat transcripts by their shape), CSV/TSV (one per row), e-mail (.eml), iCalendar (.ics: one per event), Go, JavaScript/TypeScript and Python (one per top-level declaration). Entries go to domain/topic/name.md: the domain from the kind of document (or domain), the topic from the document's name. A name's top folder holds only agents' documents: one that a folder ingested from disk holds (its files fail, saying so) wants another name.

Use it for a document the user gives you to remember as it is (meeting notes, an export, a spec); curate what you learned yourself with arbor-curate. Ingesting a name again updates its entries and removes those its new text no longer makes; a document whose text did not change is left as it is. The result lists, per document, its status (added, updated, unchanged, failed with a message) and the operations applied, with a summary. A request with a progress token hears how far the writing and indexing have got.`

// addIngestTool registers arbor-ingest (a writable server only).
func addIngestTool(s *Server) {
	addTool(s, &sdk.Tool{Name: ToolIngest, Title: "Ingest documents", Description: ingestDescription,
		Annotations:  &sdk.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(false)},
		InputSchema:  inputSchema[ingestInput](nil),
		OutputSchema: outputSchema[api.IngestResult]()},
		func(ctx context.Context, in ingestInput) (api.IngestResult, error) {
			p := api.IngestParams{IngestOptions: api.IngestOptions{Domain: in.Domain}}
			for _, f := range in.Files {
				p.Files = append(p.Files, api.SourceFile{Name: f.Name, Content: f.Content})
			}
			p.Origins = agentOrigins(in.Files)
			return s.eng.Ingest(ctx, p)
		})
}

// agentOrigins gives the top folder of each document's name the origin
// api.AgentOrigin, so that the engine keeps an agent's documents and a
// folder the CLI ingests under one name apart: without it, `arbor ingest
// --prune ~/notes` deleted the entries of an agent's notes/minutes.md as
// a file gone from the folder, and the agent's document overwrote the
// folder's entries of the same name. A name with no folder, or one the
// engine would refuse as a prefix (the file fails alone), gets none.
func agentOrigins(files []ingestFile) map[string]string {
	var origins map[string]string
	for _, f := range files {
		top, _, ok := strings.Cut(f.Name, "/")
		if !ok || top == "" || api.CheckPrefix(top+"/") != nil {
			continue
		}
		if origins == nil {
			origins = map[string]string{}
		}
		origins[top+"/"] = api.AgentOrigin
	}
	return origins
}

// ingested lists the paths an ingest changed: those of its successful
// operations.
func ingested(res api.IngestResult) []string {
	var paths []string
	for _, f := range res.Files {
		paths = append(paths, curated(api.CurateResult{Applied: f.Applied})...)
	}
	return paths
}
