// Package paging turns page-by-page fetches into Go iterators. It is the
// one pager of the SDK: every listing that pages goes through Seq.
package paging

import (
	"context"
	"iter"
)

// Page is one page of a listing: its items, and the cursor of the next
// page (ignored when Last is true).
type Page[T, C any] struct {
	Items []T
	Next  C
	Last  bool
}

// Fetch reads the page at cursor.
type Fetch[T, C any] func(ctx context.Context, cursor C) (Page[T, C], error)

// Pages iterates over whole pages from first until a page says it is the
// last. A fetch error is yielded once and ends the iteration; so does the
// context's error once it is cancelled.
func Pages[T, C any](ctx context.Context, first C, fetch Fetch[T, C]) iter.Seq2[Page[T, C], error] {
	return func(yield func(Page[T, C], error) bool) {
		cursor := first
		for {
			if err := ctx.Err(); err != nil {
				yield(Page[T, C]{}, err)
				return
			}
			p, err := fetch(ctx, cursor)
			if err != nil {
				yield(Page[T, C]{}, err)
				return
			}
			if !yield(p, nil) || p.Last {
				return
			}
			cursor = p.Next
		}
	}
}

// Seq iterates over the items of every page from first on.
func Seq[T, C any](ctx context.Context, first C, fetch Fetch[T, C]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for p, err := range Pages(ctx, first, fetch) {
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range p.Items {
				if !yield(it, nil) {
					return
				}
			}
		}
	}
}

// Collect gathers every item of seq, stopping at the first error.
func Collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for it, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, it)
	}
	return out, nil
}
