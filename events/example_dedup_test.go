package events_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/partnerapi/partner-go/events"
)

// A receiver whose bodies carry what identifies a change keys the guard
// on it: an opportunity that goes won, lost, won is three changes even
// though the first and last bodies hold the same stage, and the service's
// retry of the last is one of them. (Field names depend on the
// integration's schema.)
func ExampleDedup_key() {
	h := &events.Handler{
		Insecure: true, // a test: Secrets in production
		Dedup: &events.Dedup{Key: func(d *events.Delivery) string {
			if d.Fields["id"] == "" || d.Fields["last_modified"] == "" {
				return "" // keyed by the body, for DefaultDedupRetryWindow
			}
			return d.Fields["id"] + "@" + d.Fields["last_modified"]
		}},
		Deliver: func(_ context.Context, d *events.Delivery) error {
			fmt.Println("delivered:", d.Fields["stage"], d.Fields["last_modified"])
			return nil
		},
	}
	for _, body := range []string{
		`{"id":"opp-1","stage":"won","last_modified":"2026-03-01T10:00:00Z"}`,
		`{"id":"opp-1","stage":"lost","last_modified":"2026-03-01T10:05:00Z"}`,
		`{"id":"opp-1","stage":"won","last_modified":"2026-03-01T10:07:00Z"}`,
		`{"id":"opp-1","stage":"won","last_modified":"2026-03-01T10:07:00Z"}`, // the retry
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body)))
		fmt.Println(rec.Code)
	}
	// Output:
	// delivered: won 2026-03-01T10:00:00Z
	// 204
	// delivered: lost 2026-03-01T10:05:00Z
	// 204
	// delivered: won 2026-03-01T10:07:00Z
	// 204
	// 204
}
