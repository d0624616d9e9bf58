// Package store keeps invoices in memory.
package store

import (
	"errors"
	"sync"
)

// ErrNotFound is returned for unknown invoice ids.
var ErrNotFound = errors.New("not found")

// Limits of the store.
const (
	MaxInvoices = 10000
	MaxLines    = 200
)

// Invoice is one bill sent to a customer.
type Invoice struct {
	ID    string
	Total int64 // cents
}

// Store is safe for concurrent use.
type Store struct {
	mu sync.Mutex
	m  map[string]Invoice
}

// New returns an empty store.
func New() *Store { return &Store{m: map[string]Invoice{}} }

// Get returns the invoice with the given id.
func (s *Store) Get(id string) (Invoice, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv, ok := s.m[id]
	if !ok {
		return Invoice{}, ErrNotFound
	}
	return inv, nil
}
