package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/arbormem/arbor/core/api"
	hostllm "github.com/arbormem/arbor/host/llm"
	"github.com/arbormem/arbor/host/runtime"
)

// noProviderHint says how to turn on tiers 3–4 and curation from files.
const noProviderHint = "No LLM provider is configured, so tiers 3–4 were not tried. Set ARBOR_LLM_PROVIDER\n" +
	"(openai, anthropic, openrouter, groq, ollama, lmstudio, vllm, openai-compatible),\n" +
	"ARBOR_LLM_MODEL and a key, or an \"llm\" section in the config file; see docs/llm.md."

// model returns the configured model client for the memory root, or nil
// when none is configured (tiers 0–2 only). Retries are reported on
// stderr as they happen, since a backoff can take a while.
func (a *app) model(root string) (*hostllm.Client, error) {
	cfg, err := hostllm.Load(root)
	if errors.Is(err, hostllm.ErrNotConfigured) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("LLM configuration: %w", err)
	}
	return hostllm.New(cfg, hostllm.WithRetryHook(func(r hostllm.Retry) {
		why := "backoff"
		if r.RetryAfter {
			why = "as the server asked"
		}
		fmt.Fprintf(a.stderr, "arbor: %s: attempt %d: %s; retrying in %s (%s)\n", cfg.Provider, r.Attempt, r.Reason, r.Wait.Round(1e6), why)
	}))
}

// embedder returns the configured embedding model for the memory root,
// or nil when none is configured (BM25 alone, the default). Retries are
// reported on stderr as the model's are.
func (a *app) embedder(root string) (*hostllm.Embedder, error) {
	cfg, err := hostllm.LoadEmbeddings(root)
	if errors.Is(err, hostllm.ErrNotConfigured) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("embedding configuration: %w", err)
	}
	return hostllm.NewEmbedder(cfg, hostllm.WithRetryHook(func(r hostllm.Retry) {
		fmt.Fprintf(a.stderr, "arbor: embeddings: %s: attempt %d: %s; retrying in %s\n", cfg.Provider, r.Attempt, r.Reason, r.Wait.Round(1e6))
	}))
}

// withModel runs f on an open engine with the configured model (nil when
// none is, or when use is false: then the configuration is not even read,
// so a broken one cannot stop an answer without it), under a context that
// Ctrl-C cancels: a model call in flight is abandoned and its continuation
// cancelled, leaving the tree unchanged.
func (a *app) withModel(use bool, f func(ctx context.Context, eng engine, m *hostllm.Client) error) error {
	var m *hostllm.Client
	if use {
		root, err := a.findRoot()
		if err != nil {
			return err
		}
		if m, err = a.model(root); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(a.ctx, os.Interrupt)
	defer stop()
	// After the first Ctrl-C a second one ends the process as usual.
	context.AfterFunc(ctx, stop)
	return a.withEngine(func(eng engine) error {
		err := f(ctx, eng, m)
		if errors.Is(err, context.Canceled) {
			return errors.New("interrupted: the model call was cancelled and the tree left unchanged")
		}
		return err
	})
}

// queryOne answers one question: through the model when one is configured
// (tiers 3–4 when 0–2 cannot answer), else from tiers 0–2.
func (a *app) queryOne(ctx context.Context, eng engine, m *hostllm.Client, p api.QueryParams) error {
	var raw json.RawMessage
	var err error
	if m != nil {
		p.LLM = true
		raw, err = runtime.DriveWith(ctx, eng, "query", p, m)
	} else {
		raw, err = eng.CallMethod(ctx, "query", p.SearchParams)
	}
	if err != nil {
		return err
	}
	if a.json {
		return printJSON(a.stdout, raw)
	}
	var res api.QueryResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("query: decode result: %w", err)
	}
	printQuery(a.stdout, a.p, res, p.Sort)
	switch {
	case res.LLM != nil:
		if !res.NeedsLLM {
			fmt.Fprintf(a.stdout, "\n%s\n", res.Reason)
		}
		printTrace(a.stdout, *res.LLM, m)
	case m == nil && res.NeedsLLM:
		fmt.Fprintf(a.stdout, "\n%s\n", noProviderHint)
	}
	return nil
}

// printTrace lists the model calls with their tokens and latency.
func printTrace(w io.Writer, t api.LLMTrace, m *hostllm.Client) {
	var total float64
	for _, s := range t.Steps {
		total += s.LatencyMs
	}
	calls := "calls"
	if len(t.Steps) == 1 {
		calls = "call"
	}
	est := ""
	if t.Estimated {
		est = " (estimated where the provider gave no counts)"
	}
	who := ""
	if m != nil {
		who = fmt.Sprintf(" to %s %s", m.Config().Provider, m.Config().Model)
	}
	fmt.Fprintf(w, "\nmodel: %d %s%s · %d tokens in, %d out%s · %s\n", len(t.Steps), calls, who, t.InputTokens, t.OutputTokens, est, ms(total))
	for _, s := range t.Steps {
		line := fmt.Sprintf("  %2d. %-8s %6d in %5d out  %s", s.Step, s.Purpose, s.InputTokens, s.OutputTokens, ms(s.LatencyMs))
		if len(s.ToolCalls) > 0 {
			line += "  → " + strings.Join(s.ToolCalls, ", ")
		}
		if s.Error != "" {
			line += "  ✗ " + oneLine(s.Error, 120)
		}
		fmt.Fprintln(w, line)
	}
}

// curateFrom turns raw files into entries through the model.
func (a *app) curateFrom(names []string, instruction string, budget int) error {
	if len(names) == 0 {
		return usageErr("curate --from: name the files to curate from")
	}
	var files []api.SourceFile
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return fmt.Errorf("curate --from: %w", err)
		}
		// The engine detects the encoding (api.DecodeText).
		files = append(files, api.SourceFile{Name: filepath.ToSlash(filepath.Clean(n)), Data: data})
	}
	return a.withModel(true, func(ctx context.Context, eng engine, m *hostllm.Client) error {
		if m == nil {
			return errors.New("curate --from needs an LLM provider.\n" + strings.Replace(noProviderHint, "so tiers 3–4 were not tried", "and curating from raw files needs one", 1))
		}
		p := api.CurateFromParams{Files: files, Instruction: instruction, TokenBudget: budget}
		raw, err := runtime.DriveWith(ctx, eng, "curateFrom", p, m)
		if err != nil {
			return fmt.Errorf("curate --from: %w", err)
		}
		var res api.CurateFromResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("curate --from: decode result: %w", err)
		}
		if a.json {
			if err := printJSON(a.stdout, raw); err != nil {
				return err
			}
		} else {
			printCurateFrom(a.stdout, a.p, res, m)
		}
		if res.Summary.Failed > 0 {
			return fmt.Errorf("%d of %d operations failed when written", res.Summary.Failed, len(res.Applied))
		}
		return nil
	})
}

func printCurateFrom(w io.Writer, p palette, res api.CurateFromResult, m *hostllm.Client) {
	for _, f := range res.Files {
		line := fmt.Sprintf("read %s: %d characters", f.Name, f.Chars)
		if f.DroppedLines > 0 {
			line += fmt.Sprintf(", %d code lines past the limit left out", f.DroppedLines)
		}
		fmt.Fprintln(w, line)
	}
	if c := res.Compaction; c != nil {
		fmt.Fprintf(w, "compacted %d → %d characters (pass %d)\n", c.InputChars, c.OutputChars, c.Pass)
		for _, n := range c.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	if len(res.Attempts) > 0 {
		fmt.Fprintln(w, "\nproposed by the model:")
		for _, at := range res.Attempts {
			mark := "✓"
			if at.Status != api.StatusSuccess {
				mark = "✗"
			}
			fmt.Fprintf(w, "  turn %d %s %-6s %s — %s\n", at.Turn, mark, at.Type, at.Path, at.Message)
		}
	}
	fmt.Fprintln(w, "\nwritten:")
	printCurate(w, p, api.CurateResult{Applied: res.Applied, Summary: res.Summary})
	if res.Message != "" {
		fmt.Fprintf(w, "\nmodel: %s\n", oneLine(res.Message, 300))
	}
	fmt.Fprintf(w, "%s · %s\n", res.Reason, ms(res.TookMs))
	printTrace(w, res.LLM, m)
}
