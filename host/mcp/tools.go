package mcp

import (
	"context"
	"fmt"

	"github.com/arbormem/arbor/core/api"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool names.
const (
	ToolQuery   = "arbor-query"
	ToolSearch  = "arbor-search"
	ToolCurate  = "arbor-curate"
	ToolRead    = "arbor-read"
	ToolTree    = "arbor-tree"
	ToolMove    = "arbor-move"
	ToolRecent  = "arbor-recent"
	ToolSync    = "arbor-sync"
	ToolContext = "arbor-context"
	ToolTidy    = "arbor-tidy"
)

// queryInput is the input of arbor-query.
type queryInput struct {
	Query string `json:"query" jsonschema:"the question or keywords, in any language, at most 4096 bytes; quotes match a phrase (\"connection pool\")"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many source entries to return, 1 to 20 (default 5)"`
	filtersInput
}

// filtersInput are the filters and sort of arbor-query and arbor-search
// (api.Filters).
type filtersInput struct {
	Domain        string         `json:"domain,omitempty" jsonschema:"only files of this domain (the first folder), e.g. engineering"`
	Topic         string         `json:"topic,omitempty" jsonschema:"only files of this topic (the second folder): its name, e.g. billing, or domain/topic"`
	Tags          []string       `json:"tags,omitempty" jsonschema:"only entries carrying every one of these tags (case-insensitive)"`
	Since         string         `json:"since,omitempty" jsonschema:"only entries changed (updatedAt, else createdAt) within a span back from now (30m, 12h, 7d, 2w) or since a date (2026-03-01) or an RFC 3339 time"`
	Until         string         `json:"until,omitempty" jsonschema:"only entries changed up to a span back from now, a date (kept whole) or an RFC 3339 time"`
	Maturity      []api.Maturity `json:"maturity,omitempty" jsonschema:"only entries at one of these lifecycle tiers, as of now"`
	MinImportance float64        `json:"minImportance,omitempty" jsonschema:"only entries whose importance (0 to 100, as of now) is at least this"`
	Sort          string         `json:"sort,omitempty" jsonschema:"order of the results: relevance (default), recent (newest change first) or importance (highest first); ties by relevance"`
	Archived      bool           `json:"archived,omitempty" jsonschema:"include the entries under _archive/ (moved there by arbor-tidy), left out by default"`
}

// filters is in as the engine takes it.
func (in filtersInput) filters() api.Filters {
	return api.Filters{Domain: in.Domain, Topic: in.Topic, Tags: in.Tags, Since: in.Since, Until: in.Until,
		Maturity: in.Maturity, MinImportance: in.MinImportance, Sort: in.Sort, Archived: in.Archived}
}

// tidySchema sets the enum and bounds of arbor-tidy's input.
func tidySchema(s *jsonschema.Schema) {
	kinds := make([]any, len(api.TidyKinds))
	for i, k := range api.TidyKinds {
		kinds[i] = k
	}
	s.Properties["kinds"].Items.Enum = kinds
	sim := s.Properties["similarity"]
	sim.Minimum, sim.Maximum = new(0.5), new(1.0)
	s.Properties["limit"].Minimum = new(0.0)
}

// filtersSchema sets the enums and bounds of the filters in the schema.
func filtersSchema(s *jsonschema.Schema) {
	s.Properties["sort"].Enum = []any{api.SortRelevance, api.SortRecent, api.SortImportance}
	s.Properties["maturity"].Items.Enum = []any{string(api.MaturityDraft), string(api.MaturityValidated), string(api.MaturityCore)}
	imp := s.Properties["minImportance"]
	imp.Minimum, imp.Maximum = new(float64(0)), new(float64(api.MaxImportance))
}

// searchInput is the input of arbor-search.
type searchInput struct {
	Query string `json:"query" jsonschema:"words to look for in titles, paths, tags, keywords and content, at most 4096 bytes; quotes match a phrase"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many results to return, 1 to 100 (default 10)"`
	filtersInput
}

// readInput is the input of arbor-read.
type readInput struct {
	Path string `json:"path" jsonschema:"the entry's path relative to the memory root, as the other tools return it, e.g. engineering/billing/invoice_retry_policy.md; a folder's context.md can be read too"`
}

// moveInput is the input of arbor-move.
type moveInput struct {
	Path   string `json:"path" jsonschema:"the entry (a path ending in .md) or the folder domain/topic[/subtopic] to move"`
	To     string `json:"to"`
	Reason string `json:"reason" jsonschema:"why it moves, recorded in the audit log (required)"`
}

// recentInput is the input of arbor-recent.
type recentInput struct {
	Since    string `json:"since,omitempty" jsonschema:"only what changed within a span back from now (30m, 12h, 7d, 2w) or since a date (2026-03-01) or an RFC 3339 time; default: any time"`
	Domain   string `json:"domain,omitempty" jsonschema:"only entries under this folder: a domain such as engineering, or a folder below one"`
	Limit    int    `json:"limit,omitempty" jsonschema:"how many entries to return, 1 to 100 (default 20)"`
	Archived bool   `json:"archived,omitempty" jsonschema:"include the entries under _archive/ (moved there by arbor-tidy), left out by default"`
}

const recentDescription = `List the entries of the memory that changed lately, newest first: each with path, title, summary and when it changed (changed: updatedAt, else createdAt, from its front matter, or its file's modification time for a note without dates: changedFrom says which). Use it to catch up on what was learned or edited recently ("what changed this week?": since "7d"), before a review, or to find what another agent just wrote; total counts every match before the limit.`

// contextInput is the input of arbor-context.
type contextInput struct {
	Path     string `json:"path,omitempty" jsonschema:"the entry to start from, e.g. engineering/billing/invoice_retry_policy.md (give path or query)"`
	Query    string `json:"query,omitempty" jsonschema:"words to find the entry to start from: the best search match is used (give path or query)"`
	Depth    *int   `json:"depth,omitempty" jsonschema:"how many links away to go, 0 to 3 (default 1)"`
	Budget   int    `json:"budget,omitempty" jsonschema:"the most tokens the markdown may take, 100 to 200000 (default 2000), estimated at 4 characters a token"`
	Archived bool   `json:"archived,omitempty" jsonschema:"reach the entries under _archive/ (moved there by arbor-tidy) too, left out by default"`
}

const contextDescription = `Gather what the memory knows around one entry, ready to put in a prompt: the entry (by path, or the best match of query), then the entries it relates to and the entries that link to it, breadth-first up to depth links away, each whole while the token budget holds it, else by its title, path and summary, else left out. markdown holds them as "# Title" parts in that order; entries lists every entry reached with its depth, via (the entry that led to it), link (relation or backlink), included (full, summary, truncated for a start entry over the budget, omitted) and why (reason). One call instead of an arbor-read per relation; arbor-read an entry given by its summary when you need all of it.`

// moveToDescription says what a MOVE's "to" is, in arbor-move and arbor-curate.
const moveToDescription = "MOVE only: for an entry, the folder domain/topic[/subtopic] it moves into (keeping its file name) or its new path ending in .md; for a folder, an existing folder it moves into, else its new path"

// tidyInput is the input of arbor-tidy.
type tidyInput struct {
	Folder     string   `json:"folder,omitempty" jsonschema:"only the entries under this folder, e.g. engineering/billing (default: the whole memory)"`
	Kinds      []string `json:"kinds,omitempty" jsonschema:"which suggestions: merge (near-duplicates), split (entries over splitBytes), archive (stale low-importance drafts), crowded (topics of too many entries); default all"`
	Apply      bool     `json:"apply,omitempty" jsonschema:"apply the plan (default false: only return it)"`
	Similarity float64  `json:"similarity,omitempty" jsonschema:"near-duplicates from this word-shingle Jaccard similarity, 0.5 to 1 (default 0.8)"`
	SplitBytes int      `json:"splitBytes,omitempty" jsonschema:"split entries whose file is over this many bytes (default 8192)"`
	StaleDays  int      `json:"staleDays,omitempty" jsonschema:"archive drafts unchanged and unused for this many days (default 180)"`
	Crowded    int      `json:"crowded,omitempty" jsonschema:"propose subtopics for topics holding more than this many entries directly (default 40)"`
	Limit      *int     `json:"limit,omitempty" jsonschema:"how many suggestions to return, the first in the plan's order (default 200; 0: all); given with apply, only those are applied"`
}

const tidyDescription = `Plan the upkeep of the memory, and with apply carry it out. Each suggestion has a kind, the entries it is about (paths), a reason and the curate operations that do it: merge (near-duplicate entries, word-shingle similarity at least 0.8, MERGEd into the fullest one: facts united, the fuller text kept, sentences that differ kept and marked "Differs in"), split (an entry over the size limit, split by its sections and fact groups into entries related to each other, the first keeping its path), archive (a draft nobody changed or used for 180 days MOVEd under _archive/, which search, query, recent and context leave out; arbor-move brings it back) and crowded (a topic of more than 40 entries given subtopics by shared tags). Without apply nothing is written: review the plan, then call again with apply (or apply only some suggestions with arbor-curate). A large memory's plan holds thousands of suggestions: the answer holds the first 200 (limit), counts holds every one by kind and omitted how many were left out. apply applies the whole plan, including what was left out; with limit it applies only the first limit suggestions, the ones returned, so that you apply only what you reviewed. With apply, each suggestion is applied in order and stops at its first failed operation; applied holds curate's result. The merged text is tidy's own, never a model's: to merge in your own words, send the MERGE through arbor-curate with the merged content.`

// treeInput is the input of arbor-tree.
type treeInput struct {
	Path  string `json:"path,omitempty" jsonschema:"a folder to start from, e.g. engineering or engineering/billing (default: the whole tree)"`
	Depth int    `json:"depth,omitempty" jsonschema:"how many levels below path to show, 0 for all (default 2)"`
}

const queryDescription = `Answer a question from Arbor's memory without an LLM. Arbor tries, in order: an exact cache of the same question (tier 0), a cache of a near-identical question (tier 1), then a BM25 search that answers directly when one entry is clearly the best match (tier 2, tierName "direct").

Read the result this way:
- needsLLM false and outOfDomain false: answer is the answer, from one entry (its title, summary and best passage, then its path). Prefer it, and cite the path.
- needsLLM true: no single entry stands out (answer just says so); answer from the ranked results yourself, calling arbor-read for the full text of the ones you need.
- outOfDomain true: nothing stored matches (answer says so); tell the user memory has nothing on it rather than guessing from unrelated entries.
- results: the source entries, each with score (normalized BM25 relevance ŝ in 0..1) and lifecycle (importance, maturity, recency and the compound score they are ordered by; entries matching every query word come first).
- reason: why retrieval stopped where it did; tookMs: how long it took.

Filters narrow the search inside the index, so the best matches are the best of what they keep: domain, topic, tags (every one), since/until (when the entry last changed), maturity and minImportance (the lifecycle as of now). sort "recent" or "importance" orders the results by that key instead (ties by relevance). A filtered or sorted question is never answered from, or kept in, the caches.

Works for questions ("how often are failed invoices retried?") and keywords ("invoice retry"), in English, other Latin-script languages, Chinese, Japanese and Korean.`

const searchDescription = `Ranked full-text search over the memory (BM25: titles weigh most, then paths, tags and keywords, then content). Returns raw results best first, each with path, kind (entry, or context for a folder's context.md), title, summary, score (normalized relevance ŝ = s/(1+s), 0..1) and the passage that best matches. Unlike arbor-query it never decides on an answer and never counts as an access; use it to find candidates, to check whether something is already stored before adding it, or to find the exact path for an UPDATE, MERGE or DELETE. Filters (domain, topic, tags, since, until, maturity, minImportance) narrow the search inside the index, so the best results are the best of what they keep; sort "recent" or "importance" orders every match by that key (ties by relevance), e.g. the newest entries about a topic.`

const readDescription = `Read one entry of the memory in full: its markdown as stored (front matter, then the sections Reason, Raw Concept, Narrative, Facts, Snippets), its title, summary, tags, keywords and dates, the entries it relates to (relations) and the entries that link to it (backlinks). Follow relations and backlinks with further arbor-read calls to gather context. An unknown path or a path outside the root is an error that says so.`

const treeDescription = `Show the memory's hierarchy: domains, their topics and subtopics (each with the title of its context.md), and the entries in them with their titles. Start from path to look inside one folder, and use depth to limit how far down it goes (default 2 levels; 0 for everything). Use it to see what the memory covers and where a new entry belongs before curating.`

const curateDescription = `Write to the memory: apply a list of operations in order, each with a required reason (recorded in the entry and in the audit log). You are the curator; no LLM is involved. Every write is atomic and a failed operation changes nothing; the others still apply.

Operation types:
- ADD: create an entry. path is the folder "domain/topic" or "domain/topic/subtopic" (lowercase snake_case; missing folders and their context.md are created) and title names it: {"type":"ADD","path":"engineering/billing","title":"Invoice retry policy","content":{...},"reason":"..."} writes engineering/billing/invoice_retry_policy.md. Fails if the entry exists.
- UPDATE: replace an existing entry (path: the full .md path). createdAt is kept, and relations, snippets and narrative parts missing from the new content are carried over (the result lists them in "carried").
- UPSERT: ADD when missing, UPDATE when present. The safe choice when unsure.
- MERGE: fold the entry at path into mergeTarget: relations, tags, keywords and facts are united, narratives concatenated, the source deleted and every link to it rewritten.
- DELETE: remove the entry at path, or a whole folder when path is a folder and no title is given; result lists entries still linking to what was removed.
- MOVE: move the entry or folder at path to "to" (see arbor-move); links to it are rewritten.

content holds the knowledge: narrative (a string, or an object with structure, dependencies, highlights, rules, examples, diagrams), facts ([{subject, statement, category}]), snippets (code or quotes), rawConcept ({task, changes, files, flow, timestamp, author}: the provenance), relations (paths of related entries), tags, keywords (words people would search for that the text may not contain). summary is one line shown in search results.

Before adding, arbor-search for an existing entry and UPSERT or MERGE instead of duplicating. Before replacing what an entry says, arbor-read it: the server remembers the version you read and writes only if the file still holds it, so a person's edit made since is never overwritten unseen (an operation's "base" names the version itself: the "version" arbor-read returned, or the one a previous operation's result gave). The result has one item per operation (status "success", "failed", or "conflict" when the file changed since the version you read, or since the memory read it, in a way the operation would overwrite: arbor-read it again and retry; the path actually written, a message, and "version", the version written) and a summary of counts; the call is flagged as an error when any operation failed.`

const moveDescription = `Move an entry or a whole folder to another place in the memory, as it is: {"path":"engineering/billing/invoice_retry_policy.md","to":"finance/billing","reason":"..."} moves the entry into finance/billing keeping its file name; a "to" ending in .md gives its new path. A folder moves into "to" when that folder exists, else it is renamed to "to". Every relation and wikilink that named what moved by its path is rewritten in the same step; context.md files, the index and the entries' lifecycle follow. Fails, changing nothing, when the destination exists, the source is missing or a folder would move into itself. The result says where it went ("to").`

// addTools registers the eleven tools on s.srv, six on a read-only engine.
func addTools(s *Server) {
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	addTool(s, &sdk.Tool{Name: ToolQuery, Title: "Query memory", Description: queryDescription, Annotations: readOnly,
		InputSchema: inputSchema[queryInput](limitSchema(20, 5), filtersSchema), OutputSchema: outputSchema[api.QueryResult]()},
		func(ctx context.Context, in queryInput) (api.QueryResult, error) {
			return s.eng.Query(ctx, api.SearchParams{Query: in.Query, Limit: in.Limit, Filters: in.filters()})
		})
	addTool(s, &sdk.Tool{Name: ToolSearch, Title: "Search memory", Description: searchDescription, Annotations: readOnly,
		InputSchema: inputSchema[searchInput](limitSchema(100, 10), filtersSchema), OutputSchema: outputSchema[api.SearchResult]()},
		func(ctx context.Context, in searchInput) (api.SearchResult, error) {
			return s.eng.Search(ctx, api.SearchParams{Query: in.Query, Limit: in.Limit, Filters: in.filters()})
		})
	addTool(s, &sdk.Tool{Name: ToolRead, Title: "Read an entry", Description: readDescription, Annotations: readOnly,
		InputSchema: inputSchema[readInput](nil), OutputSchema: outputSchema[api.ReadResult]()},
		func(ctx context.Context, in readInput) (api.ReadResult, error) {
			res, err := s.eng.Read(ctx, api.ReadParams{Path: in.Path})
			if err != nil {
				return res, fmt.Errorf("%s: %w", in.Path, err)
			}
			if res.Kind == "entry" {
				s.bases.note(sessionOf(ctx), res.Path, res.Version)
			}
			return res, nil
		})
	addTool(s, &sdk.Tool{Name: ToolRecent, Title: "Recently changed entries", Description: recentDescription, Annotations: readOnly,
		InputSchema: inputSchema[recentInput](limitSchema(100, 20)), OutputSchema: outputSchema[api.RecentResult]()},
		func(ctx context.Context, in recentInput) (api.RecentResult, error) {
			return s.eng.Recent(ctx, api.RecentParams{Since: in.Since, Domain: in.Domain, Limit: in.Limit, Archived: in.Archived})
		})
	addTool(s, &sdk.Tool{Name: ToolContext, Title: "Build context around an entry", Description: contextDescription, Annotations: readOnly,
		InputSchema: inputSchema[contextInput](contextSchema), OutputSchema: outputSchema[api.ContextResult]()},
		func(ctx context.Context, in contextInput) (api.ContextResult, error) {
			return s.eng.Context(ctx, api.ContextParams{Path: in.Path, Query: in.Query, Depth: in.Depth, Budget: in.Budget, Archived: in.Archived})
		})
	addTool(s, &sdk.Tool{Name: ToolTree, Title: "Browse the tree", Description: treeDescription, Annotations: readOnly,
		InputSchema: inputSchema[treeInput](depthSchema), OutputSchema: nodeSchema()},
		func(ctx context.Context, in treeInput) (*api.Node, error) {
			return s.eng.Tree(ctx, api.TreeParams{Path: in.Path, Depth: in.Depth})
		})
	if s.eng.ReadOnly() {
		return // a tool that could only fail would cost the agent a call
	}
	addTool(s, &sdk.Tool{Name: ToolCurate, Title: "Curate memory", Description: curateDescription,
		Annotations: &sdk.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)},
		InputSchema: curateSchema(), OutputSchema: outputSchema[api.CurateResult]()},
		func(ctx context.Context, in api.CurateParams) (api.CurateResult, error) {
			ss := sessionOf(ctx)
			in.Operations = s.bases.fill(ss, in.Operations)
			res, err := s.eng.Curate(ctx, in)
			if err == nil {
				s.bases.wrote(ss, in.Operations, res)
			}
			return res, err
		})
	addTool(s, &sdk.Tool{Name: ToolTidy, Title: "Tidy the memory", Description: tidyDescription,
		Annotations: &sdk.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)},
		InputSchema: inputSchema[tidyInput](tidySchema), OutputSchema: tidyOutputSchema()},
		func(ctx context.Context, in tidyInput) (api.TidyResult, error) {
			return s.eng.Tidy(ctx, api.TidyParams{Folder: in.Folder, Kinds: in.Kinds, Apply: in.Apply, Similarity: in.Similarity,
				SplitBytes: in.SplitBytes, StaleDays: in.StaleDays, Crowded: in.Crowded, Limit: in.Limit})
		})
	addTool(s, &sdk.Tool{Name: ToolMove, Title: "Move an entry or folder", Description: moveDescription,
		Annotations:  &sdk.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)},
		InputSchema:  inputSchema[moveInput](func(s *jsonschema.Schema) { s.Properties["to"].Description = moveToDescription }),
		OutputSchema: outputSchema[api.CurateResult]()},
		func(ctx context.Context, in moveInput) (api.CurateResult, error) {
			ss := sessionOf(ctx)
			ops := s.bases.fill(ss, []api.Operation{{Type: api.OpMove, Path: in.Path, To: in.To, Reason: in.Reason}})
			res, err := s.eng.Curate(ctx, api.CurateParams{Operations: ops})
			if err == nil {
				s.bases.wrote(ss, ops, res)
			}
			return res, err
		})
	addIngestTool(s)
	addSyncTool(s)
}

// addTool registers a tool that makes one engine call in its turn (a
// read, beside other reads, when the tool is annotated read-only); the
// entries a curate, a tidy, an ingest or a sync wrote are announced to
// their subscribers. An engine error becomes the tool error the agent
// reads ("arbor-read x.md: not_found: …"): the SDK sends it as a result
// with isError, so a bad request never ends the session. A curate or a
// tidy with a failed operation is a result, not an error, but is flagged
// isError too so that the agent looks.
func addTool[In, Out any](s *Server, tool *sdk.Tool, call func(context.Context, In) (Out, error)) {
	// A tool that only reads may run beside other reads.
	run := s.call
	if tool.Annotations != nil && tool.Annotations.ReadOnlyHint {
		run = s.read
	}
	sdk.AddTool(s.srv, tool, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
		var out Out
		who := callerOf(req)
		err := run(ctx, who, func(ctx context.Context) (err error) {
			out, err = call(withSession(ctx, who.session), in)
			return err
		})
		if err != nil {
			return nil, out, fmt.Errorf("%s: %w", tool.Name, err)
		}
		switch res := any(out).(type) {
		case api.CurateResult:
			s.announce(ctx, curated(res))
			if res.Summary.Failed > 0 {
				return &sdk.CallToolResult{IsError: true}, out, nil
			}
		case api.TidyResult:
			if res.Applied != nil {
				s.announce(ctx, curated(*res.Applied))
				if res.Applied.Summary.Failed > 0 {
					return &sdk.CallToolResult{IsError: true}, out, nil
				}
			}
		case SyncResult:
			s.announce(ctx, res.Changed)
		case api.IngestResult:
			s.announce(ctx, ingested(res))
			if res.Summary.FailedFiles > 0 {
				return &sdk.CallToolResult{IsError: true}, out, nil
			}
		}
		return nil, out, nil
	})
}

// limitSchema returns the edit that bounds "limit" to 1..max with its
// default.
func limitSchema(max, def int) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		l := s.Properties["limit"]
		l.Minimum, l.Maximum = new(float64(1)), new(float64(max))
		l.Default = []byte(fmt.Sprint(def))
	}
}

// contextSchema bounds arbor-context's depth and budget with their defaults.
func contextSchema(s *jsonschema.Schema) {
	d, b := s.Properties["depth"], s.Properties["budget"]
	d.Minimum, d.Maximum = new(float64(0)), new(float64(api.MaxContextDepth))
	d.Default = []byte(fmt.Sprint(api.DefaultContextDepth))
	b.Minimum, b.Maximum = new(float64(api.MinContextBudget)), new(float64(api.MaxContextBudget))
	b.Default = []byte(fmt.Sprint(api.DefaultContextBudget))
}

func depthSchema(s *jsonschema.Schema) {
	d := s.Properties["depth"]
	d.Minimum = new(float64(0))
	d.Default = []byte("2")
}
