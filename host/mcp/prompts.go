package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/core/api"
)

// Prompt names.
const (
	PromptRecall = "arbor-recall"
	PromptRecord = "arbor-record"
	PromptTidy   = "arbor-tidy"
)

// recallEntries is how many of the best matching entries arbor-recall
// embeds.
const recallEntries = 5

// addPrompts registers the prompts: arbor-recall everywhere, and the two
// that write unless the memory is granted read-only.
func addPrompts(s *Server) {
	s.srv.AddPrompt(&sdk.Prompt{
		Name:  PromptRecall,
		Title: "Recall before a task",
		Description: "Before a task: what the memory holds about a topic. Embeds the best matching entries " +
			"and asks the model to use them, cite their paths, and say when memory has nothing.",
		Arguments: []*sdk.PromptArgument{
			{Name: "topic", Title: "Topic", Description: "what to recall, in words or as a question", Required: true},
			{Name: "task", Title: "Task", Description: "the task about to start, so that the recall is aimed at it"},
		},
	}, s.recall)
	if s.eng.ReadOnly() {
		return
	}
	s.srv.AddPrompt(&sdk.Prompt{
		Name:  PromptRecord,
		Title: "Record what was learned",
		Description: "After a task: turn what was learned into arbor-curate operations, checked against what " +
			"the memory already holds so that it updates rather than duplicates.",
		Arguments: []*sdk.PromptArgument{
			{Name: "learned", Title: "What was learned", Description: "the decisions, facts, preferences or procedures worth keeping", Required: true},
			{Name: "source", Title: "Source", Description: "where it comes from (the task, a meeting, a document), kept as the reason"},
		},
	}, s.record)
	s.srv.AddPrompt(&sdk.Prompt{
		Name:  PromptTidy,
		Title: "Tidy a folder",
		Description: "Review one folder of the memory: merge duplicates, update what is stale, fill in missing " +
			"summaries and relations, each change with its reason.",
		Arguments: []*sdk.PromptArgument{
			{Name: "path", Title: "Folder", Description: "the folder to review, e.g. engineering/billing", Required: true},
		},
	}, s.tidy)
}

// argument returns a required argument, or the invalid-params error that
// names it.
func argument(req *sdk.GetPromptRequest, name string) (string, error) {
	v := strings.TrimSpace(req.Params.Arguments[name])
	if v == "" {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: the argument %q is required", req.Params.Name, name)}
	}
	return v, nil
}

func userText(text string) *sdk.PromptMessage {
	return &sdk.PromptMessage{Role: "user", Content: &sdk.TextContent{Text: text}}
}

// recall searches the memory for topic and embeds the best entries as
// they are stored.
func (s *Server) recall(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	topic, err := argument(req, "topic")
	if err != nil {
		return nil, err
	}
	var found []api.ReadResult
	err = s.read(ctx, callerOf(req), func(ctx context.Context) error {
		res, err := s.eng.Search(ctx, api.SearchParams{Query: topic, Limit: recallEntries})
		if err != nil {
			return err
		}
		for _, r := range res.Results {
			e, err := s.eng.Read(ctx, api.ReadParams{Path: r.Path})
			if err != nil {
				return err
			}
			found = append(found, e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", PromptRecall, err)
	}
	var b strings.Builder
	if task := strings.TrimSpace(req.Params.Arguments["task"]); task != "" {
		fmt.Fprintf(&b, "I am about to start this task: %s\n\n", task)
	}
	fmt.Fprintf(&b, "Recall what Arbor's memory holds about: %s\n\n", topic)
	if len(found) == 0 {
		b.WriteString("A search of the memory found no entry about it. Say so rather than guessing, and try arbor-query or arbor-search with other words (synonyms, the names of people, projects or systems involved) before concluding that memory has nothing.")
	} else {
		fmt.Fprintf(&b, "A search of the memory found the %d entries attached below, best first. Use what they say that bears on the topic, cite each entry you use by its path, "+
			"follow their relations with arbor-read when they point to more, and say plainly where they disagree or where memory has nothing. "+
			"Prefer what the memory says over your own assumptions about this user, project or domain.", len(found))
	}
	msgs := []*sdk.PromptMessage{userText(b.String())}
	for _, e := range found {
		msgs = append(msgs, &sdk.PromptMessage{Role: "user", Content: &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{
			URI: EntryURI(e.Path), MIMEType: markdownType, Text: e.Markdown,
		}}})
	}
	return &sdk.GetPromptResult{Description: "what the memory holds about " + topic, Messages: msgs}, nil
}

// record asks for curate operations, with the memory's outline so that
// the model places new entries where they belong.
func (s *Server) record(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	learned, err := argument(req, "learned")
	if err != nil {
		return nil, err
	}
	outline, err := s.outline(ctx, req, "")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", PromptRecord, err)
	}
	reason := "learned during a task"
	if src := strings.TrimSpace(req.Params.Arguments["source"]); src != "" {
		reason = src
	}
	text := fmt.Sprintf(`Record this in Arbor's memory so that a later task can find it:

%s

Steps:
1. Split it into self-contained pieces of knowledge: one entry per decision, fact cluster, preference or procedure.
2. For each piece, call arbor-search with its key words. If an entry already covers it, UPDATE that entry (or MERGE two that overlap) instead of adding a new one.
3. Call arbor-curate once with all the operations. ADD or UPSERT takes a folder path domain/topic (lowercase snake_case) and a title; give each a one-line summary, the knowledge in content (narrative, facts, snippets, tags, and keywords people would search for), relations to related entries, and the reason %q.
4. Read the result: fix any operation that failed or answered "conflict" (read the entry again, then retry).

The memory's folders so far (place new entries in the folder that fits, or start a new one):
%s`, learned, reason, outline)
	return &sdk.GetPromptResult{Description: "curate what was learned", Messages: []*sdk.PromptMessage{userText(text)}}, nil
}

// tidy asks for a review of one folder, with its listing.
func (s *Server) tidy(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	folder, err := argument(req, "path")
	if err != nil {
		return nil, err
	}
	listing, err := s.outline(ctx, req, folder)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", PromptTidy, err)
	}
	text := fmt.Sprintf(`Tidy the folder %[1]s of Arbor's memory. Its content:
%[2]s
Start with arbor-tidy (folder %[1]s, without apply): its plan names near-duplicates, oversized entries, stale entries and crowded topics, with the operations that fix them; apply what you agree with. Then read its entries with arbor-read, and make the changes, in one arbor-curate call where you can, that:
- MERGEs entries that say the same thing (mergeTarget: the better one; links to the merged entry are rewritten),
- UPDATEs entries that are stale, contradict a newer entry, or lack a summary, tags, keywords or relations to the entries they depend on,
- MOVEs entries that belong in another folder (arbor-move does one at a time; links to them are rewritten),
- DELETEs only what is wrong and superseded, never what is merely old.
Give each operation a reason that says what was wrong. Change nothing that is fine, and report what you changed and why.`, folder, listing)
	return &sdk.GetPromptResult{Description: "tidy " + folder, Messages: []*sdk.PromptMessage{userText(text)}}, nil
}

// outline lists the tree below folder ("" for the root) as indented lines:
// the whole folder for tidy, two levels for the root.
func (s *Server) outline(ctx context.Context, req sdk.Request, folder string) (string, error) {
	depth := 0
	if folder == "" {
		depth = 2
	}
	var root *api.Node
	err := s.read(ctx, callerOf(req), func(ctx context.Context) (err error) {
		root, err = s.eng.Tree(ctx, api.TreeParams{Path: folder, Depth: depth})
		return err
	})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var walk func(n *api.Node, indent string)
	walk = func(n *api.Node, indent string) {
		for _, c := range n.Children {
			fmt.Fprintf(&b, "%s- %s", indent, c.Path)
			if c.Title != "" {
				fmt.Fprintf(&b, " (%s)", c.Title)
			}
			b.WriteByte('\n')
			walk(c, indent+"  ")
		}
	}
	walk(root, "")
	if b.Len() == 0 {
		return "(empty)\n", nil
	}
	return b.String(), nil
}

// maxCompletions is the most values one completion/complete answers, as
// the specification allows.
const maxCompletions = 100

// complete answers completion/complete for the arguments that name a
// place in the tree: arbor-tidy's folder and the entry template's path,
// with the folders or entry paths that start with what was typed. Other
// arguments have nothing to offer and get no values.
func (s *Server) complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	res := &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{}}}
	ref, arg := req.Params.Ref, req.Params.Argument
	var folders bool
	switch {
	case ref == nil:
		return res, nil
	case ref.Type == "ref/prompt" && ref.Name == PromptTidy && arg.Name == "path":
		folders = true
	case ref.Type == "ref/resource" && ref.URI == entryTemplate && arg.Name == "path":
	default:
		return res, nil
	}
	var root *api.Node
	err := s.read(ctx, callerOf(req), func(ctx context.Context) (err error) {
		root, err = s.eng.Tree(ctx, api.TreeParams{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("completion/complete: %w", err)
	}
	var walk func(n *api.Node)
	walk = func(n *api.Node) {
		if n.Path != "" && (n.Kind == "entry") != folders && strings.HasPrefix(n.Path, arg.Value) {
			res.Completion.Total++
			if len(res.Completion.Values) < maxCompletions {
				res.Completion.Values = append(res.Completion.Values, n.Path)
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	res.Completion.HasMore = res.Completion.Total > len(res.Completion.Values)
	return res, nil
}
