//go:build !unix

package main

// keepStdioFlags has nothing to keep outside Unix: Windows console and
// pipe handles carry no O_NONBLOCK-like status shared with other processes
// (Go's syscall.SetNonblock does nothing there, and that is all wazero
// calls).
func keepStdioFlags() (restore func()) { return func() {} }
