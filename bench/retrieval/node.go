package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// nodeDataset is one dataset's part of a Node script's output.
type nodeDataset struct {
	Build struct {
		Trees   int     `json:"trees"`
		Entries int     `json:"entries"`
		Bytes   int64   `json:"bytes"`
		Ms      float64 `json:"ms"`
		Failed  int     `json:"failed"`
	} `json:"build"`
	LatencyMs       map[string][]float64 `json:"latencyMs"`
	RepeatLatencyMs map[string][]float64 `json:"repeatLatencyMs"`
	Rankings        json.RawMessage      `json:"rankings"`
}

type nodeOutput struct {
	System      string          `json:"system"`
	Version     string          `json:"version"`
	Node        string          `json:"node"`
	Settings    json.RawMessage `json:"settings"`
	Locomo      *nodeDataset    `json:"locomo"`
	LongMemEval *nodeDataset    `json:"longmemeval"`
}

func (d *nodeDataset) buildStats() buildStats {
	return buildStats{Entries: d.Build.Entries, SrcBytes: d.Build.Bytes, Dur: time.Duration(d.Build.Ms * float64(time.Millisecond)), Failed: d.Build.Failed, Trees: d.Build.Trees}
}

func toLatencies(m map[string][]float64) latencies {
	l := latencies{}
	for k, v := range m {
		for _, ms := range v {
			l[k] = append(l[k], time.Duration(ms*float64(time.Millisecond)))
		}
	}
	return l
}

func nodeVersion(node string) string {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// runScript runs a Node script of this folder and decodes its JSON output;
// the script's progress goes to stderr as it comes.
func runScript(c config, script string, extra ...string) (*nodeOutput, error) {
	argv := []string{"bench/retrieval/" + script}
	if c.locomo != "" {
		argv = append(argv, "--locomo", c.locomo)
	}
	if c.lme != "" {
		argv = append(argv, "--longmemeval", c.lme)
	}
	argv = append(argv, extra...)
	cmd := exec.Command(c.node, argv...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("node %s: %w", script, err)
	}
	var out nodeOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("node %s: output: %w", script, err)
	}
	return &out, nil
}

func runNodePeers(c config, rep *report) {
	lmeTurns := "--lme-turns=" + strconv.Itoa(c.lmeTurns)
	context := "--locomo-context=" + strconv.Itoa(c.locomoContext)
	switch {
	case !exists("bench/retrieval/minisearch.mjs"):
		rep.notes = append(rep.notes, "MiniSearch not run: run the harness from the repository root")
	case !exists("node_modules/minisearch"):
		rep.notes = append(rep.notes, "MiniSearch not run: node_modules/minisearch is missing (npm ci)")
	default:
		progress("MiniSearch (node %s)", rep.node)
		out, err := runScript(c, "minisearch.mjs", "--rankings", lmeTurns, context)
		if err != nil {
			rep.notes = append(rep.notes, "MiniSearch failed: "+err.Error())
			break
		}
		rep.miniVersion, rep.miniSettings = out.Version, string(out.Settings)
		if out.Locomo != nil && rep.locomo != nil {
			rep.locomo.mini = out.Locomo
			rep.locomo.rank[sysMini] = decodeTurnRankings(out.Locomo.Rankings)
		}
		if out.LongMemEval != nil && rep.lme != nil {
			rep.lme.mini = out.LongMemEval
			rep.lme.rank[sysMini] = decodeSessionRankings(out.LongMemEval.Rankings)
		}
	}
	if c.noWasm {
		return
	}
	switch {
	case !exists("dist/arbor.wasm"):
		rep.notes = append(rep.notes, "Arbor wasm-in-Node not run: dist/arbor.wasm is missing (./build.sh wasm)")
	default:
		progress("Arbor wasm in Node: %d conversations, %d questions", c.wasmConvs, c.wasmQuestions)
		out, err := runScript(c, "arbor-wasm.mjs", "--conversations", strconv.Itoa(c.wasmConvs), "--questions", strconv.Itoa(c.wasmQuestions), lmeTurns, context)
		if err != nil {
			rep.notes = append(rep.notes, "Arbor wasm-in-Node failed: "+err.Error())
			return
		}
		if out.Locomo != nil && rep.locomo != nil {
			rep.locomo.wasm = out.Locomo
			rk := decodeTurnRankings(out.Locomo.Rankings)
			rep.locomo.rank[sysWasm] = rk
			for k, v := range rk {
				rep.locomo.agreed.add(v, rep.locomo.rank[sysArbor][k])
			}
		}
		if out.LongMemEval != nil && rep.lme != nil {
			rep.lme.wasm = out.LongMemEval
			rk := decodeSessionRankings(out.LongMemEval.Rankings)
			rep.lme.rank[sysWasm] = rk
			for k, v := range rk {
				rep.lme.agreed.add(v, rep.lme.rank[sysArbor][k])
			}
		}
	}
}

func decodeTurnRankings(raw json.RawMessage) map[string][]TurnID {
	var m map[string][]string
	_ = json.Unmarshal(raw, &m)
	out := make(map[string][]TurnID, len(m))
	for k, ids := range m {
		r := make([]TurnID, len(ids))
		for i, s := range ids {
			r[i], _, _ = ParseTurnID(s)
		}
		out[k] = r
	}
	return out
}

func decodeSessionRankings(raw json.RawMessage) map[string][]int {
	var m map[string][]int
	_ = json.Unmarshal(raw, &m)
	return m
}

// agreement counts how many rankings of one system equal another's: in the
// same order, or as the same set of results in any order.
type agreement struct{ same, sameSet, compared int }

func (a *agreement) add(x, y any) {
	a.compared++
	if fmt.Sprint(x) == fmt.Sprint(y) {
		a.same++
	}
	if sortedFields(x) == sortedFields(y) {
		a.sameSet++
	}
}

// sortedFields is the printed ranking with its results sorted.
func sortedFields(x any) string {
	f := strings.Fields(strings.Trim(fmt.Sprint(x), "[]"))
	slices.Sort(f)
	return strings.Join(f, " ")
}
