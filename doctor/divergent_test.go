package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/contract"
)

// rewrite edits the JSON answer of one route of the fake.
type rewrite struct {
	method, path string // path: a prefix of the request's path; ending in "$", the path itself
	edit         func(v map[string]any)
	// request, if set, edits the request's JSON body on its way to the
	// fake.
	request func(v map[string]any)
}

// divergent serves the fake through a proxy that applies rewrites to its
// answers, and refuses every request but the token's without the header
// require names, when it is set.
func divergent(t *testing.T, srv *fake.Server, require string, tokenToo bool, rewrites ...rewrite) string {
	t.Helper()
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		r := resp.Request
		for _, rw := range rewrites {
			if r.Method != rw.method || !rw.matches(r.URL.Path) {
				continue
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			var v map[string]any
			if err := json.Unmarshal(b, &v); err != nil {
				return err
			}
			rw.edit(v)
			if b, err = json.Marshal(v); err != nil {
				return err
			}
			resp.Body = io.NopCloser(bytes.NewReader(b))
			resp.ContentLength = int64(len(b))
			resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
			resp.StatusCode = http.StatusOK
		}
		return nil
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if require != "" && (tokenToo || r.URL.Path != "/oauth/token") && r.Header.Get(require) == "" {
			refuseWithout(w, r, require)
			return
		}
		for _, rw := range rewrites {
			if rw.request != nil && r.Method == rw.method && rw.matches(r.URL.Path) {
				var v map[string]any
				json.NewDecoder(r.Body).Decode(&v)
				rw.request(v)
				b, _ := json.Marshal(v)
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// matches reports whether the rewrite applies to a request's path.
func (rw rewrite) matches(path string) bool {
	if exact, ok := strings.CutSuffix(rw.path, "$"); ok {
		return path == exact
	}
	return strings.HasPrefix(path, rw.path)
}

// refuseWithout answers 400 naming the header the request lacks, as an
// OAuth error on the token endpoint.
func refuseWithout(w http.ResponseWriter, r *http.Request, header string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	msg := `{"message": "header ` + header + ` is required"}`
	if r.URL.Path == "/oauth/token" {
		msg = `{"error": "invalid_request", "error_description": "header ` + header + ` is required"}`
	}
	io.WriteString(w, msg)
}

// each applies f to every object of the list member name of v.
func each(v map[string]any, name string, f func(item map[string]any)) {
	list, _ := v[name].([]any)
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			f(m)
		}
	}
}

// TestDivergentServers: each change a deployment makes to what the fake
// answers is named by operation and member, and nothing else is.
func TestDivergentServers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		require  string
		tokenToo bool // require the header of token requests too
		rewrites []rewrite
		deploy   *fake.Deployment
		want     []string
	}{{
		name: "a member renamed",
		rewrites: []rewrite{{"POST", "/report/v1/list", func(v map[string]any) {
			each(v, "results", func(r map[string]any) { r["title"] = r["name"]; delete(r, "name") })
		}, nil}},
		want: []string{"getReports /results/[]/name", "getReports /results/[]/title"},
	}, {
		name: "a member dropped",
		rewrites: []rewrite{{"GET", "/event/v1/metadata/integration", func(v map[string]any) {
			each(v, "integrations", func(r map[string]any) { delete(r, "integration_type") })
		}, nil}},
		want: []string{"GetIntegrationList /integrations/[]/integration_type"},
	}, {
		name:     "a type changed",
		rewrites: []rewrite{{"POST", "/report/v1/101/chart-data", func(v map[string]any) { v["reportVersion"] = "1" }, nil}},
		want:     []string{"getChartData /reportVersion"},
	}, {
		name:    "a header required",
		require: "X-Tenant",
		want:    []string{"searchViaGet request"},
	}, {
		name:     "a header required by the token endpoint too",
		require:  "X-Acme-Env",
		tokenToo: true,
		want:     []string{"post-token request"},
	}, {
		name: "a list that never ends",
		// Every page is the first, as of a deployment that pages otherwise.
		rewrites: []rewrite{{"POST", "/report/v1/list", func(v map[string]any) { v["endOfList"] = false },
			func(v map[string]any) { v["page"] = map[string]any{"number": 0, "size": 100} }}},
		want: []string{"getReports /endOfList"},
	}, {
		name: "report rows that never end",
		// Every page of rows is the first, as of a deployment that pages
		// otherwise.
		rewrites: []rewrite{{"POST", "/report/v1/101/data$", func(v map[string]any) { v["endOfList"] = false },
			func(v map[string]any) { v["page"] = map[string]any{"number": 0, "size": 100} }}},
		want: []string{"getReportData /endOfList"},
	}, {
		name: "SCIM totals beyond the users listed",
		// The pages after the last are empty, as the fake's are, but
		// totalResults promises more: the list ends at the empty page.
		rewrites: []rewrite{{"GET", "/api/scim/v2/Users$", func(v map[string]any) { v["totalResults"] = 1000 }, nil}},
		want:     []string{"searchViaGet /totalResults"},
	}, {
		name: "200 with an error body",
		rewrites: []rewrite{
			{"GET", "/event/v1/subscriber", func(v map[string]any) { clear(v); v["error"] = "internal error" }, nil},
			{"GET", "/api/scim/v2/Users/doctor-no-such-user-", func(v map[string]any) { clear(v); v["message"] = "user not found" }, nil},
		},
		want: []string{"ListSubscribers /error", "ListSubscribers /items", "getUser status"},
	}, {
		name:   "SCIM totals of the published example",
		deploy: &fake.Deployment{SCIMZeroTotals: true},
		want:   []string{"searchViaGet /startIndex", "searchViaGet /totalResults"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opts []fake.Option
			if tc.deploy != nil {
				opts = append(opts, fake.WithDeployment(*tc.deploy))
			}
			// No contract check here: the proxy breaks it on purpose.
			srv := fake.NewServer(append([]fake.Option{fake.WithDemoData(), fake.WithViewDelay(0)}, opts...)...)
			t.Cleanup(srv.Close)
			cfg := fakeConfig(srv)
			cfg.Connection.BaseURL = divergent(t, srv, tc.require, tc.tokenToo, tc.rewrites...)
			r, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := members(r); !slices.Equal(got, tc.want) {
				t.Errorf("divergences %q, want %q", got, tc.want)
				for _, d := range r.Divergences() {
					t.Logf("%+v", d)
				}
			}
			for _, d := range r.Divergences() {
				if d.Fake == "" || d.Deployment == "" || d.Fake == d.Deployment {
					t.Errorf("%+v: want what the fake answers and what the deployment answered", d)
				}
			}
			if !r.Diverged() {
				t.Error("the report does not say it diverged")
			}
		})
	}
}

// TestRefusedCredentials: a refused client or a missing gateway key ends
// the run with ErrCredentialsRefused, the report naming the refusal and
// never the secret.
func TestRefusedCredentials(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		deploy fake.Deployment
		edit   func(*Config)
		want   string
	}{
		{"wrong secret", fake.Deployment{}, func(c *Config) { c.Connection.ClientSecret = "not-the-secret" }, "invalid_client"},
		{"no gateway key", fake.Deployment{SubscriptionKey: "gw-key-0123"}, func(c *Config) { c.Connection.SubscriptionKey = "" }, "Ocp-Apim-Subscription-Key"},
		{"wrong gateway key", fake.Deployment{SubscriptionKey: "gw-key-0123"}, func(c *Config) { c.Connection.SubscriptionKey = "gw-key-wrong" }, "refused the subscription key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fake.NewServer(fake.WithDemoData(), fake.WithDeployment(tc.deploy))
			t.Cleanup(srv.Close)
			cfg := fakeConfig(srv)
			tc.edit(&cfg)
			r, err := Run(context.Background(), cfg)
			if !errors.Is(err, ErrCredentialsRefused) {
				t.Fatalf("err %v, want ErrCredentialsRefused", err)
			}
			b, _ := json.Marshal(r)
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(string(b), tc.want) {
				t.Errorf("error %q and report %s: want %q in both", err, b, tc.want)
			}
			for _, secret := range []string{cfg.Connection.ClientSecret, cfg.Connection.SubscriptionKey, "gw-key-0123"} {
				if secret != "" && (strings.Contains(string(b), secret) || strings.Contains(err.Error(), secret)) {
					t.Errorf("the report or error names a secret: %s %v", b, err)
				}
			}
			if r.Diverged() {
				t.Errorf("a refusal is no divergence: %+v", r.Divergences())
			}
		})
	}
}

// readOnly are the operations Run may send without Config.PrepareView:
// its own token's and the reads. What writes is named by operation, not
// by method: several reads are POSTs.
var readOnly = []string{"post-token", "delete-token", "searchViaGet", "getUser", "check-attribute", "getReports",
	"getReportData", "getChartData", "getChartMetaData", "getReportMetadata", "getReportDataSchema",
	"checkReportViewStatus", "getReportViewMetadata", "getReportViewData", "get_external_id", "status",
	"ListSubscribers", "ReadSubscriber", "GetIntegrationList", "GetObjectEventSchema", "GetEventList", "GetEventSchema"}

// TestSendsNoWrite: every request of a run, as the fake's request log has
// it, is of a read-only operation (a view's preparation only when asked
// for, once), and the one token invalidation is of the run's own token.
func TestSendsNoWrite(t *testing.T) {
	t.Parallel()
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, prepare := range []bool{false, true} {
		srv := newFake(t)
		cfg := fakeConfig(srv)
		cfg.PrepareView = prepare
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, lr := range srv.Requests() {
			req := &http.Request{Method: lr.Method, URL: &url.URL{Path: lr.Path, RawQuery: lr.Query}, Header: http.Header{}}
			x, _ := c.CheckRequest(req, nil)
			if x == nil {
				t.Errorf("%s %s: no operation", lr.Method, lr.Path)
				continue
			}
			count[x.Operation()]++
		}
		for op, n := range count {
			switch {
			case op == "prepareExport" && prepare && n == 1:
			case !slices.Contains(readOnly, op):
				t.Errorf("PrepareView %v: sent %s %d times: not a read", prepare, op, n)
			}
		}
		if count["delete-token"] != 1 || count["post-token"] != 1 {
			t.Errorf("tokens got %d, invalidated %d; want its own, once", count["post-token"], count["delete-token"])
		}
		if len(count) < 12 {
			t.Errorf("read %d operations: %v", len(count), count)
		}
		if prepare != (count["prepareExport"] == 1) {
			t.Errorf("PrepareView %v: prepared %d views", prepare, count["prepareExport"])
		}
	}
}

// TestRedirectIsAnAnswer: a deployment that redirects gets no request
// of Run's to the other host, so no credential, token or gateway key
// reaches it; the redirect is the answer, which diverges.
func TestRedirectIsAnAnswer(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the other host got %s %s", r.Method, r.URL)
	}))
	defer other.Close()
	srv := fake.NewServer(fake.WithDemoData())
	defer srv.Close()
	cfg := fakeConfig(srv)
	cfg.Connection.SubscriptionKey = "gw-key-0123"
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/report/v1/list" {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer redirecting.Close()
	cfg.Connection.BaseURL = redirecting.URL
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := members(r); !slices.Equal(got, []string{"getReports status"}) {
		t.Errorf("divergences %q, want the redirect's status", got)
	}
}

// TestPlainHTTPRule: plain http to another machine is not sent to (the
// SDK's plain-http rule): the run fails at the connection check.
func TestPlainHTTPRule(t *testing.T) {
	t.Parallel()
	r, err := Run(context.Background(), Config{Connection: deploymentOf("http://partner.example.com")})
	if err == nil || errors.Is(err, ErrCredentialsRefused) || len(r.Checks) != 1 || r.Checks[0].Status != Failed {
		t.Fatalf("err %v, report %+v", err, r)
	}
}

// TestEnvironmentAndClock: every request names the environment in the
// deployment's header, token requests in the query too, and a service
// clock far from this machine's diverges.
func TestEnvironmentAndClock(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithWords(deployment.Words{EnvHeader: "x-acme-env"}))
	cfg := fakeConfig(srv)
	cfg.Connection.Environment = "sandbox.example.com"
	r, err := Run(context.Background(), cfg)
	if err != nil || r.Diverged() {
		t.Fatalf("%v %+v", err, r.Divergences())
	}
	for _, lr := range srv.Requests() {
		if lr.Env != cfg.Connection.Environment {
			t.Errorf("%s %s named the environment %q", lr.Method, lr.Path, lr.Env)
		}
	}
	cfg.Now = func() time.Time { return time.Now().Add(10 * time.Minute) }
	if r, err = Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if got := members(r); !slices.Equal(got, []string{"post-token Date"}) {
		t.Errorf("divergences %q, want the clock's", got)
	}
}

// TestTransientFailuresAreRetried: a read answered 503 (Retry-After 0)
// is sent again, as the SDK retries reads, and diverges only when every
// attempt fails.
func TestTransientFailuresAreRetried(t *testing.T) {
	t.Parallel()
	for _, times := range []int{attempts - 1, attempts} {
		srv := newFake(t)
		srv.InjectFault(fake.Fault{Path: "/report/v1/list", Status: http.StatusServiceUnavailable, RetryAfter: "0", Times: times})
		r, err := Run(context.Background(), fakeConfig(srv))
		if err != nil {
			t.Fatal(err)
		}
		want := []string(nil)
		if times == attempts {
			want = []string{"getReports status"}
		}
		if got := members(r); !slices.Equal(got, want) {
			t.Errorf("%d failures: divergences %q, want %q", times, got, want)
		}
	}
}

// TestBaseURLWithAPath: a deployment behind a gateway's path prefix is
// read below it, ids escaped, and answers as the fake.
func TestBaseURLWithAPath(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	target, _ := url.Parse(srv.URL)
	gw := httptest.NewServer(http.StripPrefix("/gw/partner", httputil.NewSingleHostReverseProxy(target)))
	defer gw.Close()
	cfg := fakeConfig(srv)
	cfg.Connection.BaseURL = gw.URL + "/gw/partner/"
	r, err := Run(context.Background(), cfg)
	if err != nil || r.Diverged() {
		t.Fatalf("%v %+v", err, r.Divergences())
	}
	if n := len(srv.Requests()); n < 15 {
		t.Errorf("the fake got %d requests through the prefix", n)
	}
}

// TestMembersOfAFakeOption: a deployment that answers members the fake
// sends only with one of its options diverges there, and the divergence
// names the option, the remedy for tests that need them.
func TestMembersOfAFakeOption(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer(fake.WithDemoData(), fake.WithSCIMFullResources())
	defer srv.Close()
	r, err := Run(context.Background(), fakeConfig(srv))
	if err != nil {
		t.Fatal(err)
	}
	got := members(r)
	for _, want := range []string{"searchViaGet /itemsPerPage", "getUser /displayName", "searchViaGet /Resources/[]/meta/created"} {
		if !slices.Contains(got, want) {
			t.Errorf("divergences %q lack %q", got, want)
		}
	}
	for _, d := range r.Divergences() {
		if d.Fake != "no such member (it does with its option WithSCIMFullResources)" {
			t.Errorf("%+v: want the option named", d)
		}
	}
}

// TestHalfAskedReadsAreRefused: a read that needs two fields, given one,
// is an error before anything is sent, not a check quietly skipped.
func TestHalfAskedReadsAreRefused(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	for name, edit := range map[string]func(*Config){
		"UserEmail alone":   func(c *Config) { c.UserEmail, c.Attribute = "ada.lovelace@example.com", "" },
		"Attribute alone":   func(c *Config) { c.UserEmail, c.Attribute = "", "region" },
		"ExecutionID alone": func(c *Config) { c.IntegrationID, c.ExecutionID = "", "exe_1" },
		"MaxPages -1":       func(c *Config) { c.MaxPages = -1 },
	} {
		cfg := fakeConfig(srv)
		edit(&cfg)
		if r, err := Run(context.Background(), cfg); err == nil || r != nil {
			t.Errorf("%s: report %v, error %v; want an error alone", name, r, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
