package main

import (
	"math"
	"sort"
	"strings"
	"time"
)

// RecallAtK is the share of gold items found among the first k ranked
// items (0 when there is no gold). Duplicates in ranked count once.
func RecallAtK[T comparable](ranked, gold []T, k int) float64 {
	if len(gold) == 0 {
		return 0
	}
	top := topSet(ranked, k)
	found := 0
	seen := make(map[T]bool, len(gold))
	for _, g := range gold {
		if seen[g] {
			continue
		}
		seen[g] = true
		if top[g] {
			found++
		}
	}
	return float64(found) / float64(len(seen))
}

// AnyAtK reports whether some gold item is among the first k ranked items.
func AnyAtK[T comparable](ranked, gold []T, k int) bool {
	top := topSet(ranked, k)
	for _, g := range gold {
		if top[g] {
			return true
		}
	}
	return false
}

// AllAtK reports whether every gold item is among the first k ranked items
// (false when there is no gold).
func AllAtK[T comparable](ranked, gold []T, k int) bool {
	if len(gold) == 0 {
		return false
	}
	top := topSet(ranked, k)
	for _, g := range gold {
		if !top[g] {
			return false
		}
	}
	return true
}

func topSet[T comparable](ranked []T, k int) map[T]bool {
	if k > len(ranked) {
		k = len(ranked)
	}
	m := make(map[T]bool, k)
	for _, r := range ranked[:max(k, 0)] {
		m[r] = true
	}
	return m
}

// EvidenceReport counts what ParseEvidence did to a question's gold list.
type EvidenceReport struct {
	Split     int      // raw strings holding several ids ("D8:6; D9:17")
	Fixed     int      // ids repaired ("D:11:26", "D30:05")
	Malformed []string // pieces that are no id at all ("D"), dropped
	Missing   []string // well-formed ids naming no turn of the conversation, dropped
}

// ParseEvidence cleans a LoCoMo evidence list: each string may hold several
// ids separated by ';', ',' or spaces; ids are repaired where the intent is
// clear, pieces that are not ids are dropped, and so are ids for which
// exists (when not nil) is false. The result has no duplicates, in order.
func ParseEvidence(raw []string, exists func(TurnID) bool) ([]TurnID, EvidenceReport) {
	var rep EvidenceReport
	var out []TurnID
	seen := map[TurnID]bool{}
	for _, s := range raw {
		pieces := strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' || r == ' ' || r == '\t' || r == '\n' })
		if len(pieces) > 1 {
			rep.Split++
		}
		for _, p := range pieces {
			id, fixed, ok := ParseTurnID(p)
			if !ok {
				rep.Malformed = append(rep.Malformed, p)
				continue
			}
			if exists != nil && !exists(id) {
				rep.Missing = append(rep.Missing, p)
				continue
			}
			if fixed {
				rep.Fixed++
			}
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out, rep
}

// Percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of
// durations, 0 when there are none. It does not modify ds.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// mean is a running average.
type mean struct {
	sum float64
	n   int
}

func (m *mean) add(v float64) { m.sum += v; m.n++ }

func (m *mean) addBool(b bool) {
	if b {
		m.add(1)
	} else {
		m.add(0)
	}
}

func (m mean) value() float64 {
	if m.n == 0 {
		return math.NaN()
	}
	return m.sum / float64(m.n)
}
