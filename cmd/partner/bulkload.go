package main

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
)

// loadSpec says what a bulk load sends.
type loadSpec struct {
	path, integration string
	format            bulk.Format // CSV, JSON or XLSX
	opportunities     bool        // the opportunity operation
}

// startLoad sends the file as one load and returns the acknowledgement.
// sent is called with the bytes sent so far. CSV and JSON go as the
// request body, XLSX as an attached file; the file is streamed, and
// rewound if the SDK must send it again.
func startLoad(ctx context.Context, c *partner.Client, spec loadSpec, sent func(int64)) (*bulk.Ack, error) {
	file, err := os.Open(spec.path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	body := &countingReader{r: file, sent: sent}
	name := filepath.Base(spec.path)
	switch {
	case spec.opportunities && spec.format == bulk.XLSX:
		return c.Bulk.LoadOpportunitiesAttachment(ctx, bulk.LoadOpportunitiesParams{IntegrationID: spec.integration, Format: spec.format}, name, body)
	case spec.opportunities:
		return c.Bulk.LoadOpportunities(ctx, bulk.LoadOpportunitiesParams{IntegrationID: spec.integration, Format: spec.format}, body)
	case spec.format == bulk.XLSX:
		return c.Bulk.LoadAttachment(ctx, bulk.LoadParams{IntegrationID: spec.integration, Format: spec.format}, name, body)
	default:
		return c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: spec.integration, Format: spec.format}, body)
	}
}

// followLoad waits for the execution to finish, calling onState once for
// each state it reads in turn. With maxErrors >= 0 the final status
// carries up to that many failed rows.
func followLoad(ctx context.Context, c *partner.Client, ack *bulk.Ack, maxErrors int, onState func(*bulk.Execution)) (*bulk.Execution, error) {
	var opts bulk.WaitOptions
	if maxErrors >= 0 {
		opts.Status = bulk.StatusParams{IncludeErrors: partner.Ptr(true), MaxErrors: partner.Ptr(maxErrors)}
	}
	var last bulk.State
	opts.Progress = func(ex *bulk.Execution) {
		if ex.Status != last {
			last = ex.Status
			onState(ex)
		}
	}
	return c.Bulk.WaitExecution(ctx, ack, opts)
}

// csvHeader returns the header row of a CSV file, or nil.
func csvHeader(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	h, err := csv.NewReader(f).Read()
	if err != nil {
		return nil
	}
	if len(h) > 0 {
		h[0] = strings.TrimPrefix(h[0], "\ufeff")
	}
	return h
}

// writeRowErrors writes failed rows as CSV: id, message, then the union of
// the rows' columns, in the order of order (the loaded file's header, when
// it has one) and then sorted (a row given only as text goes in a column
// "row").
func writeRowErrors(path string, errs []bulk.RowError, order []string) error {
	var cols []string
	seen := map[string]bool{}
	text := false
	for _, e := range errs {
		for k := range e.Row {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
		text = text || (e.Row == nil && e.RowText != "")
	}
	rank := func(c string) int {
		if i := slices.Index(order, c); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(cols, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	header := append([]string{"id", "message"}, cols...)
	if text {
		header = append(header, "row")
	}
	w.Write(header)
	for _, e := range errs {
		rec := []string{e.ID, e.Message}
		for _, k := range cols {
			v, ok := e.Row[k]
			if !ok {
				rec = append(rec, "")
				continue
			}
			rec = append(rec, cellText(v))
		}
		if text {
			rec = append(rec, e.RowText)
		}
		w.Write(rec)
	}
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}

// cellText is a value as a CSV cell: strings as they are, others as JSON.
func cellText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return text(v)
}

// countingReader reports the bytes read from r. It is
// an io.ReadSeeker, so the SDK can still rewind the body for a retry.
type countingReader struct {
	r    io.ReadSeeker
	sent func(int64)
	n    int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.sent(c.n)
	return n, err
}

func (c *countingReader) Seek(off int64, whence int) (int64, error) {
	pos, err := c.r.Seek(off, whence)
	if err == nil {
		c.n = pos
		c.sent(pos)
	}
	return pos, err
}
