// Package llm holds the Go host's model providers: the clients that make
// the model calls the engine asks for in a pending result (docs/ABI.md §6)
// and turn the answer into what "resume" takes. Two wire formats cover the
// providers Arbor supports:
//
//   - OpenAI-compatible chat completions: OpenAI, OpenRouter, Groq, Ollama,
//     LM Studio, vLLM, or any server speaking that API;
//   - Anthropic's Messages API.
//
// Both map the provider-neutral types of core/llm onto their format and
// back (tool calls included), time out each attempt, retry 429 and 5xx
// answers with exponential backoff and jitter (honouring Retry-After), and
// fail with an *Error whose Code is one of core/llm's error codes, so a
// driver can hand it to "resume" as it is (errors.As finds a *llm.Error in
// it).
//
// Configuration comes from environment variables and config files (see
// Load); API keys are kept in a Secret, which never prints.
//
// This package never logs a request's content or a key. It does not decide
// when to call a model: the engine does, through pending results.
package llm
