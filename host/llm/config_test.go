package llm_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hostllm "github.com/arbormem/arbor/host/llm"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFromEnvironment(t *testing.T) {
	c, err := hostllm.LoadFrom(env(map[string]string{
		"ARBOR_LLM_PROVIDER": "OpenRouter", "ARBOR_LLM_MODEL": "meta/llama", "OPENROUTER_API_KEY": "sk-or-1",
		"ARBOR_LLM_TIMEOUT": "45", "ARBOR_LLM_MAX_RETRIES": "5",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := hostllm.Config{Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1", Model: "meta/llama",
		APIKey: "sk-or-1", KeySource: "OPENROUTER_API_KEY", Timeout: 45 * time.Second, MaxRetries: 5}
	if fmt.Sprint(c) != fmt.Sprint(want) || c.APIKey.Reveal() != "sk-or-1" || c.Timeout != want.Timeout || c.MaxRetries != 5 {
		t.Errorf("config = %+v, want %+v", c, want)
	}
}

func TestLoadDefaults(t *testing.T) {
	c, err := hostllm.LoadFrom(env(map[string]string{"ARBOR_LLM_PROVIDER": "ollama", "ARBOR_LLM_MODEL": "llama3.2"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "http://localhost:11434/v1" || c.APIKey != "" || c.Timeout != hostllm.DefaultTimeout || c.MaxRetries != hostllm.DefaultMaxRetries {
		t.Errorf("config = %+v", c)
	}
	// An explicit 0 turns retries off (a zero Config field means the default).
	c, _ = hostllm.LoadFrom(env(map[string]string{"ARBOR_LLM_PROVIDER": "ollama", "ARBOR_LLM_MODEL": "m", "ARBOR_LLM_MAX_RETRIES": "0"}))
	if c.MaxRetries >= 0 {
		t.Errorf("MaxRetries = %d, want negative (none)", c.MaxRetries)
	}
}

func TestArborKeyWinsOverProviderKey(t *testing.T) {
	c, err := hostllm.LoadFrom(env(map[string]string{
		"ARBOR_LLM_PROVIDER": "anthropic", "ARBOR_LLM_MODEL": "claude", "ARBOR_LLM_API_KEY": "k-arbor", "ANTHROPIC_API_KEY": "k-anthropic",
	}))
	if err != nil || c.APIKey.Reveal() != "k-arbor" || c.KeySource != "ARBOR_LLM_API_KEY" {
		t.Fatalf("config %+v, err %v", c, err)
	}
}

func TestLayersOverrideFieldByField(t *testing.T) {
	user := writeConfig(t, `{"llm":{"provider":"groq","model":"llama-70b","api_key_env":"MY_GROQ","timeout":"30s","headers":{"X-A":"1"}}}`)
	root := writeConfig(t, `{"llm":{"model":"llama-8b","headers":{"X-B":"2"}},"other":{"ignored":true}}`)
	c, err := hostllm.LoadFrom(env(map[string]string{"MY_GROQ": "gsk-1", "ARBOR_LLM_TIMEOUT": "2m"}), user, root, filepath.Join(t.TempDir(), "missing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider != "groq" || c.Model != "llama-8b" || c.APIKey.Reveal() != "gsk-1" || c.KeySource != "MY_GROQ" ||
		c.Timeout != 2*time.Minute || c.Headers["X-A"] != "1" || c.Headers["X-B"] != "2" || c.BaseURL != "https://api.groq.com/openai/v1" {
		t.Errorf("config = %+v", c)
	}
}

// TestAnotherProviderStartsAfresh: the user's model and URL for one
// provider never leak into another named above it.
func TestAnotherProviderStartsAfresh(t *testing.T) {
	user := writeConfig(t, `{"llm":{"provider":"openai-compatible","base_url":"http://10.0.0.5:9000/v1","model":"local-model","api_key":"k-local"}}`)
	_, err := hostllm.LoadFrom(env(map[string]string{"ARBOR_LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "k-a"}), user)
	if err == nil || !strings.Contains(err.Error(), "needs a model") {
		t.Fatalf("err = %v, want a missing model", err)
	}
	c, err := hostllm.LoadFrom(env(map[string]string{"ARBOR_LLM_PROVIDER": "anthropic", "ARBOR_LLM_MODEL": "claude", "ANTHROPIC_API_KEY": "k-a"}), user)
	if err != nil || c.BaseURL != "https://api.anthropic.com" || c.APIKey.Reveal() != "k-a" {
		t.Fatalf("config %+v, err %v", c, err)
	}
}

func TestNotConfigured(t *testing.T) {
	user := writeConfig(t, `{"llm":{"provider":"ollama","model":"m"}}`)
	for name, getenv := range map[string]func(string) string{
		"nothing":       env(nil),
		"only a key":    env(map[string]string{"OPENAI_API_KEY": "sk"}),
		"provider none": env(map[string]string{"ARBOR_LLM_PROVIDER": "none"}),
	} {
		files := []string{}
		if name == "provider none" {
			files = append(files, user)
		}
		if _, err := hostllm.LoadFrom(getenv, files...); !errors.Is(err, hostllm.ErrNotConfigured) {
			t.Errorf("%s: err = %v, want ErrNotConfigured", name, err)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name  string
		env   map[string]string
		file  string
		wants string
	}{
		{"unknown provider", map[string]string{"ARBOR_LLM_PROVIDER": "gpt"}, "", `unknown LLM provider "gpt"`},
		{"no model", map[string]string{"ARBOR_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k"}, "", "ARBOR_LLM_MODEL"},
		{"no key", map[string]string{"ARBOR_LLM_PROVIDER": "openai", "ARBOR_LLM_MODEL": "m"}, "", "OPENAI_API_KEY"},
		{"no base URL", map[string]string{"ARBOR_LLM_PROVIDER": "openai-compatible", "ARBOR_LLM_MODEL": "m"}, "", "ARBOR_LLM_BASE_URL"},
		{"bad base URL", map[string]string{"ARBOR_LLM_PROVIDER": "vllm", "ARBOR_LLM_MODEL": "m", "ARBOR_LLM_BASE_URL": "localhost:8000"}, "", "not an http(s) URL"},
		{"bad timeout", map[string]string{"ARBOR_LLM_TIMEOUT": "soon"}, "", "ARBOR_LLM_TIMEOUT"},
		{"bad retries", map[string]string{"ARBOR_LLM_MAX_RETRIES": "many"}, "", "ARBOR_LLM_MAX_RETRIES"},
		{"misspelt key", nil, `{"llm":{"provider":"ollama","modle":"m"}}`, `unknown field "modle"`},
		{"not JSON", nil, `{"llm":`, "config "},
		{"both keys", nil, `{"llm":{"provider":"groq","api_key":"a","api_key_env":"B"}}`, "not both"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var files []string
			if tc.file != "" {
				files = append(files, writeConfig(t, tc.file))
			}
			_, err := hostllm.LoadFrom(env(tc.env), files...)
			if err == nil || !strings.Contains(err.Error(), tc.wants) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.wants)
			}
		})
	}
}

func TestLoadReadsUserAndRootFiles(t *testing.T) {
	xdg, root := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("HOME", t.TempDir())
	for _, k := range []string{"ARBOR_LLM_PROVIDER", "ARBOR_LLM_MODEL", "ARBOR_LLM_BASE_URL", "ARBOR_LLM_API_KEY", "ARBOR_LLM_TIMEOUT", "ARBOR_LLM_MAX_RETRIES"} {
		t.Setenv(k, "")
	}
	write := func(p, body string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if p := hostllm.UserConfigPath(); p != filepath.Join(xdg, "arbor", "config.json") {
		t.Fatalf("UserConfigPath = %s", p)
	}
	write(hostllm.UserConfigPath(), `{"llm":{"provider":"lmstudio","model":"qwen"}}`)
	write(hostllm.RootConfigPath(root), `{"llm":{"model":"qwen-coder"}}`)
	c, err := hostllm.Load(root)
	if err != nil || c.Provider != "lmstudio" || c.Model != "qwen-coder" || c.BaseURL != "http://localhost:1234/v1" {
		t.Fatalf("config %+v, err %v", c, err)
	}
	t.Setenv("ARBOR_LLM_MODEL", "from-env")
	if c, _ := hostllm.Load(root); c.Model != "from-env" {
		t.Errorf("model %q: the environment wins", c.Model)
	}
}

func TestKeyNeverPrints(t *testing.T) {
	c := hostllm.Config{Provider: "openai", Model: "m", BaseURL: "https://api.openai.com/v1", APIKey: "sk-secret-999", KeySource: "OPENAI_API_KEY"}
	js, _ := json.Marshal(c)
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprintf("%s", c.APIKey), fmt.Sprintf("%q", c.APIKey), string(js)} {
		if strings.Contains(s, "sk-secret-999") {
			t.Errorf("the key printed: %s", s)
		}
	}
	if s := c.String(); s != "openai m at https://api.openai.com/v1, key from OPENAI_API_KEY" {
		t.Errorf("String() = %q", s)
	}
	c.BaseURL = "https://user:hunter2@proxy.example/v1"
	if s := c.String(); strings.Contains(s, "hunter2") {
		t.Errorf("String() = %q", s)
	}
}
