package ingest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestSplitJSONTable(t *testing.T) {
	js := api.FormatJSON
	runSplit(t, []splitCase{
		{name: "array of records", file: "items.json", format: js,
			content: `[{"title":"A","n":1},{"name":"B"}]`,
			want: []piece{
				{path: "data/items/a.md", title: "A", text: "- **title**: A\n- **n**: 1", task: "Record 1 (line 1)"},
				{path: "data/items/b.md", title: "B", text: "- **name**: B", task: "Record 2 (line 1)"},
			}},
		{name: "record lines", file: "ids.json", format: js,
			content: "[\n {\"id\": 7},\n {\"id\": 8,\n  \"x\": null}\n]\n",
			want: []piece{
				// A number names a record too; null fields are left out.
				{path: "data/ids/7.md", title: "7", text: "- **id**: 7", task: "Record 1 (line 2)"},
				{path: "data/ids/8.md", title: "8", text: "- **id**: 8", task: "Record 2 (lines 3-4)"},
			}},
		{name: "title fields in order of preference", file: "t.json", format: js,
			content: `[{"name":"N","Title":"T"},{"title":"","label":"L"},{"title":{"x":1},"id":3},{"summary":"  "}]`,
			want: []piece{
				{path: "data/t/t.md", title: "T", text: "- **name**: N\n- **Title**: T", task: "Record 1 (line 1)"},
				{path: "data/t/l.md", title: "L", text: "- **label**: L", task: "Record 2 (line 1)"},
				{path: "data/t/3.md", title: "3", text: "- **title**: {\"x\":1}\n- **id**: 3", task: "Record 3 (line 1)"},
				{path: "data/t/record_4.md", title: "Record 4", text: "", task: "Record 4 (line 1)"},
			}},
		{name: "a null names nothing", file: "x.json", format: js,
			content: `[{"id": null, "note": "n"}]`,
			want:    []piece{{path: "data/x/record_1.md", title: "Record 1", text: "- **note**: n", task: "Record 1 (line 1)"}}},
		{name: "field rendering", file: "f.json", format: js,
			content: `[{"tags":["a"," b "],"meta":{"x":1},"mixed":[1,{"y":2}],"empty":"","nil":null,"flag":false,"note":"line1\nline2"}]`,
			want: []piece{{path: "data/f/record_1.md", title: "Record 1", task: "Record 1 (line 1)",
				text: "- **tags**: a, b\n- **meta**: {\"x\":1}\n- **mixed**: [1,{\"y\":2}]\n- **flag**: false\n- **note**: line1\n  line2"}}},
		{name: "numbers as written", file: "n.json", format: js,
			content: `[{"price": 1.50, "big": 12345678901234567890, "exp": 1e3, "neg": -0}]`,
			want: []piece{{path: "data/n/record_1.md", title: "Record 1", task: "Record 1 (line 1)",
				text: "- **price**: 1.50\n- **big**: 12345678901234567890\n- **exp**: 1e3\n- **neg**: -0"}}},
		{name: "object by key", file: "cfg.json", format: js,
			content: `{"alpha": {"k": "v"}, "beta": [1, 2], "gamma": "text", "delta": {"t": "x\ny"}}`,
			want: []piece{
				{path: "data/cfg/alpha.md", title: "alpha", text: "- **k**: v", task: `Key "alpha"`},
				{path: "data/cfg/beta.md", title: "beta", text: "1, 2", task: `Key "beta"`},
				{path: "data/cfg/gamma.md", title: "gamma", text: "text", task: `Key "gamma"`},
				{path: "data/cfg/delta.md", title: "delta", text: "- **t**: x\n  y", task: `Key "delta"`},
			}},
		{name: "scalar root", file: "dir/value.json", format: js,
			content: `"just a string"`,
			want:    []piece{{path: "data/dir_value/value.md", title: "value", text: "just a string", task: "Value"}}},
		{name: "number root", file: "answer.json", format: js,
			content: "42\n",
			want:    []piece{{path: "data/answer/answer.md", title: "answer", text: "42", task: "Value"}}},
		{name: "array of scalars and arrays", file: "mix.json", format: js,
			content: `["x", [1, "two"], null]`,
			want: []piece{
				{path: "data/mix/record_1.md", title: "Record 1", text: "x", task: "Record 1 (line 1)"},
				{path: "data/mix/record_2.md", title: "Record 2", text: `[1,"two"]`, task: "Record 2 (line 1)"},
				{path: "data/mix/record_3.md", title: "Record 3", text: "null", task: "Record 3 (line 1)"},
			}},
		{name: "escapes decoded", file: "e.json", format: js,
			content: `{"k":"caf\u00e9 \"q\""}`,
			want:    []piece{{path: "data/e/k.md", title: "k", text: `café "q"`, task: `Key "k"`}}},
		{name: "repeated titles", file: "r.json", format: js,
			content: `[{"name":"x"},{"name":"X"}]`,
			want: []piece{
				{path: "data/r/x.md", title: "x", text: "- **name**: x", task: "Record 1 (line 1)"},
				{path: "data/r/x_2.md", title: "X", text: "- **name**: X", task: "Record 2 (line 1)"},
			}},
		{name: "Domain option", file: "items.json", format: js, opts: api.IngestOptions{Domain: "Inventory"},
			content: `[{"name":"bolt"}]`,
			want:    []piece{{path: "inventory/items/bolt.md", title: "bolt", text: "- **name**: bolt", task: "Record 1 (line 1)"}}},
		{name: "empty array", file: "e.json", format: js, content: "[]"},
		{name: "empty object", file: "e.json", format: js, content: " {} \n"},
	})
}

func TestSplitJSONLTable(t *testing.T) {
	runSplit(t, []splitCase{
		{name: "one record per line, blank lines skipped", file: "log.jsonl", format: api.FormatJSONL,
			content: "{\"a\":1}\n\n{\"title\":\"T\",\"b\":[true,false]}\n\"s\"\n",
			want: []piece{
				{path: "data/log/record_1.md", title: "Record 1", text: "- **a**: 1", task: "Record 1 (line 1)"},
				{path: "data/log/t.md", title: "T", text: "- **title**: T\n- **b**: true, false", task: "Record 2 (line 3)"},
				{path: "data/log/record_3.md", title: "Record 3", text: "s", task: "Record 3 (line 4)"},
			}},
		{name: ".ndjson", file: "x.ndjson", format: api.FormatJSONL,
			content: "{\"name\":\"n\"}\r\n",
			want:    []piece{{path: "data/x/n.md", title: "n", text: "- **name**: n", task: "Record 1 (line 1)"}}},
		// A line that is not a message makes every line a record.
		{name: "messages mixed with records", file: "m.jsonl", format: api.FormatJSONL,
			content: "{\"role\":\"user\",\"content\":\"hi\"}\n{\"event\":\"x\"}\n",
			want: []piece{
				{path: "data/m/record_1.md", title: "Record 1", text: "- **role**: user\n- **content**: hi", task: "Record 1 (line 1)"},
				{path: "data/m/record_2.md", title: "Record 2", text: "- **event**: x", task: "Record 2 (line 2)"},
			}},
		{name: "chat with an assistant", file: "chat.jsonl", format: api.FormatChat,
			content: "{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":\"2026-02-10T08:00:00Z\"}\n{\"role\":\"assistant\",\"content\":\"hello\"}\n",
			want: []piece{{path: "chats/chat/2026_02/session_01.md", title: "Chat on 10 February 2026", text: "**User:** hi\n\n**Assistant:** hello",
				task: "Chat with the assistant", author: "user", stamp: "2026-02-10T08:00:00Z"}}},
		{name: "chat between people", file: "talk.jsonl", format: api.FormatChat,
			content: "{\"speaker\":\"Ann\",\"text\":\"hi\"}\n{\"speaker\":\"Bo\",\"text\":\"yo\"}\n",
			want: []piece{
				{path: "ann_and_bo/session_01/turn_001.md", title: "Ann", text: "hi", task: "Turn 1 of session 1", author: "Ann"},
				{path: "ann_and_bo/session_01/turn_002.md", title: "Bo", text: "yo", task: "Turn 2 of session 1", author: "Bo", flow: "In reply to Ann: hi"},
			}},
		{name: "blank file", file: "e.jsonl", format: api.FormatJSONL, content: "\n \n"},
	})
}

func TestSplitCSVTable(t *testing.T) {
	csv, tsv := api.FormatCSV, api.FormatTSV
	runSplit(t, []splitCase{
		{name: "title column, empty values left out", file: "people.csv", format: csv,
			content: "name,age\nAna,30\nBo,\n",
			want: []piece{
				{path: "data/people/ana.md", title: "Ana", text: "- **name**: Ana\n- **age**: 30", task: "Row 1 (line 2)"},
				{path: "data/people/bo.md", title: "Bo", text: "- **name**: Bo", task: "Row 2 (line 3)"},
			}},
		{name: "no title column: first value", file: "cities.csv", format: csv,
			content: "city,pop\n,500\nLisbon,545\n",
			want: []piece{
				{path: "data/cities/500.md", title: "500", text: "- **pop**: 500", task: "Row 1 (line 2)"},
				{path: "data/cities/lisbon.md", title: "Lisbon", text: "- **city**: Lisbon\n- **pop**: 545", task: "Row 2 (line 3)"},
			}},
		{name: "title column preferred to the first, else the row", file: "posts.csv", format: csv,
			content: "id,Title\n7,Hello\n8,\n",
			want: []piece{
				{path: "data/posts/hello.md", title: "Hello", text: "- **id**: 7\n- **Title**: Hello", task: "Row 1 (line 2)"},
				{path: "data/posts/row_2.md", title: "Row 2", text: "- **id**: 8", task: "Row 2 (line 3)"},
			}},
		{name: "header cells trimmed and named", file: "h.csv", format: csv,
			content: " name ,,x\nA,b,c\n",
			want:    []piece{{path: "data/h/a.md", title: "A", text: "- **name**: A\n- **Column 2**: b\n- **x**: c", task: "Row 1 (line 2)"}}},
		{name: "quoted fields", file: "q.csv", format: csv,
			content: "name,note\n\"Lee, A\",\"He said \"\"hi\"\"\nthen left\"\nZed,z\n",
			want: []piece{
				{path: "data/q/lee_a.md", title: "Lee, A", text: "- **name**: Lee, A\n- **note**: He said \"hi\"\n  then left", task: "Row 1 (line 2)"},
				// The line is where the row starts, after the quoted line break.
				{path: "data/q/zed.md", title: "Zed", text: "- **name**: Zed\n- **note**: z", task: "Row 2 (line 4)"},
			}},
		// An empty row is skipped but still counted; blank lines are not rows.
		{name: "blank lines and empty rows", file: "b.csv", format: csv,
			content: "a,b\n\n,\nx,y\n",
			want:    []piece{{path: "data/b/x.md", title: "x", text: "- **a**: x\n- **b**: y", task: "Row 2 (line 4)"}}},
		{name: "values trimmed, CRLF", file: "v.csv", format: csv,
			content: "name,n\r\n  Ana  ,1\r\n",
			want:    []piece{{path: "data/v/ana.md", title: "Ana", text: "- **name**: Ana\n- **n**: 1", task: "Row 1 (line 2)"}}},
		{name: "long value titles short", file: "l.csv", format: csv,
			content: "summary\n" + strings.Repeat("word ", 20) + "\n",
			want: []piece{{path: "data/l/" + strings.TrimSuffix(strings.Repeat("word_", 14), "_") + ".md", title: strings.TrimSpace(strings.Repeat("word ", 14)) + "…",
				text: "- **summary**: " + strings.TrimSpace(strings.Repeat("word ", 20)), task: "Row 1 (line 2)"}}},
		{name: "repeated titles", file: "r.csv", format: csv,
			content: "name\nx\nx\n",
			want: []piece{
				{path: "data/r/x.md", title: "x", text: "- **name**: x", task: "Row 1 (line 2)"},
				{path: "data/r/x_2.md", title: "x", text: "- **name**: x", task: "Row 2 (line 3)"},
			}},
		{name: "Domain option", file: "r.csv", format: csv, opts: api.IngestOptions{Domain: "crm"},
			content: "name\nx\n",
			want:    []piece{{path: "crm/r/x.md", title: "x", text: "- **name**: x", task: "Row 1 (line 2)"}}},
		{name: "header only", file: "h.csv", format: csv, content: "a,b\n"},
		{name: "empty", file: "e.csv", format: csv, content: ""},
		{name: "TSV keeps commas", file: "w.tsv", format: tsv,
			content: "name\tnote\nAna\tuses, commas\n",
			want:    []piece{{path: "data/w/ana.md", title: "Ana", text: "- **name**: Ana\n- **note**: uses, commas", task: "Row 1 (line 2)"}}},
		{name: ".tab is TSV", file: "w.tab", format: tsv,
			content: "k\tv\n1\t2\n",
			want:    []piece{{path: "data/w/1.md", title: "1", text: "- **k**: 1\n- **v**: 2", task: "Row 1 (line 2)"}}},
	})
}

// decodeValue keeps the order of object keys, which encoding/json's maps
// would lose, and compact writes a value back as the JSON it was.
func TestDecodeValue(t *testing.T) {
	tests := []struct {
		in, compact, inline string
	}{
		{`{"z":1,"a":2,"m":{"y":true,"b":null}}`, `{"z":1,"a":2,"m":{"y":true,"b":null}}`, `{"z":1,"a":2,"m":{"y":true,"b":null}}`},
		{`[ "a" , 1.0 , [ ] , { } ]`, `["a",1.0,[],{}]`, `["a",1.0,[],{}]`},
		{`["a", " b ", 3]`, `["a"," b ",3]`, "a, b, 3"},
		{`"<tag> & \u00e9"`, `"\u003ctag\u003e \u0026 é"`, "<tag> & é"},
		{`  " padded "  `, `" padded "`, "padded"},
		{`-1.5e10`, `-1.5e10`, "-1.5e10"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(tc.in))
			dec.UseNumber()
			v, err := decodeValue(dec)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.compact(); got != tc.compact {
				t.Errorf("compact = %s, want %s", got, tc.compact)
			}
			if got := v.inline(); got != tc.inline {
				t.Errorf("inline = %q, want %q", got, tc.inline)
			}
		})
	}
}

func TestRecordTitle(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`{"title":"T","name":"N"}`, "T"},
		{`{"name":"N","title":"T"}`, "T"},
		{`{"NAME":"N","key":"k"}`, "N"},
		{`{"subject":"S","summary":"M"}`, "S"},
		{`{"summary":"M","label":"L"}`, "M"},
		{`{"label":"L","id":"i"}`, "L"},
		{`{"id":12,"key":"k"}`, "12"},
		{`{"key":true}`, "true"},
		{`{"title":"   ","name":["a"],"id":"i"}`, "i"},
		{`{"other":"x"}`, "fallback"},
		{`["title"]`, "fallback"},
		{`{"title":"# Heading\nsecond line"}`, "Heading"},
	}
	for _, tc := range tests {
		dec := json.NewDecoder(strings.NewReader(tc.in))
		dec.UseNumber()
		v, err := decodeValue(dec)
		if err != nil {
			t.Fatal(err)
		}
		if got := recordTitle(v, "fallback"); got != tc.want {
			t.Errorf("recordTitle(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
