//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package serve

import (
	"net"
	"os"
)

func lockFile(string) (*os.File, error) { return nil, ErrUnsupported }

func listen(string) (net.Listener, error) { return nil, ErrUnsupported }

func ownSocket(string) bool { return false }

const supported = false
