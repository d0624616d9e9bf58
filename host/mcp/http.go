package mcp

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Endpoint is the path Serve answers MCP on.
const Endpoint = "/mcp"

// DefaultMaxBodyBytes bounds a request's body unless HTTPOptions say
// otherwise: 4 MiB, far above any curate an agent writes by hand.
const DefaultMaxBodyBytes = 4 << 20

// shutdownGrace is how long a stopping server waits for the requests in
// flight before it closes their connections.
const shutdownGrace = 10 * time.Second

// HTTPOptions configure Serve.
type HTTPOptions struct {
	// Token is the bearer token every request must carry (Authorization:
	// Bearer TOKEN). Empty serves without one, which Serve allows on a
	// loopback address only.
	Token string
	// TokenHint ends the 401 answer: where the token can be found.
	TokenHint string
	// AllowedOrigins are browser origins (scheme://host[:port]) allowed to
	// call besides loopback ones; a request from any other Origin is
	// refused with 403 (DNS rebinding, cross-site requests).
	AllowedOrigins []string
	// AllowedHosts are host names (without port) a request's Host header may
	// name besides IP addresses and localhost; any other is refused with 403,
	// since a name that resolves to this machine by surprise is how DNS
	// rebinding reaches a local server.
	AllowedHosts []string
	// MaxBodyBytes bounds a request's body (413 beyond it); 0 means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// SessionTimeout ends a session that made no request for this long (0:
	// never); its client gets 404 and starts a new one.
	SessionTimeout time.Duration
}

// handler serves the server's registry over Streamable HTTP at Endpoint:
// one session per client, each call answered as a server-sent event
// stream (or JSON, as the client accepts) with its progress and log
// notifications, a GET stream per session for the notifications that
// answer no request (resources/updated), and streams resumable with
// Last-Event-ID. Requests are checked in this order: Host (403), Origin
// (403), path (404), token (401), body size (413). GET streams end when
// stopping does.
func (s *Server) handler(o HTTPOptions, stopping context.Context) http.Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	streams := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv }, &sdk.StreamableHTTPOptions{
		EventStore: sdk.NewMemoryEventStore(nil),
		// The SDK refuses a name in Host on a loopback listener only;
		// hostAllowed below does so on every listener, with the names the
		// operator allows.
		DisableLocalhostProtection: true,
		SessionTimeout:             o.SessionTimeout,
		MaxRequestBodyBytes:        o.MaxBodyBytes,
	})
	origins := make([]string, 0, len(o.AllowedOrigins))
	for _, a := range o.AllowedOrigins {
		origins = append(origins, strings.ToLower(strings.TrimSuffix(a, "/")))
	}
	token := []byte(o.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, o.AllowedHosts) {
			refuse(w, http.StatusForbidden, fmt.Sprintf("Forbidden: the Host %q is not one this server answers to (an IP address, localhost, or a name given with --allow-host)", r.Host))
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, origins) {
			refuse(w, http.StatusForbidden, fmt.Sprintf("Forbidden: requests from the origin %q are not allowed (loopback origins are, and those given with --allow-origin)", origin))
			return
		}
		if r.URL.Path != Endpoint {
			refuse(w, http.StatusNotFound, "Not found: the MCP endpoint is "+Endpoint)
			return
		}
		if len(token) > 0 {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), token) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="arbor"`)
				msg := "Unauthorized: this Arbor server needs the header Authorization: Bearer <token>"
				if ok {
					msg = "Unauthorized: the bearer token is not this Arbor server's"
				}
				if o.TokenHint != "" {
					msg += "; " + o.TokenHint
				}
				refuse(w, http.StatusUnauthorized, msg)
				return
			}
		}
		if r.Method == http.MethodGet {
			// A GET stream lasts as long as its session: it would hold a
			// graceful shutdown for its whole grace.
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(stopping, cancel)()
			r = r.WithContext(ctx)
		}
		streams.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, msg)
}

// hostAllowed reports whether a Host header names this server without a
// DNS name an attacker could point here: an IP address, localhost, or a
// name the operator allowed.
func hostAllowed(host string, allowed []string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.ToLower(strings.Trim(name, "[]"))
	if name == "" {
		return false
	}
	if name == "localhost" || net.ParseIP(name) != nil {
		return true
	}
	return slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, name) })
}

// originAllowed reports whether a browser origin may call: a loopback one
// (a page served from this machine), or one of allowed (lower case).
func originAllowed(origin string, allowed []string) bool {
	if slices.Contains(allowed, strings.ToLower(origin)) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" (a sandboxed page, a file) included
	}
	return isLoopbackHost(u.Hostname())
}

func isLoopbackHost(name string) bool {
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether addr (host:port, or a listener's address)
// can be reached only from this machine.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return isLoopbackHost(strings.Trim(host, "[]"))
}

// Serve serves the registry over Streamable HTTP on ln until
// ctx ends, then stops taking requests, lets those in flight finish for up
// to 10 seconds, finishes the calls already queued and flushes the
// engine's lifecycle signals and index. Serving without a token is
// refused unless ln is a loopback address. A cancelled ctx is a normal
// end: Serve returns nil.
func (s *Server) Serve(ctx context.Context, ln net.Listener, o HTTPOptions) error {
	if o.Token == "" && !IsLoopback(ln.Addr().String()) {
		return fmt.Errorf("arbor mcp: serving %s without a token: only a loopback address may go without one", ln.Addr())
	}
	end, err := s.begin()
	if err != nil {
		return err
	}
	stopping, stop := context.WithCancel(context.Background())
	defer stop()
	hs := &http.Server{
		Handler:           s.handler(o, stopping),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	hs.RegisterOnShutdown(stop)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if serr := hs.Shutdown(grace); errors.Is(serr, context.DeadlineExceeded) {
		hs.Close()
	}
	for ss := range s.srv.Sessions() {
		ss.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return end(ctx, err)
}
