package reports

import (
	"context"
	"fmt"
	"iter"

	"github.com/partnerapi/partner-go/reports/internal/export"
)

// Checkpoint is where an export of a view stands: the rows it yielded so
// far. A view's data never changes, so an export that stopped (an error,
// Ctrl-C, a break out of the loop) goes on from its last checkpoint with
// ExportOptions.From, on the same view, instead of starting over. It is
// JSON-serialisable, to be kept beside the partial output.
type Checkpoint struct {
	// ViewID is the view the export reads.
	ViewID int64 `json:"view_id"`
	// PageSize is the export's rows per page request; an export from
	// this checkpoint uses it.
	PageSize int64 `json:"page_size"`
	// NextPage is the page holding the next row to yield, from 0.
	NextPage int64 `json:"next_page"`
	// PageRows is how many rows of NextPage were yielded already.
	PageRows int64 `json:"page_rows"`
	// Rows is how many rows the export yielded in all, those yielded
	// before the checkpoint it started from included.
	Rows int64 `json:"rows"`
}

// check reports what makes c unusable to go on reading view viewID.
func (c *Checkpoint) check(viewID int64) error {
	switch {
	case c.ViewID <= 0:
		return fmt.Errorf("partner: reports: checkpoint: view id must be positive, got %d", c.ViewID)
	case c.ViewID != viewID:
		return fmt.Errorf("partner: reports: checkpoint of view %d, not of view %d", c.ViewID, viewID)
	case c.PageSize < 1 || c.PageSize > MaxPageSize:
		return fmt.Errorf("partner: reports: checkpoint: page size must be between 1 and %d, got %d", MaxPageSize, c.PageSize)
	case c.NextPage < 0 || c.PageRows < 0 || c.PageRows >= c.PageSize || c.Rows < 0:
		return fmt.Errorf("partner: reports: checkpoint: next page %d, page rows %d, rows %d are not a position in pages of %d",
			c.NextPage, c.PageRows, c.Rows, c.PageSize)
	}
	return nil
}

// checkpointRows flattens the pages of a view read from cp.NextPage into
// rows, skipping the first cp.PageRows of that page, and tells each
// position reached to opts.Checkpoint (after every page whose rows were
// all yielded, and where the iteration stops early) and the rows so far
// to opts.Progress (after every page). A row is yielded once the loop
// body received it: a body that breaks on a row has it, and an export
// from that checkpoint starts after it. pages yields page cp.NextPage
// first.
func checkpointRows(ctx context.Context, cp Checkpoint, opts ExportOptions, pages iter.Seq2[*Page, error]) iter.Seq2[Row, error] {
	tell := func() {
		if opts.Checkpoint != nil {
			opts.Checkpoint(cp)
		}
	}
	return func(yield func(Row, error) bool) {
		for p, err := range pages {
			if err == nil {
				err = ctx.Err()
			}
			if err != nil {
				tell()
				yield(Row{}, err)
				return
			}
			for i := cp.PageRows; i < int64(len(p.Rows)); i++ {
				if err := ctx.Err(); err != nil {
					tell()
					yield(Row{}, err)
					return
				}
				cp.PageRows++
				cp.Rows++
				if cp.PageRows == cp.PageSize {
					cp.NextPage, cp.PageRows = cp.NextPage+1, 0
				}
				if !yield(p.Rows[i], nil) {
					tell()
					return
				}
			}
			if cp.PageRows != 0 {
				// A short page is the last one: the next page holds
				// none.
				cp.NextPage, cp.PageRows = cp.NextPage+1, 0
			}
			if opts.Progress != nil {
				opts.Progress(cp.Rows)
			}
			tell()
		}
	}
}

// fromPage returns fetch with its page numbers counted from page start:
// the engine's page n is the view's page start+n, and its probe of the
// row at n (size 1) the view's row start*size+n.
func fromPage(start, size int64, fetch export.Fetch[*Page]) export.Fetch[*Page] {
	if start == 0 {
		return fetch
	}
	return func(ctx context.Context, number, n int64, h export.Hooks) (export.Page[*Page], error) {
		if n == size {
			number += start
		} else {
			number += start * size
		}
		return fetch(ctx, number, n, h)
	}
}
