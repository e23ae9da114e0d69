package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
)

func benchPageBytes(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"version":3,"endOfList":false,"results":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"Deal ID":%d,"Partner":"Partner %03d","Region":"EMEA","Stage":"negotiation","Amount":%d.5,"Registered":"2025-03-%02d","Active":true,"Owner":"owner%d@example.com","Score":%d,"Note":null}`,
			100000+i, i%250, 1000+i%9000, 1+i%28, i%100, i%1000)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func BenchmarkDecodePage10k(b *testing.B) {
	data := benchPageBytes(10000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var p Page
		if _, err := decodePage(bytes.NewReader(data), int64(len(data)), 10000, &p); err != nil {
			b.Fatal(err)
		}
	}
}

// The first decoder, on encoding/json tokens, kept as the baseline of
// the scanner that replaced it.

// decodePageTokens reads a report data page: {"version", "endOfList",
// "results": [rows]}, members in any order, unknown members skipped.
func decodePageTokens(r io.Reader, p *Page) error {
	d := newRowDecoder(r)
	if err := d.expect('{'); err != nil {
		return err
	}
	for d.dec.More() {
		kt, err := d.dec.Token()
		if err != nil {
			return err
		}
		switch kt {
		case "version":
			var v json.Number
			if err := d.dec.Decode(&v); err != nil {
				return fmt.Errorf("version: %w", err)
			}
			if v != "" {
				if p.Version, err = v.Int64(); err != nil {
					return fmt.Errorf("version: %w", err)
				}
			}
		case "endOfList":
			if err := d.dec.Decode(&p.EndOfList); err != nil {
				return fmt.Errorf("endOfList: %w", err)
			}
		case "results":
			if err := d.results(p); err != nil {
				return fmt.Errorf("results: %w", err)
			}
		default:
			var skip json.RawMessage
			if err := d.dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	return d.expect('}')
}

func (d *rowDecoder) results(p *Page) error {
	tok, err := d.dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("expected an array, got %v", tok)
	}
	for d.dec.More() {
		r, err := d.row()
		if err != nil {
			return fmt.Errorf("row %d: %w", len(p.Rows), err)
		}
		p.Rows = append(p.Rows, r)
	}
	_, err = d.dec.Token()
	return err
}

// rowDecoder reads rows from a JSON token stream, keeping member order.
// Consecutive rows with the same keys share one column list.
type rowDecoder struct {
	dec  *json.Decoder
	last *columns
}

func newRowDecoder(r io.Reader) *rowDecoder {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	return &rowDecoder{dec: dec}
}

var errNotObject = errors.New("row is not a JSON object")

func (d *rowDecoder) expect(want json.Delim) error {
	tok, err := d.dec.Token()
	if err != nil {
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != want {
		return fmt.Errorf("expected %q, got %v", want, tok)
	}
	return nil
}

// row reads one JSON object as a Row.
func (d *rowDecoder) row() (Row, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return Row{}, err
	}
	if tok != json.Delim('{') {
		return Row{}, errNotObject
	}
	n := 0
	if d.last != nil {
		n = len(d.last.names)
	}
	vals := make([]any, 0, n)
	keys := newRowKeys(d.last, false)
	for i := 0; d.dec.More(); i++ {
		kt, err := d.dec.Token()
		if err != nil {
			return Row{}, err
		}
		key, _ := kt.(string)
		keys.add(i, key)
		v, err := d.value()
		if err != nil {
			return Row{}, err
		}
		vals = append(vals, v)
	}
	if _, err := d.dec.Token(); err != nil { // '}'
		return Row{}, err
	}
	cols := keys.columns(len(vals))
	d.last = cols
	return Row{cols: cols, src: &source{vals: vals}}, nil
}

// value reads one JSON value.
func (d *rowDecoder) value() (any, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('['):
		arr := []any{}
		for d.dec.More() {
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := d.dec.Token()
		return arr, err
	case json.Delim('{'):
		obj := map[string]any{}
		for d.dec.More() {
			kt, err := d.dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			obj[kt.(string)] = v
		}
		_, err := d.dec.Token()
		return obj, err
	}
	return tok, nil
}

func BenchmarkDecodePageTokens10k(b *testing.B) {
	data := benchPageBytes(10000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var p Page
		if err := decodePageTokens(bytes.NewReader(data), &p); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDecodePage checks the scanner against encoding/json: it never
// panics, it accepts only valid JSON, and every row it decodes holds the
// members encoding/json finds, in the order they appear.
func FuzzDecodePage(f *testing.F) {
	for _, seed := range []string{
		`{"version":1,"endOfList":true,"results":[{"a":1,"b":"x"},{"b":null,"a":-2.5e3}]}`,
		`{"results":[{"s":"\u00e9\n\"q\"","n":[1,{"x":true}],"o":{"k":"v"}}],"extra":{"y":[1,2]}}`,
		`{"results":null}`, `{"results":[{}]}`, `{"version":"x"}`, `{"results":[1]}`, ` { "results" : [ { "a" : 01 } ] } `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Page
		_, err := decodePage(bytes.NewReader(data), int64(len(data)), 10000, &p)
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		// The members by their exact names (a struct field would take
		// "rEsults" too), the last of duplicates winning.
		var top map[string]json.RawMessage
		var ref struct{ Results []map[string]any }
		if err := json.Unmarshal(data, &top); err != nil {
			return
		}
		if raw, ok := top["results"]; ok {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&ref.Results); err != nil {
				return
			}
		}
		if len(ref.Results) != len(p.Rows) {
			t.Fatalf("%d rows, encoding/json finds %d", len(p.Rows), len(ref.Results))
		}
		for i, r := range p.Rows {
			for name, v := range r.All() {
				want, ok := ref.Results[i][name]
				if !ok {
					t.Fatalf("row %d: member %q not found by encoding/json", i, name)
				}
				got, _ := r.Get(name) // the first of duplicate keys
				_ = v
				if fmt.Sprint(got) != fmt.Sprint(want) && !hasDuplicate(r.Columns(), name) {
					t.Fatalf("row %d %q: %#v, encoding/json %#v", i, name, got, want)
				}
			}
		}
	})
}

func hasDuplicate(names []string, name string) bool {
	n := 0
	for _, x := range names {
		if x == name {
			n++
		}
	}
	return n > 1
}
