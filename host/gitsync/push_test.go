package gitsync

import (
	"errors"
	"testing"

	"github.com/go-git/go-git/v5"
)

// A push refused because the remote moved on, or because another push was
// updating its ref at that moment, makes the sync fetch, merge and push
// again; any other failure ends it.
func TestPushErrorsThatRetry(t *testing.T) {
	for _, c := range []struct {
		err   error
		retry bool
	}{
		{errors.New("non-fast-forward update: refs/heads/main"), true},
		{git.ErrForceNeeded, true},
		{errors.New("command error on refs/heads/main: failed to update ref"), true},
		{errors.New("authentication required"), false},
	} {
		got := pushError("main", c.err)
		if errors.Is(got, errRejected) != c.retry || got == nil {
			t.Errorf("%v: %v, retry %v", c.err, got, c.retry)
		}
	}
	if err := pushError("main", git.NoErrAlreadyUpToDate); err != nil {
		t.Errorf("already up to date: %v", err)
	}
}
