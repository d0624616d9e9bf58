package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
)

// Client makes model calls to one provider and model. It is safe for
// concurrent use.
type Client struct {
	cfg     Config
	format  format
	http    *http.Client
	base    time.Duration
	max     time.Duration
	sleep   func(context.Context, time.Duration) error
	onRetry func(Retry)
}

// Retry describes one retry, for WithRetryHook.
type Retry struct {
	// Attempt is the attempt that failed, from 1.
	Attempt int
	// Status is its HTTP status, 0 when there was no answer (a timeout, a
	// broken connection).
	Status int
	// Wait is how long the client waits before the next attempt.
	Wait time.Duration
	// RetryAfter is true when Wait is what the server asked for
	// (Retry-After or retry-after-ms) rather than the client's backoff.
	RetryAfter bool
	// Reason says why the attempt failed.
	Reason string
}

// Option configures New.
type Option func(*Client)

// WithHTTPClient sends requests through hc instead of a client of its own
// (whose only setting is no overall timeout: Config.Timeout bounds each
// attempt).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithBackoff sets the backoff before retry n (from 1): a random wait
// between half and all of min(base·2^(n−1), max). A Retry-After longer
// than max is not waited for: the call fails with api.LLMRateLimit or
// api.LLMHTTP. Default: 500ms and 30s.
func WithBackoff(base, max time.Duration) Option {
	return func(c *Client) { c.base, c.max = base, max }
}

// WithRetryHook calls f before each retry's wait, to report it.
func WithRetryHook(f func(Retry)) Option { return func(c *Client) { c.onRetry = f } }

// WithSleep replaces the wait between attempts (which returns early with
// the context's error when ctx ends): tests record the waits instead of
// waiting.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) { c.sleep = f }
}

// New returns a client for cfg, whose missing fields take the provider's
// defaults.
func New(cfg Config, opts ...Option) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults(llmSection)
	c := &Client{
		cfg:   cfg,
		http:  &http.Client{},
		base:  500 * time.Millisecond,
		max:   30 * time.Second,
		sleep: sleepCtx,
	}
	switch Providers[cfg.Provider].Format {
	case FormatAnthropic:
		c.format = anthropicFormat{}
	default:
		c.format = openAIFormat{maxCompletionTokens: cfg.Provider == "openai"}
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Config returns the client's configuration, defaults filled in.
func (c *Client) Config() Config { return c.cfg }

// format is one wire format: how a request is encoded and sent, and how
// answers are decoded.
type format interface {
	endpoint(base string) string
	header(h http.Header, key string)
	encode(model string, req api.LLMRequest) ([]byte, error)
	// decode reads a 2xx body. An error it returns is an *Error without
	// Provider.
	decode(body []byte) (api.LLMResponse, error)
	// errorMessage extracts the provider's message from an error body.
	errorMessage(body []byte) string
}

// maxBody bounds what is read of an answer.
const maxBody = 16 << 20

// Complete makes one model call, retrying what is worth retrying, and
// returns the answer with its latency (all attempts and waits included).
// Its errors are *Error values.
func (c *Client) Complete(ctx context.Context, req api.LLMRequest) (api.LLMResponse, error) {
	start := time.Now()
	body, err := c.format.encode(c.cfg.Model, req)
	if err != nil {
		return api.LLMResponse{}, c.fail(&Error{Code: api.LLMInvalid, Message: "encode the request: " + err.Error(), Err: err}, 0)
	}
	var resp api.LLMResponse
	if err := c.retrying(ctx, func() (*Error, time.Duration) {
		data, status, ferr, after := c.post(ctx, c.format.endpoint(c.cfg.BaseURL), body)
		if ferr != nil {
			return ferr, after
		}
		r, err := c.format.decode(data)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Status = status
				return e, -1
			}
			return &Error{Code: api.LLMInvalid, Status: status, Message: "the answer could not be decoded: " + err.Error() + ": " + snippet(data), Err: err}, -1
		}
		resp = r
		return nil, -1
	}); err != nil {
		return api.LLMResponse{}, err
	}
	resp.LatencyMs = float64(time.Since(start).Microseconds()) / 1000
	return resp, nil
}

// retrying makes attempts until one succeeds, fails for good or the
// retries run out, waiting between them as the server asked or by the
// backoff. An attempt returns how long the server asked to wait (-1: it
// did not say).
func (c *Client) retrying(ctx context.Context, attempt func() (*Error, time.Duration)) error {
	retries := max(c.cfg.MaxRetries, 0)
	for n := 1; ; n++ {
		ferr, retryAfter := attempt()
		if ferr == nil {
			return nil
		}
		if !retryable(ferr) || n > retries {
			return c.fail(ferr, n)
		}
		wait, asked := c.backoff(n), false
		if retryAfter >= 0 {
			if retryAfter > c.max {
				ferr.Message += fmt.Sprintf("; the server asked to wait %s, longer than the %s the client waits at most", retryAfter, c.max)
				return c.fail(ferr, n)
			}
			wait, asked = retryAfter, true
		}
		if c.onRetry != nil {
			c.onRetry(Retry{Attempt: n, Status: ferr.Status, Wait: wait, RetryAfter: asked, Reason: ferr.Message})
		}
		if err := c.sleep(ctx, wait); err != nil {
			return c.fail(ctxError(ctx, err), n)
		}
	}
}

// fail fills in what every error of this client carries.
func (c *Client) fail(e *Error, attempts int) *Error {
	e.Provider = c.cfg.Provider
	e.Attempts = attempts
	if k := c.cfg.APIKey.Reveal(); k != "" {
		// A server may echo the key it refused.
		e.Message = strings.ReplaceAll(e.Message, k, "[redacted]")
	}
	return e
}

// post makes one HTTP request of a JSON body to url and returns the 2xx
// answer's body and status. On failure it returns how long the server
// asked to wait (-1: it did not say).
func (c *Client) post(ctx context.Context, url string, body []byte) ([]byte, int, *Error, time.Duration) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, &Error{Code: api.LLMHTTP, Message: err.Error(), Err: err}, -1
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	for k, v := range c.cfg.Headers {
		hreq.Header.Set(k, v)
	}
	c.format.header(hreq.Header, c.cfg.APIKey.Reveal())
	hresp, err := c.http.Do(hreq)
	if err != nil {
		return nil, 0, c.transportError(ctx, actx, err), -1
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, maxBody+1))
	if err != nil {
		return nil, 0, c.transportError(ctx, actx, err), -1
	}
	if len(data) > maxBody {
		return nil, 0, &Error{Code: api.LLMInvalid, Status: hresp.StatusCode, Message: fmt.Sprintf("the answer is larger than %d MiB", maxBody>>20)}, -1
	}
	if hresp.StatusCode/100 != 2 {
		return nil, 0, c.statusError(hresp.StatusCode, data), retryAfter(hresp.Header)
	}
	return data, hresp.StatusCode, nil, -1
}

// transportError classifies a failure to get an answer: the caller gave
// up, the attempt timed out, or the connection failed.
func (c *Client) transportError(ctx, actx context.Context, err error) *Error {
	if ctx.Err() != nil {
		return ctxError(ctx, ctx.Err())
	}
	if actx.Err() != nil {
		return &Error{Code: api.LLMTimeout, Message: fmt.Sprintf("no answer within %s", c.cfg.Timeout), Err: err}
	}
	return &Error{Code: api.LLMHTTP, Message: "request failed: " + err.Error(), Err: err}
}

// ctxError is the error for a caller's context that ended.
func ctxError(ctx context.Context, err error) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Code: api.LLMTimeout, Message: "the caller's deadline passed", Err: ctx.Err()}
	}
	return &Error{Code: api.LLMCancelled, Message: "cancelled", Err: err}
}

func (c *Client) statusError(status int, body []byte) *Error {
	msg := c.format.errorMessage(body)
	if msg == "" {
		msg = snippet(body)
	}
	e := &Error{Code: api.LLMHTTP, Status: status}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Code = api.LLMAuth
		src := c.cfg.KeySource
		if src == "" {
			src = "no key was configured"
		} else {
			src = "the key from " + src
		}
		e.Message = fmt.Sprintf("the API key was refused (HTTP %d, %s): %s", status, src, msg)
	case status == http.StatusTooManyRequests:
		e.Code = api.LLMRateLimit
		e.Message = fmt.Sprintf("rate limited (HTTP 429): %s", msg)
	default:
		e.Message = fmt.Sprintf("HTTP %d: %s", status, msg)
	}
	return e
}

// retryable reports whether another attempt may succeed: rate limits,
// server errors (Anthropic's 529 "overloaded" included), timeouts, broken
// connections.
func retryable(e *Error) bool {
	switch e.Code {
	case api.LLMRateLimit, api.LLMTimeout:
		return true
	case api.LLMHTTP:
		return e.Status == 0 || e.Status == http.StatusRequestTimeout || e.Status == http.StatusConflict || e.Status >= 500
	}
	return false
}

// backoff is the wait before retry n: full jitter over the upper half of
// min(base·2^(n−1), max).
func (c *Client) backoff(n int) time.Duration {
	d := c.base << min(n-1, 30)
	if d > c.max || d <= 0 {
		d = c.max
	}
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// retryAfter reads how long the server asked to wait: retry-after-ms
// (OpenAI), else Retry-After in seconds or as an HTTP date; -1 when absent
// or unreadable.
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return -1
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// snippet quotes the start of a body for an error message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(empty body)"
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return strconv.Quote(s)
}
