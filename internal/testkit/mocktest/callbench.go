package mocktest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
)

// CannedServer starts a loopback server for per-call benchmarks, which
// measure the client, not a fake: it reads every request body, answers
// the token endpoint with AccessToken and RefreshToken, and passes any
// other request to answer, whose false means a 404. Content-Type is
// application/json unless answer sets another. The caller closes it.
func CannedServer(answer func(w http.ResponseWriter, r *http.Request) bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/oauth/token" {
			io.WriteString(w, `{"access_token":"`+AccessToken+`","refresh_token":"`+RefreshToken+`","token_type":"Bearer","expires_in":3600}`)
			return
		}
		if !answer(w, r) {
			http.Error(w, `{"error":"no"}`, http.StatusNotFound)
		}
	}))
}

// LoopbackClient returns a client of srv over plain HTTP with client
// credentials and opts, as a per-call benchmark uses it.
func LoopbackClient(tb testing.TB, srv *httptest.Server, opts ...partner.Option) *partner.Client {
	tb.Helper()
	c, err := partner.New(append([]partner.Option{partner.WithBaseURL(srv.URL), partner.WithInsecureHTTP(),
		partner.WithClientCredentials("id", "secret")}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// CallBench runs sdk and hand-written calls: each alone (allocations),
// then both interleaved in one loop, reporting each one's time and their
// ratio (sdk/hand), so that a noisy machine slows both alike.
func CallBench(b *testing.B, sdk, hand func() error) {
	for _, w := range []struct {
		name string
		call func() error
	}{{"sdk", sdk}, {"hand-written", hand}} {
		b.Run(w.name, func(b *testing.B) {
			if err := w.call(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := w.call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		var ts, th time.Duration
		i := 0
		for b.Loop() {
			for j := range 2 {
				start := time.Now()
				var err error
				if (i+j)%2 == 0 {
					err = sdk()
					ts += time.Since(start)
				} else {
					err = hand()
					th += time.Since(start)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			i++
		}
		b.ReportMetric(float64(ts.Nanoseconds())/float64(i), "sdk-ns/call")
		b.ReportMetric(float64(th.Nanoseconds())/float64(i), "hand-ns/call")
		b.ReportMetric(float64(ts)/float64(th), "sdk/hand")
	})
}
