package llmtest_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/arbormem/arbor/host/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite tests/llm/scripts/shapes.golden.json from this server")

var scripts = filepath.Join("..", "..", "..", "tests", "llm", "scripts")

// answer is what a client sees of one scripted step.
type answer struct {
	Status     int             `json:"status"`
	RetryAfter string          `json:"retry_after,omitempty"`
	JSON       json.RawMessage `json:"json,omitempty"`
	Text       string          `json:"text,omitempty"`
}

// play sends one request per step to path and returns what came back.
func play(t *testing.T, steps []llmtest.Step, path string) []answer {
	t.Helper()
	srv := llmtest.New(steps)
	defer srv.Close()
	var out []answer
	for range steps {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		resp.Body.Close()
		a := answer{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
		var v any
		if json.Unmarshal(body.Bytes(), &v) == nil {
			a.JSON, _ = json.Marshal(v) // sorted keys: comparable with the Node server's
		} else {
			a.Text = body.String()
		}
		out = append(out, a)
	}
	return out
}

// TestShapes: the Go server answers the shared script exactly as the
// golden file says, which the Node server's test checks too, so that both
// servers speak one format.
func TestShapes(t *testing.T) {
	steps, err := llmtest.LoadScript(filepath.Join(scripts, "shapes.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]answer{
		"openai":    play(t, steps, "/v1/chat/completions"),
		"anthropic": play(t, steps, "/v1/messages"),
	}
	golden := filepath.Join(scripts, "shapes.golden.json")
	if *update {
		b, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]answer
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	for kind := range want {
		for i := range want[kind] {
			w, g := want[kind][i], got[kind][i]
			if w.Status != g.Status || w.RetryAfter != g.RetryAfter || w.Text != g.Text || !sameJSON(w.JSON, g.JSON) {
				t.Errorf("%s step %d:\n got %+v %s\nwant %+v %s", kind, i, g, g.JSON, w, w.JSON)
			}
		}
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	json.Unmarshal(a, &x)
	json.Unmarshal(b, &y)
	return reflect.DeepEqual(x, y)
}

func TestRecordsRequestsAndRefusesKeys(t *testing.T) {
	srv := llmtest.New([]llmtest.Step{{Reply: &llmtest.Reply{Content: "hi"}}})
	defer srv.Close()
	srv.RequireKey("k")
	post := func(key string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(`{"n":1}`))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if post("wrong") != 401 || post("k") != 200 || post("k") != 418 {
		t.Fatal("want 401 for a wrong key, 200 for the step, 418 when the script has run out")
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Step != -1 || reqs[1].Step != 0 || reqs[2].Step != -1 || string(reqs[1].Body) != `{"n":1}` {
		t.Fatalf("requests = %+v", reqs)
	}
	// A CORS preflight is answered and not recorded.
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/v1/chat/completions", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "*" || len(srv.Requests()) != 3 {
		t.Fatalf("preflight: %v %v", resp, err)
	}
	resp.Body.Close()
	// A browser's preflight for a keyed call: Authorization must be named, "*" does not cover it.
	req, _ = http.NewRequest(http.MethodOptions, srv.URL+"/v1/chat/completions", nil)
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.Header.Get("Access-Control-Allow-Headers") != "authorization,content-type" {
		t.Fatalf("keyed preflight: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestParseScriptRefusesMistakes(t *testing.T) {
	for _, s := range []string{`{}`, `[{"reply":{"content":"x"},"delay":5}]`, `[{"delay_ms":5}]`, `[{"reply":{"contnet":"x"}}]`} {
		if _, err := llmtest.ParseScript([]byte(s)); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
}
