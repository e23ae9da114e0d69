package scim

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/internal/errs"
	"github.com/partnerapi/partner-go/internal/paging"
	"github.com/partnerapi/partner-go/internal/plumbing"
	"github.com/partnerapi/partner-go/internal/text"
)

// ErrNotFound is returned by FindByUserName when no user has the userName.
// partner.IsNotFound reports true for it, as for a 404 answer.
var ErrNotFound = errs.NotFound("partner: scim: no user with that userName")

// ListParams selects the users List returns. The zero value lists every
// user.
type ListParams struct {
	// Filter is a SCIM filter expression (RFC 7644 §3.4.2.2). The
	// deployed service documents only `userName eq "..."` (build the
	// value with Quote, or use FindByUserName); other filters may be
	// refused with a 400 invalidFilter, as the fake does unless
	// fake.WithFullSCIMFilter is set. Empty lists every user.
	Filter string `url:"filter,omitempty"`
	// StartIndex is the 1-based index of the first user to return; 0
	// means 1.
	StartIndex int `url:"startIndex,omitempty"`
	// Count is the number of users asked for per page; 0 leaves it to
	// the service, which also caps it. It is a page size, not a limit on
	// the whole listing: stop iterating to stop early.
	Count int `url:"count,omitempty"`
	// Checkpoint, when set, is called with the StartIndex that goes on
	// with the listing, as ListOptions.Checkpoint is with a ListCheckpoint.
	//
	// Deprecated: Use ListWith with ListOptions.Checkpoint, which keeps
	// resumption out of the request's parameters, as reports'
	// ExportOptions do.
	Checkpoint func(startIndex int) `url:"-"`
}

// ListCheckpoint is where a listing stands: the StartIndex that goes on
// with it, and the Filter it reads. Store it as it is (it is plain JSON)
// and pass it back as ListOptions.From.
type ListCheckpoint struct {
	Filter     string `json:"filter,omitempty"`
	StartIndex int    `json:"startIndex"`
}

// ListOptions tune ListWith: where a listing goes on from, and where it
// stands as it goes, in the shape of reports' ExportOptions.
type ListOptions struct {
	// From, when set, goes on with a listing that stopped: the listing
	// starts at From.StartIndex. From.Filter must be the params' Filter:
	// a checkpoint of another listing is refused before anything is sent.
	From *ListCheckpoint
	// Checkpoint, when set, is called on the iterating goroutine with
	// where the listing stands: after every page whose users were all
	// yielded, and once more where the iteration stops early (an error,
	// or a break out of the loop, after the user it broke on). ListWith
	// From that checkpoint yields the users not yielded yet, as long as
	// no user before it was added or removed meanwhile: unlike a report's
	// view, the listing is read live.
	Checkpoint func(ListCheckpoint)
}

// listed is a user of a page and the start index after it.
type listed struct {
	user User
	next int
	last bool // the page's last user yielded
}

// listResponse is one page of a listing (RFC 7644 §3.4.2): the total
// number of matches, the 1-based index of the page's first user and the
// users of the page.
type listResponse struct {
	Schemas      []Schema `json:"schemas"`
	TotalResults int      `json:"totalResults"`
	StartIndex   int      `json:"startIndex"`
	ItemsPerPage int      `json:"itemsPerPage"`
	Resources    []User   `json:"Resources"`
}

// List iterates over the users matching p, page after page: GET
// /api/scim/v2/Users?filter=...&startIndex=...&count=... Each page starts
// where the previous one ended. The listing ends on an empty page, or on a
// page shorter than p.Count unless totalResults says more users follow.
// totalResults alone never ends it: the deployed service's published
// example answers totalResults 0 and startIndex 0 beside a resource. With
// p.Count 0 the page size is unknown and List reads until an empty page;
// set Count to save that last request. The first error (a 400 with SCIMType ErrorTypeInvalidFilter for
// a filter the service refuses, the context's error, ...) is yielded and
// ends the iteration.
//
// Each user is yielded once (by id, or userName when it has no id). A
// page that brings no user not already seen ends the listing with an
// error (ErrPageRepeated): a service that ignores startIndex answers the
// same page again and again, and reading on would never end.
//
// The pages are separate requests: a user created or changed while the
// listing runs may be missed.
func (s *Service) List(ctx context.Context, p ListParams) iter.Seq2[User, error] {
	var opts ListOptions
	if p.Checkpoint != nil {
		opts.Checkpoint = func(c ListCheckpoint) { p.Checkpoint(c.StartIndex) }
	}
	return s.ListWith(ctx, p, opts)
}

// ListWith is List with options: it goes on from opts.From and tells
// where it stands to opts.Checkpoint.
func (s *Service) ListWith(ctx context.Context, p ListParams, opts ListOptions) iter.Seq2[User, error] {
	start, err := p.start(opts.From)
	if err != nil {
		return func(yield func(User, error) bool) { yield(User{}, err) }
	}
	tell := func(index int) {
		if opts.Checkpoint != nil {
			opts.Checkpoint(ListCheckpoint{Filter: p.Filter, StartIndex: index})
		}
	}
	return func(yield func(User, error) bool) {
		seen := map[string]struct{}{}
		at := start // the start index after the users yielded
		for l, err := range paging.Seq(ctx, start, func(ctx context.Context, index int) (paging.Page[listed, int], error) {
			q := p
			q.StartIndex = index
			var lr listResponse
			if err := s.t.Do(ctx, &core.Request{Op: "scim.List", Method: http.MethodGet, Path: usersPath, Query: q}, &lr); err != nil {
				return paging.Page[listed, int]{}, err
			}
			next := index + len(lr.Resources)
			fresh := unseen(seen, index, lr.Resources)
			if len(lr.Resources) > 0 && len(fresh) == 0 {
				return paging.Page[listed, int]{}, fmt.Errorf("%w: the page at startIndex %d holds only users listed before (the service seems to ignore startIndex)",
					ErrPageRepeated, index)
			}
			if len(fresh) > 0 {
				fresh[len(fresh)-1].next, fresh[len(fresh)-1].last = next, true
			}
			return paging.Page[listed, int]{Items: fresh, Next: next, Last: lastPage(p.Count, next, lr)}, nil
		}) {
			if err != nil {
				tell(at)
				yield(User{}, err)
				return
			}
			at = l.next
			if !yield(l.user, nil) {
				tell(at)
				return
			}
			if l.last {
				tell(at)
			}
		}
	}
}

// unseen returns the users of page, which starts at index, that are not
// in seen (by id, or userName when a user has no id), each with the start
// index after it, and adds them to seen.
func unseen(seen map[string]struct{}, index int, page []User) []listed {
	var fresh []listed
	for i, u := range page {
		key := u.ID
		if key == "" {
			key = "userName:" + u.UserName
		}
		if _, ok := seen[key]; !ok {
			seen[key] = struct{}{}
			fresh = append(fresh, listed{user: u, next: index + i + 1})
		}
	}
	return fresh
}

// ErrPageRepeated ends a listing (List) whose service answered a page of
// users that were all listed before: a service that ignores startIndex
// would otherwise be asked for the same page forever. Test for it with
// errors.Is.
var ErrPageRepeated = errors.New("partner: scim: listing stopped: a page brought no new user")

// lastPage reports whether the page lr, after which the listing is at
// index next, ends a listing that asked for count users per page.
// itemsPerPage is not a page size (RFC 7644 makes it the number of
// resources on this page), so it is not used.
func lastPage(count, next int, lr listResponse) bool {
	n := len(lr.Resources)
	switch {
	case n == 0:
		return true
	case count == 0 || n >= count:
		return false // a full page, or no page size known: read on
	}
	return next > lr.TotalResults // short: ends unless the total says more follow
}

// start checks p, and from when it is set, before anything is sent, and
// returns the start index of the listing's first page.
func (p ListParams) start(from *ListCheckpoint) (int, error) {
	switch {
	case p.StartIndex < 0:
		return 0, fmt.Errorf("partner: scim: startIndex must be 1 or more, not %d", p.StartIndex)
	case p.Count < 0:
		return 0, fmt.Errorf("partner: scim: count must not be negative, not %d", p.Count)
	case from == nil:
		return max(p.StartIndex, 1), nil
	case from.Filter != p.Filter:
		return 0, fmt.Errorf("partner: scim: the checkpoint is of the listing with filter %q, not %q: list from its start or with its filter", from.Filter, p.Filter)
	case from.StartIndex < 1:
		return 0, fmt.Errorf("partner: scim: the checkpoint's startIndex must be 1 or more, not %d", from.StartIndex)
	}
	return from.StartIndex, nil
}

// FindByUserName returns the user whose userName is userName (compared
// without regard to case by the service), listing with the filter
// `userName eq "<userName>"` (GET /api/scim/v2/Users). It returns
// ErrNotFound when there is none.
func (s *Service) FindByUserName(ctx context.Context, userName string) (u *User, err error) {
	ctx, span := plumbing.Of(s.t).StartSpan(ctx, "scim.FindByUserName")
	defer func() { plumbing.EndSpan(span, err) }()
	if strings.TrimSpace(userName) == "" {
		return nil, errors.New("partner: scim: userName is required")
	}
	for u, err := range s.List(ctx, ListParams{Filter: "userName eq " + Quote(userName), Count: 1}) {
		if err != nil {
			return nil, err
		}
		return &u, nil
	}
	return nil, ErrNotFound
}

// Quote returns s as a string value of a SCIM filter: a JSON string (RFC
// 7644 §3.4.2.2), in double quotes with `"`, `\` and control characters
// (DEL included) escaped and bytes that are not valid UTF-8 replaced by
// \ufffd, so that any value is compared as it is and cannot change the
// expression around it.
//
//	filter := "emails.value eq " + scim.Quote(addr)
func Quote(s string) string {
	var b strings.Builder
	text.Quote(&b, s)
	return b.String()
}
