package prompt

import (
	"encoding/json"

	"github.com/arbormem/arbor/core/api"
)

// Tool names the model may call.
const (
	ToolSearch    = "search_knowledge"
	ToolRead      = "read_entry"
	ToolList      = "list_tree"
	ToolRelations = "follow_relations"
	ToolCurate    = "curate"
)

// Limits of the tools, so that one call cannot flood the model's context.
const (
	SearchDefault = 5
	SearchMax     = 20
	// ReadMaxChars is the paper's maximum content length per document
	// (Table 7): longer entries are cut, and the model is told so.
	ReadMaxChars = 8000
	// ListMaxLines bounds list_tree, as the paper bounds the tree listing
	// injected into prompts (200 entries).
	ListMaxLines = 200
)

// Every schema sets additionalProperties false: a model that invents an
// argument is told so instead of having it silently ignored.
var (
	searchTool = api.Tool{Name: ToolSearch,
		Description: "Full-text search over the knowledge base (BM25 over titles, paths and content). Returns up to limit entries, best first, with path, title, score (0-1) and the best-matching excerpt.",
		Parameters: json.RawMessage(`{"type":"object","properties":{
  "query":{"type":"string","minLength":1,"description":"words to search for"},
  "limit":{"type":"integer","minimum":1,"maximum":20,"default":5,"description":"how many results"}},
 "required":["query"],"additionalProperties":false}`)}
	readTool = api.Tool{Name: ToolRead,
		Description: "Read one entry (or context.md) in full: its markdown, with the paths it links to and the paths linking to it. Entries longer than 8,000 characters are cut.",
		Parameters: json.RawMessage(`{"type":"object","properties":{
  "path":{"type":"string","minLength":1,"description":"the entry path, e.g. engineering/billing/invoice_retry_policy.md"}},
 "required":["path"],"additionalProperties":false}`)}
	listTool = api.Tool{Name: ToolList,
		Description: "List the folders and entries below a folder (the whole tree by default), with titles, at most 200 lines.",
		Parameters: json.RawMessage(`{"type":"object","properties":{
  "path":{"type":"string","description":"a folder, e.g. engineering or engineering/billing; empty for the root"},
  "depth":{"type":"integer","minimum":1,"maximum":4,"description":"how many levels to show; all by default"}},
 "additionalProperties":false}`)}
	relationsTool = api.Tool{Name: ToolRelations,
		Description: "The relations of an entry: the entries it links to (forward) and the entries that link to it (backward), with titles.",
		Parameters: json.RawMessage(`{"type":"object","properties":{
  "path":{"type":"string","minLength":1,"description":"the entry path"},
  "direction":{"type":"string","enum":["forward","backward","both"],"default":"both"}},
 "required":["path"],"additionalProperties":false}`)}
	curateTool = api.Tool{Name: ToolCurate,
		Description: "Apply curate operations to the knowledge base, in order. Answers with the status and message of each operation; a failed operation changed nothing and may be fixed and sent again.",
		Parameters: json.RawMessage(`{"type":"object","properties":{
  "operations":{"type":"array","minItems":1,"items":{"type":"object","properties":{
    "type":{"type":"string","enum":["ADD","UPDATE","UPSERT","MERGE","DELETE"]},
    "path":{"type":"string","description":"folder domain/topic[/subtopic], or a full entry path ending in .md"},
    "title":{"type":"string"},
    "summary":{"type":"string","description":"one line"},
    "content":{"type":"object","properties":{
      "rawConcept":{"type":"object","properties":{"task":{"type":"string"},"changes":{"type":"string"},"files":{"type":"array","items":{"type":"string"}},"flow":{"type":"string"},"timestamp":{"type":"string"},"author":{"type":"string"}}},
      "narrative":{"oneOf":[{"type":"string"},{"type":"object","properties":{"structure":{"type":"string"},"dependencies":{"type":"string"},"highlights":{"type":"string"},"rules":{"type":"string"},"examples":{"type":"string"},"diagrams":{"type":"string"}}}]},
      "facts":{"type":"array","items":{"type":"object","properties":{"subject":{"type":"string"},"statement":{"type":"string"},"category":{"type":"string"}},"required":["statement"]}},
      "snippets":{"type":"array","items":{"type":"string"}},
      "relations":{"type":"array","items":{"type":"string"},"description":"entry paths this entry depends on"},
      "tags":{"type":"array","items":{"type":"string"}},
      "keywords":{"type":"array","items":{"type":"string"}}}},
    "reason":{"type":"string","minLength":1,"description":"why this operation is made"},
    "mergeTarget":{"type":"string","description":"MERGE only: the entry that survives"}},
   "required":["type","path","reason"]}}},
 "required":["operations"],"additionalProperties":false}`)}
)

// QueryTools are the tools of the agentic loop (tier 4).
func QueryTools() []api.Tool { return []api.Tool{searchTool, readTool, listTool, relationsTool} }

// CurateTools are the tools of curation: curate, and the read-only tools
// that let the model find what already exists before adding.
func CurateTools() []api.Tool { return []api.Tool{curateTool, searchTool, readTool, listTool} }
