package main

import "crypto/sha256"

// The tuning and validation halves. Every question belongs to one half by
// a fixed hash of its id: the first byte of the SHA-256 of the id's UTF-8
// bytes, even for tuning, odd for validation. A LongMemEval-S question's
// id is its question_id; a LoCoMo question's is "<sample_id>#<i>", i its
// position (from 0) in the conversation's qa list. Rules and parameters
// are chosen on the tuning half; the validation half says whether they
// hold on questions they were not chosen on.
type half int

const (
	tuning half = iota
	validation
)

var halves = []half{tuning, validation}

func (h half) String() string {
	if h == tuning {
		return "tuning"
	}
	return "validation"
}

// halfOf is the half of the question with this id.
func halfOf(id string) half {
	sum := sha256.Sum256([]byte(id))
	return half(sum[0] & 1)
}

// keys returns the ids among ids that belong to h, as a set.
func keys(ids []string, h half) map[string]bool {
	out := map[string]bool{}
	for _, id := range ids {
		if halfOf(id) == h {
			out[id] = true
		}
	}
	return out
}
