package api

import (
	"errors"
	"strings"
	"testing"
)

func TestSearchParamsCheck(t *testing.T) {
	for _, tt := range []struct {
		p     SearchParams
		limit int
		msg   string
	}{
		{SearchParams{Query: "q"}, 5, ""},
		{SearchParams{Query: "q", Limit: 100}, 100, ""},
		{SearchParams{Query: strings.Repeat("é", MaxQueryBytes/2)}, 5, ""},
		{SearchParams{Query: strings.Repeat("é", MaxQueryBytes/2) + "x"}, 0, "query is 4097 bytes, over the 4096-byte limit: ask with fewer words"},
		{SearchParams{Query: "q", Limit: 101}, 0, "limit 101: want 1 to 100"},
		{SearchParams{Query: "q", Limit: -1}, 0, "limit -1: want 1 to 100"},
	} {
		limit, err := tt.p.Check(5)
		var e *Error
		switch {
		case tt.msg == "" && (err != nil || limit != tt.limit):
			t.Errorf("%d bytes, limit %d: %d, %v", len(tt.p.Query), tt.p.Limit, limit, err)
		case tt.msg != "" && (!errors.As(err, &e) || e.Code != CodeInvalidParams || e.Message != tt.msg):
			t.Errorf("%d bytes, limit %d: %v, want %q", len(tt.p.Query), tt.p.Limit, err, tt.msg)
		}
	}
}
