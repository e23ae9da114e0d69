package paging

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// pages serves items 0..n-1 in pages of size, by page number.
func pages(n, size int, calls *int) Fetch[int, int] {
	return func(_ context.Context, p int) (Page[int, int], error) {
		*calls++
		var items []int
		for i := p * size; i < min(n, (p+1)*size); i++ {
			items = append(items, i)
		}
		return Page[int, int]{Items: items, Next: p + 1, Last: (p+1)*size >= n}, nil
	}
}

func TestSeqAllPages(t *testing.T) {
	calls := 0
	got, err := Collect(Seq(context.Background(), 0, pages(7, 3, &calls)))
	if err != nil || !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6}) || calls != 3 {
		t.Fatalf("got %v, %v after %d fetches", got, err, calls)
	}
}

func TestSeqStopsEarly(t *testing.T) {
	calls := 0
	for v, err := range Seq(context.Background(), 0, pages(100, 3, &calls)) {
		if err != nil || v == 4 {
			break
		}
	}
	if calls != 2 {
		t.Fatalf("%d fetches for 5 items of pages of 3, want 2", calls)
	}
}

func TestSeqYieldsErrorOnce(t *testing.T) {
	boom := errors.New("boom")
	fetch := func(_ context.Context, p int) (Page[int, int], error) {
		if p == 1 {
			return Page[int, int]{}, boom
		}
		return Page[int, int]{Items: []int{1, 2}, Next: 1}, nil
	}
	var items []int
	var errs []error
	for v, err := range Seq(context.Background(), 0, fetch) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		items = append(items, v)
	}
	if !slices.Equal(items, []int{1, 2}) || len(errs) != 1 || !errors.Is(errs[0], boom) {
		t.Fatalf("items %v errs %v", items, errs)
	}
	got, err := Collect(Seq(context.Background(), 0, fetch))
	if !errors.Is(err, boom) || len(got) != 2 {
		t.Fatalf("Collect: %v %v", got, err)
	}
}

func TestSeqCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	var err error
	for v, e := range Seq(ctx, 0, pages(100, 2, &calls)) {
		if e != nil {
			err = e
			break
		}
		if v == 1 {
			cancel()
		}
	}
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("err %v after %d fetches, want context.Canceled after 1", err, calls)
	}
}

func TestPagesCarryCursor(t *testing.T) {
	calls := 0
	var next []int
	for p, err := range Pages(context.Background(), 0, pages(5, 2, &calls)) {
		if err != nil {
			t.Fatal(err)
		}
		next = append(next, p.Next)
	}
	if !slices.Equal(next, []int{1, 2, 3}) {
		t.Fatalf("cursors %v", next)
	}
}
