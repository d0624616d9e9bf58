package gitsync

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/ssh"
)

// Auth is how a sync authenticates to remoteURL, from the environment
// (docs/sync.md): for HTTPS a token in $ARBOR_GIT_TOKEN (sent as the
// password of $ARBOR_GIT_USERNAME, "arbor" by default; GitHub, GitLab and
// Gitea take a token so); for SSH the agent at $SSH_AUTH_SOCK, else the key
// in $ARBOR_SSH_KEY or ~/.ssh/id_ed25519, id_ecdsa, id_rsa (a passphrase in
// $ARBOR_SSH_PASSPHRASE). A file remote (a path, file://) needs none: nil.
func Auth(remoteURL string) (transport.AuthMethod, error) {
	ep, err := transport.NewEndpoint(remoteURL)
	if err != nil {
		return nil, fmt.Errorf("gitsync: remote %q: %w", remoteURL, err)
	}
	switch ep.Protocol {
	case "http", "https":
		tok := os.Getenv("ARBOR_GIT_TOKEN")
		if tok == "" {
			if ep.Password != "" {
				return &http.BasicAuth{Username: ep.User, Password: ep.Password}, nil
			}
			if user, pass, ok := credentialFill(ep); ok {
				return &http.BasicAuth{Username: user, Password: pass}, nil
			}
			if ep.User != "" {
				return &http.BasicAuth{Username: ep.User}, nil
			}
			return nil, nil // a public remote
		}
		user := os.Getenv("ARBOR_GIT_USERNAME")
		if user == "" {
			user = "arbor"
		}
		return &http.BasicAuth{Username: user, Password: tok}, nil
	case "ssh":
		user := ep.User
		if user == "" {
			user = "git"
		}
		if os.Getenv("SSH_AUTH_SOCK") != "" && os.Getenv("ARBOR_SSH_KEY") == "" {
			a, err := ssh.NewSSHAgentAuth(user)
			if err != nil {
				return nil, fmt.Errorf("gitsync: the SSH agent at $SSH_AUTH_SOCK: %w", err)
			}
			return a, nil
		}
		key := os.Getenv("ARBOR_SSH_KEY")
		if key == "" {
			home, _ := os.UserHomeDir()
			for _, name := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
				if p := filepath.Join(home, ".ssh", name); fileExists(p) {
					key = p
					break
				}
			}
		}
		if key == "" {
			return nil, fmt.Errorf("gitsync: remote %s: no SSH agent ($SSH_AUTH_SOCK) and no key (set $ARBOR_SSH_KEY, or make ~/.ssh/id_ed25519)", redact(remoteURL))
		}
		a, err := ssh.NewPublicKeysFromFile(user, key, os.Getenv("ARBOR_SSH_PASSPHRASE"))
		if err != nil {
			return nil, fmt.Errorf("gitsync: SSH key %s: %w", key, err)
		}
		return a, nil
	}
	return nil, nil
}

// helperWait bounds a credential helper: one that waits for a person (a
// GUI prompt nobody answers) must not hold a sync, or an MCP server's
// tool call, forever.
const helperWait = 30 * time.Second

// credentialFill asks git's credential helpers (credential.helper in the
// user's git configuration: a keychain, libsecret, the Git Credential
// Manager, a store) for the user and password of an HTTP remote, through
// `git credential fill`, the interface git documents for other programs
// (gitcredentials(7)). go-git reads no helpers, and each helper is a
// program of its own with git's configuration deciding which applies to
// which URL, so asking git itself is the one way to honour that
// configuration; without a git binary (Arbor needs none) there is nothing
// configured to honour, and ok is false. Prompts on a terminal are off:
// the standard input of `arbor mcp` is its protocol.
func credentialFill(ep *transport.Endpoint) (user, pass string, ok bool) {
	git, err := exec.LookPath("git")
	if err != nil {
		return "", "", false
	}
	host := ep.Host
	if ep.Port != 0 && ep.Port != defaultPort(ep.Protocol) {
		host = fmt.Sprintf("%s:%d", ep.Host, ep.Port)
	}
	var in bytes.Buffer
	fmt.Fprintf(&in, "protocol=%s\nhost=%s\npath=%s\n", ep.Protocol, host, strings.TrimPrefix(ep.Path, "/"))
	if ep.User != "" {
		fmt.Fprintf(&in, "username=%s\n", ep.User)
	}
	in.WriteString("\n")
	ctx, cancel := context.WithTimeout(context.Background(), helperWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, git, "credential", "fill")
	cmd.Stdin = &in
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.Output()
	if err != nil {
		return "", "", false // no helper, or none that knows this remote
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "username":
			user = v
		case "password":
			pass = v
		}
	}
	return user, pass, pass != ""
}

func defaultPort(protocol string) int {
	if protocol == "http" {
		return 80
	}
	return 443
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// redact drops a password from a URL before it is shown.
func redact(u string) string {
	if p, err := url.Parse(u); err == nil && p.User != nil {
		if _, has := p.User.Password(); has {
			p.User = url.UserPassword(p.User.Username(), "xxxxx")
			return p.String()
		}
	}
	return strings.TrimSpace(u)
}
