package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Wire formats.
const (
	FormatOpenAI    = "openai"    // chat completions
	FormatAnthropic = "anthropic" // the Messages API
)

// Defaults of a Config's zero fields.
const (
	DefaultTimeout    = 120 * time.Second
	DefaultMaxRetries = 3
)

// Config says which model to call and how.
type Config struct {
	// Provider is a name from Providers.
	Provider string
	// BaseURL is the API's base: for OpenAI-compatible providers the URL
	// that "/chat/completions" is appended to (ending in /v1), for
	// Anthropic the one "/v1/messages" is appended to. Empty: the
	// provider's known URL.
	BaseURL string
	Model   string
	APIKey  Secret
	// KeySource names where APIKey came from (an environment variable or
	// a file), for messages about a refused key.
	KeySource string
	// Timeout bounds one HTTP attempt. Zero: DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a 429, a 5xx, a timeout or a broken
	// connection is retried. Zero: DefaultMaxRetries; negative: never.
	MaxRetries int
	// Headers are sent with every request (OpenRouter's HTTP-Referer and
	// X-Title, a proxy's own headers).
	Headers map[string]string
}

// ProviderInfo describes one provider name.
type ProviderInfo struct {
	Format  string
	BaseURL string // empty: the configuration must give one
	KeyEnv  string // the provider's usual key variable, the fallback for ARBOR_LLM_API_KEY
	// NeedsKey is false for servers on the user's own machine.
	NeedsKey bool
}

// Providers are the provider names a Config may use.
var Providers = map[string]ProviderInfo{
	"openai":            {FormatOpenAI, "https://api.openai.com/v1", "OPENAI_API_KEY", true},
	"openrouter":        {FormatOpenAI, "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", true},
	"groq":              {FormatOpenAI, "https://api.groq.com/openai/v1", "GROQ_API_KEY", true},
	"ollama":            {FormatOpenAI, "http://localhost:11434/v1", "", false},
	"lmstudio":          {FormatOpenAI, "http://localhost:1234/v1", "", false},
	"vllm":              {FormatOpenAI, "http://localhost:8000/v1", "", false},
	"openai-compatible": {FormatOpenAI, "", "", false},
	"anthropic":         {FormatAnthropic, "https://api.anthropic.com", "ANTHROPIC_API_KEY", true},
}

// providerNames lists Providers, sorted, for messages.
func providerNames() string {
	names := make([]string, 0, len(Providers))
	for n := range Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Secret is an API key. It prints as "[redacted]" in every format and in
// JSON, so that a Config can be logged; use Reveal to send it.
type Secret string

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString keeps %#v from printing the key.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// MarshalJSON keeps encoding/json from printing the key.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Reveal returns the key itself.
func (s Secret) Reveal() string { return string(s) }

// String describes the configuration without its key (nor a password in
// the base URL).
func (c Config) String() string {
	base := c.BaseURL
	if u, err := url.Parse(base); err == nil {
		base = u.Redacted()
	}
	s := fmt.Sprintf("%s %s at %s", c.Provider, c.Model, base)
	switch {
	case c.APIKey != "" && c.KeySource != "":
		s += ", key from " + c.KeySource
	case c.APIKey != "":
		s += ", key set"
	default:
		s += ", no key"
	}
	return s
}

// ErrNotConfigured is returned by Load when no provider is configured: the
// engine then answers from tiers 0–2 only.
var ErrNotConfigured = errors.New("no LLM provider configured")

// Environment variables read by Load.
const (
	EnvProvider   = "ARBOR_LLM_PROVIDER"
	EnvBaseURL    = "ARBOR_LLM_BASE_URL"
	EnvModel      = "ARBOR_LLM_MODEL"
	EnvAPIKey     = "ARBOR_LLM_API_KEY"
	EnvTimeout    = "ARBOR_LLM_TIMEOUT"
	EnvMaxRetries = "ARBOR_LLM_MAX_RETRIES"
)

// UserConfigPath is the user's config file: os.UserConfigDir()/arbor/config.json
// ($XDG_CONFIG_HOME/arbor/config.json or ~/.config/arbor/config.json on
// Linux). Empty when there is no such folder.
func UserConfigPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "arbor", "config.json")
}

// RootConfigPath is a memory root's own config file, which overrides the
// user's: ROOT/.arbor/config.json.
func RootConfigPath(root string) string {
	return filepath.Join(root, ".arbor", "config.json")
}

// section is one object of the config file and its environment
// variables: "llm" for the chat model, "embeddings" for the embedding
// model (embed.go).
type section struct {
	name string
	// the environment variables of provider, base URL, model, key,
	// timeout and retries
	provider, baseURL, model, key, timeout, retries string
	// defaults of Timeout and MaxRetries
	defTimeout time.Duration
	defRetries int
}

var llmSection = section{"llm", EnvProvider, EnvBaseURL, EnvModel, EnvAPIKey, EnvTimeout, EnvMaxRetries, DefaultTimeout, DefaultMaxRetries}

// Load reads the configuration for the memory root (empty: none): the
// user's config file, then the root's, then the environment, each
// overriding the one before field by field. A layer naming another
// provider than the layers before it starts afresh, so that one provider's
// URL or model never carries over to another. It returns ErrNotConfigured
// when no layer names a provider, or when ARBOR_LLM_PROVIDER is "none".
func Load(root string) (Config, error) {
	files := []string{UserConfigPath()}
	if root != "" {
		files = append(files, RootConfigPath(root))
	}
	return LoadFrom(os.Getenv, files...)
}

// LoadFrom is Load with the environment read through getenv and the given
// config files, lowest precedence first; missing files are skipped.
func LoadFrom(getenv func(string) string, files ...string) (Config, error) {
	return loadSection(llmSection, getenv, files)
}

func loadSection(sec section, getenv func(string) string, files []string) (Config, error) {
	var acc layer
	for _, f := range files {
		if f == "" {
			continue
		}
		l, err := readFileLayer(f, getenv, sec)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Config{}, err
		}
		acc.override(l)
	}
	env, err := envLayer(getenv, sec)
	if err != nil {
		return Config{}, err
	}
	acc.override(env)
	return acc.config(getenv, sec)
}

// layer is what one source sets; empty fields are unset.
type layer struct {
	provider   string
	baseURL    string
	model      string
	key        Secret
	keySource  string
	timeout    time.Duration
	maxRetries *int
	headers    map[string]string
}

func (acc *layer) override(l layer) {
	if l.provider != "" && l.provider != acc.provider {
		*acc = layer{provider: l.provider}
	}
	if l.baseURL != "" {
		acc.baseURL = l.baseURL
	}
	if l.model != "" {
		acc.model = l.model
	}
	if l.key != "" {
		acc.key, acc.keySource = l.key, l.keySource
	}
	if l.timeout != 0 {
		acc.timeout = l.timeout
	}
	if l.maxRetries != nil {
		acc.maxRetries = l.maxRetries
	}
	for k, v := range l.headers {
		if acc.headers == nil {
			acc.headers = map[string]string{}
		}
		acc.headers[k] = v
	}
}

// fileConfig is the "llm" (or "embeddings") object of a config file.
type fileConfig struct {
	Provider   string            `json:"provider"`
	BaseURL    string            `json:"base_url"`
	Model      string            `json:"model"`
	APIKey     string            `json:"api_key"`
	APIKeyEnv  string            `json:"api_key_env"`
	Timeout    string            `json:"timeout"`
	MaxRetries *int              `json:"max_retries"`
	Headers    map[string]string `json:"headers"`
}

func readFileLayer(path string, getenv func(string) string, sec section) (layer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return layer{}, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return layer{}, fmt.Errorf("config %s: %w", path, err)
	}
	raw, ok := top[sec.name]
	if !ok {
		return layer{}, nil
	}
	var fc fileConfig
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields() // a misspelt key would otherwise be ignored silently
	if err := dec.Decode(&fc); err != nil {
		return layer{}, fmt.Errorf("config %s: %s: %w", path, sec.name, err)
	}
	l := layer{
		provider:   strings.ToLower(strings.TrimSpace(fc.Provider)),
		baseURL:    strings.TrimSpace(fc.BaseURL),
		model:      strings.TrimSpace(fc.Model),
		maxRetries: fc.MaxRetries,
		headers:    fc.Headers,
	}
	switch {
	case fc.APIKey != "" && fc.APIKeyEnv != "":
		return layer{}, fmt.Errorf("config %s: %s: give api_key or api_key_env, not both", path, sec.name)
	case fc.APIKey != "":
		l.key, l.keySource = Secret(fc.APIKey), path
	case fc.APIKeyEnv != "":
		if v := getenv(fc.APIKeyEnv); v != "" {
			l.key, l.keySource = Secret(v), fc.APIKeyEnv
		}
	}
	if fc.Timeout != "" {
		if l.timeout, err = parseTimeout(fc.Timeout); err != nil {
			return layer{}, fmt.Errorf("config %s: %s: timeout: %w", path, sec.name, err)
		}
	}
	return l, nil
}

func envLayer(getenv func(string) string, sec section) (layer, error) {
	l := layer{
		provider: strings.ToLower(strings.TrimSpace(getenv(sec.provider))),
		baseURL:  strings.TrimSpace(getenv(sec.baseURL)),
		model:    strings.TrimSpace(getenv(sec.model)),
	}
	if v := getenv(sec.key); v != "" {
		l.key, l.keySource = Secret(v), sec.key
	}
	if v := getenv(sec.timeout); v != "" {
		t, err := parseTimeout(v)
		if err != nil {
			return layer{}, fmt.Errorf("%s: %w", sec.timeout, err)
		}
		l.timeout = t
	}
	if v := getenv(sec.retries); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return layer{}, fmt.Errorf("%s: %q is not a whole number", sec.retries, v)
		}
		l.maxRetries = &n
	}
	return l, nil
}

// parseTimeout reads "90s", "2m" or a number of seconds.
func parseTimeout(s string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		s = fmt.Sprintf("%gs", n)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration (e.g. 90s, 2m)", s)
	}
	return d, nil
}

// config checks the merged layers and fills in the provider's defaults.
func (acc layer) config(getenv func(string) string, sec section) (Config, error) {
	if acc.provider == "" || acc.provider == "none" {
		return Config{}, ErrNotConfigured
	}
	info, ok := Providers[acc.provider]
	if !ok {
		return Config{}, fmt.Errorf("unknown LLM provider %q (known: %s)", acc.provider, providerNames())
	}
	c := Config{
		Provider:  acc.provider,
		BaseURL:   acc.baseURL,
		Model:     acc.model,
		APIKey:    acc.key,
		KeySource: acc.keySource,
		Timeout:   acc.timeout,
		Headers:   acc.headers,
	}
	if acc.maxRetries != nil {
		c.MaxRetries = *acc.maxRetries
		if c.MaxRetries == 0 {
			c.MaxRetries = -1 // an explicit 0 means no retries
		}
	}
	if c.APIKey == "" && info.KeyEnv != "" {
		if v := getenv(info.KeyEnv); v != "" {
			c.APIKey, c.KeySource = Secret(v), info.KeyEnv
		}
	}
	if err := c.validate(sec); err != nil {
		return Config{}, err
	}
	return c.withDefaults(sec), nil
}

// Validate checks that the configuration can make calls: a known
// provider, a base URL (the provider's or one given), a model, and a key
// where the provider needs one.
func (c Config) Validate() error { return c.validate(llmSection) }

func (c Config) validate(sec section) error {
	info, ok := Providers[c.Provider]
	if !ok {
		return fmt.Errorf("unknown LLM provider %q (known: %s)", c.Provider, providerNames())
	}
	base := c.BaseURL
	if base == "" {
		base = info.BaseURL
	}
	if base == "" {
		return fmt.Errorf("%s provider %s needs a base URL: set %s or base_url in the config file", sec.what(), c.Provider, sec.baseURL)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s base URL %q is not an http(s) URL", sec.what(), base)
	}
	if c.Model == "" {
		return fmt.Errorf("%s provider %s needs a model: set %s or model in the config file", sec.what(), c.Provider, sec.model)
	}
	if info.NeedsKey && c.APIKey == "" {
		return fmt.Errorf("%s provider %s needs an API key: set %s or %s, or api_key_env in the config file", sec.what(), c.Provider, info.KeyEnv, sec.key)
	}
	if sec.name != llmSection.name && info.Format != FormatOpenAI {
		return fmt.Errorf("%s provider %s has no /embeddings endpoint: name an OpenAI-compatible provider (%s)", sec.what(), c.Provider, strings.Join(openAINames(), ", "))
	}
	return nil
}

// what names the section in messages.
func (s section) what() string {
	if s.name == llmSection.name {
		return "LLM"
	}
	return "embedding"
}

// openAINames lists the providers speaking the OpenAI API, sorted.
func openAINames() []string {
	var names []string
	for n, p := range Providers {
		if p.Format == FormatOpenAI {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func (c Config) withDefaults(sec section) Config {
	if c.BaseURL == "" {
		c.BaseURL = Providers[c.Provider].BaseURL
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.Timeout == 0 {
		c.Timeout = sec.defTimeout
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = sec.defRetries
	}
	return c
}
