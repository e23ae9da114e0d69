package fake_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
)

// A middleware sees every request to the service's routes and its
// answer: here it prints each one's method, path and status.
func ExampleWithMiddleware() {
	logRequests := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(rec, r)
			fmt.Println(r.Method, r.URL.Path, rec.status)
		})
	}
	srv := fake.NewServer(fake.WithDemoData(), fake.WithMiddleware(logRequests))
	defer srv.Close()
	c, err := partner.New(partner.WithBaseURL(srv.URL),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Objects.ExternalIDs(context.Background(), "no-such-object"); !partner.IsNotFound(err) {
		log.Fatal(err)
	}
	// Output:
	// POST /oauth/token 200
	// GET /app/v1/object/no-such-object/external_id 404
}

// statusWriter remembers the status of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
