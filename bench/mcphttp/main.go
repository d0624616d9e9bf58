// Command mcphttp measures tool-call latency of `arbor mcp --http` with
// 1, 4 and 16 clients calling at once on one server, with 1 and 4 readers
// (engine instances answering reads at once), on a generated tree
// of about 10k entries (examples/notes repeated, bench/internal/gentree).
// Each client is the official Go SDK's Streamable HTTP client with its own
// session, calling arbor-query, arbor-search and arbor-read (5:3:2) as fast
// as answers come. It prints a markdown report on stdout.
//
//	go run ./bench/mcphttp -cli bin/arbor > bench/mcphttp/REPORT.md
//
// Latencies are wall times seen by the clients; the server's processor
// time per call (read from /proc, Linux only) is the measure that does not
// depend on what else the machine runs.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arbormem/arbor/bench/internal/gentree"
	"github.com/arbormem/arbor/bench/internal/measure"
	"github.com/arbormem/arbor/host/mcp"
)

func main() {
	n := flag.Int("n", 10000, "entries to generate (approximately: whole copies of the example tree)")
	src := flag.String("src", "examples/notes", "the tree to repeat")
	cli := flag.String("cli", "bin/arbor", "the arbor binary to serve with")
	levels := flag.String("clients", "1,4,16", "numbers of concurrent clients")
	calls := flag.Int("calls", 480, "tool calls per level, shared among its clients")
	readers := flag.String("readers", "1,4", "values of arbor mcp --readers, each its own server over every level")
	flag.Parse()
	if err := run(*n, *src, *cli, *levels, *readers, *calls); err != nil {
		fmt.Fprintln(os.Stderr, "bench/mcphttp:", err)
		os.Exit(1)
	}
}

// call is one tool call of the workload.
type call struct {
	tool string
	args map[string]any
}

// sample is one answered call.
type sample struct {
	tool string
	ms   float64
}

func run(n int, src, cli, levels, readerList string, calls int) error {
	dir, err := os.MkdirTemp("", "arbor-bench-mcphttp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files, size, err := gentree.Repeat(src, dir, n)
	if err != nil {
		return err
	}
	work, err := workload(dir)
	if err != nil {
		return err
	}
	// The index is built and persisted before the server starts, as a
	// memory in use would have it.
	if out, err := exec.Command(cli, "--root", dir, "query", "invoice retry policy").CombinedOutput(); err != nil {
		return fmt.Errorf("warm the index: %v\n%s", err, out)
	}
	fmt.Printf("# MCP over Streamable HTTP: tool-call latency against concurrent clients\n\n")
	fmt.Printf("Command: `go run ./bench/mcphttp -n %d -cli %s -clients %s -readers %s -calls %d` (%s, %s/%s, %d CPUs, %s).\n\n",
		n, cli, levels, readerList, calls, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("Tree: %s repeated, %d markdown files, %.1f MiB, its index built before the server starts. "+
		"One `arbor mcp --http --readers R` process per R, one after another on the same tree; each client is the Go SDK's Streamable HTTP client with its own session, "+
		"calling arbor-query, arbor-search and arbor-read (5:3:2) one after another as fast as the answers come, "+
		"each call about another entry (a query or search for the marker only that entry holds, or its read), so that no "+
		"answer comes from the query cache; %d calls per level shared among its clients, after one "+
		"unmeasured call each. Latency is the wall time a client waits for an answer; server CPU is the processor "+
		"time of the server process (/proc) over the level, per call and per second of the level (how many processors it kept busy), "+
		"and client CPU that of the benchmark process, where the clients run, on the same machine. Server memory is the server's "+
		"resident set (VmRSS) after its levels.\n\n", src, files, float64(size)/(1<<20), calls)

	var taken atomic.Int64
	next := func() call { return work[int(taken.Add(1)-1)%len(work)] }
	var base []float64
	var table, perTool, memory []string
	for _, rf := range strings.Split(readerList, ",") {
		readers, err := strconv.Atoi(strings.TrimSpace(rf))
		if err != nil || readers < 1 {
			return fmt.Errorf("-readers: %q", rf)
		}
		srv, url, err := serve(cli, dir, readers)
		if err != nil {
			return err
		}
		pid := srv.Process.Pid
		stop := func() {
			srv.Process.Signal(syscall.SIGTERM)
			srv.Wait()
		}
		for _, f := range strings.Split(levels, ",") {
			c, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || c < 1 {
				stop()
				return fmt.Errorf("-clients: %q", f)
			}
			samples, wall, cpu, clientCPU, err := level(url, token, pid, c, max(calls/c, 1), next)
			if err != nil {
				stop()
				return err
			}
			var all []float64
			byTool := map[string][]float64{}
			for _, s := range samples {
				all = append(all, s.ms)
				byTool[s.tool] = append(byTool[s.tool], s.ms)
			}
			p50, p95 := measure.Percentile(all, 50), measure.Percentile(all, 95)
			if base == nil {
				base = []float64{p50, p95}
			}
			perCall := func(d time.Duration) string {
				if d < 0 {
					return "n/a"
				}
				return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000/float64(len(all)))
			}
			cores := "n/a"
			if cpu >= 0 {
				cores = fmt.Sprintf("%.2f", cpu.Seconds()/wall.Seconds())
			}
			table = append(table, fmt.Sprintf("| %d | %d | %d | %.1f | %.1f | %.2f×, %.2f× | %.0f | %s | %s | %s |", readers, c, len(all), p50, p95, p50/base[0], p95/base[1],
				float64(len(all))/wall.Seconds(), perCall(cpu), cores, perCall(clientCPU)))
			tools := make([]string, 0, len(byTool))
			for t := range byTool {
				tools = append(tools, t)
			}
			slices.Sort(tools)
			for _, t := range tools {
				perTool = append(perTool, fmt.Sprintf("| %d | %d | %s | %d | %.1f | %.1f |", readers, c, t, len(byTool[t]),
					measure.Percentile(byTool[t], 50), measure.Percentile(byTool[t], 95)))
			}
		}
		memory = append(memory, fmt.Sprintf("| %d | %s |", readers, procRSS(pid)))
		stop()
	}
	fmt.Println("| readers | clients | calls | p50 ms | p95 ms | p50, p95 against the first row | calls/s | server CPU ms/call | server CPU s/s | client CPU ms/call |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Println(strings.Join(table, "\n"))
	fmt.Println("\nServer memory:\n\n| readers | VmRSS MiB |\n|---:|---:|")
	fmt.Println(strings.Join(memory, "\n"))
	fmt.Println("\nBy tool:\n\n| readers | clients | tool | calls | p50 ms | p95 ms |\n|---:|---:|---|---:|---:|---:|")
	fmt.Println(strings.Join(perTool, "\n"))
	return nil
}

const token = "bench-token"

// serve starts `arbor mcp --http --readers readers` on dir and returns it
// with its URL once it listens; its stderr after that goes to ours.
func serve(cli, dir string, readers int) (*exec.Cmd, string, error) {
	srv := exec.Command(cli, "--root", dir, "mcp", "--http", "127.0.0.1:0", "--flush-every", "0", "--readers", strconv.Itoa(readers))
	srv.Env = append(os.Environ(), "ARBOR_MCP_TOKEN="+token)
	stderr, err := srv.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := srv.Start(); err != nil {
		return nil, "", err
	}
	sc := bufio.NewScanner(stderr)
	url := ""
	for url == "" && sc.Scan() {
		if m := regexp.MustCompile(`on (http://\S+) `).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		srv.Process.Kill()
		srv.Wait()
		return nil, "", errors.New("the server did not say where it listens")
	}
	go func() {
		for sc.Scan() {
			fmt.Fprintln(os.Stderr, sc.Text())
		}
	}()
	return srv, url, nil
}

// procRSS is the resident set of process pid in MiB, from /proc, or n/a.
func procRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "n/a"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if kb, err := strconv.Atoi(f[0]); err == nil {
				return fmt.Sprintf("%.0f", float64(kb)/1024)
			}
		}
	}
	return "n/a"
}

// level connects c clients to the server (process pid), has each make k
// calls at once, and returns the samples, the level's wall time, and the
// processor time of the server and of this process (the clients) over it
// (-1 when it cannot be read).
func level(url, token string, pid, c, k int, next func() call) (samples []sample, wall, cpu, clientCPU time.Duration, err error) {
	ctx := context.Background()
	sessions := make([]*sdk.ClientSession, c)
	for i := range sessions {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: fmt.Sprintf("bench-%d", i), Version: "1"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer(token)}}, nil)
		if err != nil {
			return nil, 0, 0, 0, err
		}
		defer cs.Close()
		sessions[i] = cs
		if _, err := callTool(ctx, cs, next()); err != nil {
			return nil, 0, 0, 0, err
		}
	}
	cpu0, self0 := procCPU(pid), measure.CPUTime()
	start := time.Now()
	var mu sync.Mutex
	errs := make(chan error, c)
	var wg sync.WaitGroup
	for _, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range k {
				w := next()
				t0 := time.Now()
				if _, err := callTool(ctx, cs, w); err != nil {
					errs <- err
					return
				}
				ms := float64(time.Since(t0).Microseconds()) / 1000
				mu.Lock()
				samples = append(samples, sample{w.tool, ms})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall = time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return nil, 0, 0, 0, err
	}
	cpu, self := time.Duration(-1), time.Duration(-1)
	if cpu1 := procCPU(pid); cpu0 >= 0 && cpu1 >= 0 {
		cpu = cpu1 - cpu0
	}
	if self1 := measure.CPUTime(); self0 >= 0 && self1 >= 0 {
		self = self1 - self0
	}
	return samples, wall, cpu, self, nil
}

func callTool(ctx context.Context, cs *sdk.ClientSession, w call) (*sdk.CallToolResult, error) {
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: w.tool, Arguments: w.args})
	if err == nil && res.IsError {
		err = fmt.Errorf("%s %v: %v", w.tool, w.args, res.Content)
	}
	return res, err
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// workload is the calls the clients take, each once: for every generated
// entry, in a fixed shuffle, a query or a search for the marker that only
// its copy holds (the word "marker" itself, in every copy, is left out:
// no question asks for a word every entry holds), or a read of it (5:3:2). No question repeats, so none is
// answered from the query cache, as an agent's fresh questions are not.
func workload(dir string) ([]call, error) {
	marker := regexp.MustCompile(`marker (m\d+x\d+)\.`)
	var work []call
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") || strings.Contains(p, "/.arbor") {
			return err
		}
		b, err := os.ReadFile(p)
		m := marker.FindSubmatch(b)
		if err != nil || m == nil {
			return err // context.md files carry no marker
		}
		rel, _ := filepath.Rel(dir, p)
		switch i := len(work) % 10; {
		case i < 5:
			work = append(work, call{mcp.ToolQuery, map[string]any{"query": "where is " + string(m[1]) + "?"}})
		case i < 8:
			work = append(work, call{mcp.ToolSearch, map[string]any{"query": string(m[1])}})
		default:
			work = append(work, call{mcp.ToolRead, map[string]any{"path": filepath.ToSlash(rel)}})
		}
		return nil
	})
	if err != nil || len(work) == 0 {
		return nil, fmt.Errorf("workload: %v (%d calls)", err, len(work))
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(work), func(i, j int) { work[i], work[j] = work[j], work[i] })
	return work, nil
}

// procCPU is the user and system time of process pid from /proc, or -1.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is field 3, utime 14 and stime 15.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return -1
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / ticks
}
