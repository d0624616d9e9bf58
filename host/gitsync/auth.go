package gitsync

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

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
			if ep.User != "" {
				return &http.BasicAuth{Username: ep.User, Password: ep.Password}, nil
			}
			return nil, nil // a public remote, or one the URL authenticates
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
