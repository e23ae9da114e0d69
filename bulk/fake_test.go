package bulk_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// fakeClient returns a client of a fake with the demo data on a manual
// clock. rt, when set, wraps the client's transport.
func fakeClient(t *testing.T, wrap func(http.RoundTripper) http.RoundTripper, opts ...fake.Option) (*partner.Client, *fake.Server, *fake.ManualClock) {
	t.Helper()
	clock := fake.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	var rt http.RoundTripper = http.DefaultTransport.(*http.Transport).Clone()
	if wrap != nil {
		rt = wrap(rt)
	}
	c, srv := mocktest.FakeClient(t, append([]fake.Option{fake.WithDemoData(), fake.WithClock(clock)}, opts...),
		partner.WithHTTPClient(&http.Client{Transport: rt}),
		partner.WithRetryWait(time.Millisecond, 5*time.Millisecond))
	return c, srv, clock
}

const oppsCSV = "sales_details.crm_opportunity_id,name,amount\n" +
	"CRM-1,Alpha,100\n" +
	",No key,5\n" +
	"CRM-2,Beta,lots\n" +
	"CRM-3,Gamma,300\n"

func keys(srv *fake.Server) map[string]fake.Object {
	out := map[string]fake.Object{}
	for _, o := range srv.Objects("opportunity") {
		if v, ok := o.Field("sales_details.crm_opportunity_id"); ok {
			out[v.(string)] = o
		}
	}
	return out
}

func TestLoadThenWaitAgainstFake(t *testing.T) {
	c, srv, clock := fakeClient(t, nil)
	ctx := context.Background()
	p := bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}
	ack, err := c.Bulk.Load(ctx, p, strings.NewReader(oppsCSV))
	if err != nil {
		t.Fatal(err)
	}
	if ack.Format != bulk.CSV || !ack.CreatedAt.Equal(clock.Now()) {
		t.Errorf("ack = %+v", ack)
	}
	ex, err := c.Bulk.Status(ctx, ack.IntegrationID, ack.ExecutionID, bulk.StatusParams{})
	if err != nil || ex.Status != bulk.StateRunning || ex.Done() || ex.InputCount != 4 {
		t.Fatalf("first status = %+v, %v", ex, err)
	}
	clock.Advance(fake.DefaultBulkDelay)
	var seen []bulk.State
	ex, err = c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{
		Status:   bulk.StatusParams{IncludeErrors: new(true)},
		Progress: func(e *bulk.Execution) { seen = append(seen, e.Status) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Status != bulk.StateCompleted || ex.InputCount != 4 || ex.SuccessCount != 2 || ex.ErrorCount != 2 || ex.SkipCount != 0 ||
		ex.SuccessCount+ex.ErrorCount+ex.SkipCount != ex.InputCount || ex.CompletedAt.Sub(ex.StartedAt) != fake.DefaultBulkDelay {
		t.Errorf("final = %+v", ex)
	}
	if len(seen) != 1 || seen[0] != bulk.StateCompleted {
		t.Errorf("progress saw %v", seen)
	}
	if len(ex.Errors) != 2 || ex.Errors[0].Message != `Missing value of key field "sales_details.crm_opportunity_id"` || ex.Errors[0].Row["name"] != "No key" ||
		ex.Errors[1].ID != "CRM-2" || !strings.Contains(ex.Errors[1].Message, "amount") {
		t.Errorf("errors = %+v", ex.Errors)
	}
	if o := keys(srv)["CRM-3"]; o.Fields["name"] != "Gamma" || o.Fields["amount"] != 300.0 {
		t.Errorf("CRM-3 = %+v", o)
	}

}

func TestLoadThenWaitProgress(t *testing.T) {
	c, srv, clock := fakeClient(t, nil)
	ctx := context.Background()
	var mu sync.Mutex
	var seen []bulk.State
	ack, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(oppsCSV))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{
		Interval: time.Millisecond, MaxInterval: time.Millisecond,
		Progress: func(e *bulk.Execution) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, e.Status)
			if len(seen) == 2 {
				clock.Advance(fake.DefaultBulkDelay) // time passes on the fake between two polls
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []bulk.State{bulk.StateRunning, bulk.StateRunning, bulk.StateCompleted}; !equalStates(seen, want) {
		t.Errorf("progress saw %v, want %v", seen, want)
	}
	if ex.SuccessCount != 2 || ex.Errors != nil {
		t.Errorf("final = %+v", ex)
	}
	// The same rows again are skipped.
	clock.Advance(time.Hour)
	ack, err = c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(oppsCSV))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(fake.DefaultBulkDelay)
	ex, err = c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
	if err != nil || ex.SkipCount != 2 || ex.SuccessCount != 0 {
		t.Errorf("reload = %+v, %v", ex, err)
	}
	if n := len(srv.BulkExecutions()); n != 2 {
		t.Errorf("%d executions", n)
	}
}

func equalStates(a, b []bulk.State) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWaitCancelled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	clock := fake.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	srv := fake.NewServer(fake.WithDemoData(), fake.WithClock(clock), mocktest.ContractCheck(t))
	defer srv.Close()
	rt := http.DefaultTransport.(*http.Transport).Clone()
	defer rt.CloseIdleConnections()
	c, err := partner.New(partner.WithBaseURL(srv.URL), partner.WithHTTPClient(&http.Client{Transport: rt}),
		partner.WithClientCredentials(fake.DefaultClientID, fake.DefaultClientSecret))
	if err != nil {
		t.Fatal(err)
	}
	ack, err := c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(oppsCSV))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	polled := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		_, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{
			Interval: time.Hour, // only the cancel can end the wait between two polls
			Progress: func(*bulk.Execution) {
				select {
				case polled <- struct{}{}:
				default:
				}
			},
		})
		done <- err
	}()
	<-polled // the clock never moves: the execution stays running
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// TestLoadNotSentTwice: the connection drops after the fake has read and
// processed the load; the SDK must not send it again.
func TestLoadNotSentTwice(t *testing.T) {
	c, srv, _ := fakeClient(t, nil)
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/bulk/v1/bulkload", DropAfter: true, Times: 1})
	_, err := c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(oppsCSV))
	if err == nil {
		t.Fatal("load succeeded through a dropped connection")
	}
	// A repeat would have completed before Load returned.
	if n := len(srv.BulkExecutions()); n != 1 {
		t.Errorf("%d executions, want 1: the load was repeated", n)
	}
}

// TestLoadRetriedOn429 rewinds a seekable body for the repeat.
func TestLoadRetriedOn429(t *testing.T) {
	c, srv, _ := fakeClient(t, nil)
	srv.InjectFault(fake.Fault{Method: "POST", Path: "/bulk/v1/bulkload", Status: 429, RetryAfter: "0", Times: 1})
	f := writeTemp(t, "opps.csv", oppsCSV)
	ack, err := c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, f)
	if err != nil {
		t.Fatal(err)
	}
	ex, _ := srv.BulkExecution(ack.ExecutionID)
	// The 429 answered before the body was read; the repeat sent the
	// whole file again from its start. (The request log is not checked:
	// the fake logs a request after answering it, so the client may be
	// done before the entry exists.)
	if ex.InputCount != 4 || len(srv.BulkExecutions()) != 1 {
		t.Errorf("execution %+v; %d executions", ex, len(srv.BulkExecutions()))
	}
}

func writeTemp(t *testing.T, name, content string) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestLoadRowsAgainstFake(t *testing.T) {
	c, srv, _ := fakeClient(t, nil, fake.WithBulkDelay(0))
	type sales struct {
		CRMID string `json:"crm_opportunity_id"`
	}
	type opp struct {
		Sales  sales   `json:"sales_details"`
		Name   string  `json:"name"`
		Amount float64 `json:"amount,omitempty"`
	}
	rows := []opp{{sales{"R-1"}, "Rows one", 10}, {sales{"R-2"}, "Rows two", 0}, {Name: "no key"}}
	ex, err := loadRowsAndWait(c, rows)
	if err != nil {
		t.Fatal(err)
	}
	if ex.SuccessCount != 2 || ex.ErrorCount != 1 {
		t.Errorf("execution = %+v", ex)
	}
	if o := keys(srv)["R-1"]; o.Fields["amount"] != 10.0 || o.Fields["name"] != "Rows one" {
		t.Errorf("R-1 = %+v", o)
	}
	maps := []map[string]any{{"sales_details.crm_opportunity_id": "R-3", "stage": "won"}}
	if ex, err = loadRowsAndWait(c, maps); err != nil || ex.SuccessCount != 1 || keys(srv)["R-3"].Fields["stage"] != "won" {
		t.Errorf("maps: %+v, %v", ex, err)
	}
}

func loadRowsAndWait[T any](c *partner.Client, rows []T) (*bulk.Execution, error) {
	ctx := context.Background()
	ack, err := bulk.LoadRows(ctx, c.Bulk, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, rows)
	if err != nil {
		return nil, err
	}
	return c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{Status: bulk.StatusParams{IncludeErrors: new(true)}})
}

// xlsxFile returns an XLSX workbook whose one sheet holds rows: strings
// as inline strings, other values as numbers. It is the smallest package
// the format allows, written here so that the test binary links no
// spreadsheet library; the fake's own tests read workbooks that excelize
// writes.
func xlsxFile(t *testing.T, rows [][]any) []byte {
	t.Helper()
	const (
		head   = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"
		main   = `http://schemas.openxmlformats.org/spreadsheetml/2006/main`
		rel    = `http://schemas.openxmlformats.org/officeDocument/2006/relationships`
		pkgRel = `http://schemas.openxmlformats.org/package/2006/relationships`
		ct     = `application/vnd.openxmlformats-officedocument.spreadsheetml`
	)
	var sheet bytes.Buffer
	sheet.WriteString(head + `<worksheet xmlns="` + main + `"><sheetData>`)
	for _, row := range rows {
		sheet.WriteString("<row>")
		for _, v := range row {
			if s, ok := v.(string); ok {
				sheet.WriteString(`<c t="inlineStr"><is><t>`)
				xml.EscapeText(&sheet, []byte(s))
				sheet.WriteString(`</t></is></c>`)
			} else {
				fmt.Fprintf(&sheet, "<c><v>%v</v></c>", v)
			}
		}
		sheet.WriteString("</row>")
	}
	sheet.WriteString(`</sheetData></worksheet>`)
	parts := []struct{ name, text string }{
		{"[Content_Types].xml", head + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/xl/workbook.xml" ContentType="` + ct + `.sheet.main+xml"/>` +
			`<Override PartName="/xl/worksheets/sheet1.xml" ContentType="` + ct + `.worksheet+xml"/></Types>`},
		{"_rels/.rels", head + `<Relationships xmlns="` + pkgRel + `">` +
			`<Relationship Id="rId1" Type="` + rel + `/officeDocument" Target="xl/workbook.xml"/></Relationships>`},
		{"xl/workbook.xml", head + `<workbook xmlns="` + main + `" xmlns:r="` + rel + `">` +
			`<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`},
		{"xl/_rels/workbook.xml.rels", head + `<Relationships xmlns="` + pkgRel + `">` +
			`<Relationship Id="rId1" Type="` + rel + `/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`},
		{"xl/worksheets/sheet1.xml", sheet.String()},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		w, err := zw.Create(p.name)
		if err == nil {
			_, err = io.WriteString(w, p.text)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestLoadAttachmentAgainstFake(t *testing.T) {
	c, srv, _ := fakeClient(t, nil, fake.WithBulkDelay(0))
	ctx := context.Background()
	xlsx := xlsxFile(t, [][]any{{"sales_details.crm_opportunity_id", "name", "amount"}, {"X-1", "Excel", 42}, {"X-2", "Excel bad", "n/a"}})
	p := bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}
	ack, err := c.Bulk.LoadAttachment(ctx, p, "opps.xlsx", bytes.NewReader(xlsx))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
	if err != nil || ack.Format != bulk.XLSX || ex.SuccessCount != 1 || ex.ErrorCount != 1 || keys(srv)["X-1"].Fields["amount"] != 42.0 {
		t.Errorf("xlsx: ack %+v, execution %+v, %v", ack, ex, err)
	}
	// A plain reader (not seekable) is streamed once.
	plain := io.MultiReader(strings.NewReader("sales_details.crm_opportunity_id;name\n"), strings.NewReader("A-1;attached\n"))
	p.ColumnDelimiter = ";"
	ack, err = c.Bulk.LoadAttachment(ctx, p, "opps.csv", plain)
	if err != nil || ack.Format != bulk.CSV {
		t.Fatalf("csv: %+v, %v", ack, err)
	}
	if keys(srv)["A-1"].Fields["name"] != "attached" {
		t.Errorf("A-1 = %+v", keys(srv)["A-1"])
	}
}

// authRecorder records the Authorization header of requests to /upload/.
type authRecorder struct {
	http.RoundTripper
	mu    sync.Mutex
	auths []string
}

func (a *authRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, "/upload/") {
		a.mu.Lock()
		a.auths = append(a.auths, r.Header.Get("Authorization"))
		a.mu.Unlock()
	}
	return a.RoundTripper.RoundTrip(r)
}

func TestLoadFileAgainstFake(t *testing.T) {
	rec := &authRecorder{}
	c, srv, _ := fakeClient(t, func(rt http.RoundTripper) http.RoundTripper { rec.RoundTripper = rt; return rec }, fake.WithBulkDelay(0))
	path := filepath.Join(t.TempDir(), "opps.json")
	os.WriteFile(path, []byte(`[{"sales_details":{"crm_opportunity_id":"F-1"},"name":"From file"}]`), 0o600)
	ctx := context.Background()
	ack, err := c.Bulk.LoadFile(ctx, bulk.LoadFileParams{IntegrationID: demo.OpportunityIntegration}, path)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ex.SuccessCount != 1 || keys(srv)["F-1"].Fields["name"] != "From file" {
		t.Errorf("execution = %+v", ex)
	}
	if len(rec.auths) != 1 || rec.auths[0] != "" {
		t.Errorf("Authorization sent to the upload URL: %q", rec.auths)
	}
	// The token is single use.
	tk, err := c.Bulk.UploadURL(context.Background(), demo.OpportunityIntegration, "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: demo.OpportunityIntegration, FileToken: tk.UploadToken}, nil)
	if !partner.IsBadRequest(err) {
		t.Errorf("load of a token without a file: %v", err)
	}
}

func TestLoadOpportunitiesAgainstFake(t *testing.T) {
	c, srv, _ := fakeClient(t, nil, fake.WithBulkDelay(0))
	ctx := context.Background()
	p := bulk.LoadOpportunitiesParams{IntegrationID: demo.OpportunityIntegration, NoHeaderRow: true, ColumnDelimiter: "|"}
	ack, err := c.Bulk.LoadOpportunities(ctx, p, strings.NewReader("O-1|Positional\nO-2|Second\n"))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
	if err != nil || ex.SuccessCount != 2 || keys(srv)["O-2"].Fields["2"] != "Second" {
		t.Errorf("execution %+v, %v", ex, err)
	}
	p = bulk.LoadOpportunitiesParams{IntegrationID: demo.OpportunityIntegration, Format: bulk.JSON}
	if _, err := c.Bulk.LoadOpportunities(ctx, p, strings.NewReader(`[{"sales_details.crm_opportunity_id":"O-3"}]`)); err != nil {
		t.Error(err)
	}
	_, err = c.Bulk.LoadOpportunities(ctx, bulk.LoadOpportunitiesParams{IntegrationID: demo.AccountIntegration}, strings.NewReader("a\n"))
	if !partner.IsBadRequest(err) {
		t.Errorf("accounts as opportunities: %v", err)
	}
}

func TestErrorsAgainstFake(t *testing.T) {
	c, _, _ := fakeClient(t, nil)
	ctx := context.Background()
	_, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader("sales_details.crm_opportunity_id,name\nA,\"open\n"))
	var perr *partner.Error
	if !errors.As(err, &perr) || perr.StatusCode != 400 || !strings.Contains(perr.Message, "line 2") {
		t.Errorf("malformed CSV: %v", err)
	}
	// A refusal early in a large body still reaches the client as a 400.
	big := "sales_details.crm_opportunity_id,name\nA,\"open\"x\n" + strings.Repeat("B,row\n", 1<<20)
	_, err = c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(big))
	if !errors.As(err, &perr) || perr.StatusCode != 400 || !strings.Contains(perr.Message, "line 2") {
		t.Errorf("malformed large CSV: %v", err)
	}
	if _, err := c.Bulk.Load(ctx, bulk.LoadParams{IntegrationID: "int-nope"}, strings.NewReader(big)); !partner.IsBadRequest(err) {
		t.Errorf("large load to an unknown integration: %v", err)
	}
	if _, err := c.Bulk.Status(ctx, "int-nope", "exe_1", bulk.StatusParams{}); !partner.IsNotFound(err) {
		t.Errorf("unknown integration: %v", err)
	}
	if _, err := c.Bulk.Status(ctx, demo.OpportunityIntegration, "exe_1", bulk.StatusParams{}); !partner.IsNotFound(err) {
		t.Errorf("unknown execution: %v", err)
	}
	if _, err := c.Bulk.Status(ctx, demo.OpportunityIntegration, "no such/id", bulk.StatusParams{}); !partner.IsBadRequest(err) {
		t.Errorf("malformed execution: %v", err)
	}
	if _, err := c.Bulk.UploadURL(ctx, "int-nope", "a.csv"); !partner.IsNotFound(err) {
		t.Errorf("upload URL of an unknown integration: %v", err)
	}
}

// TestConcurrentLoadsSameKeys: loads racing on the same keys never make
// two objects for one key.
func TestConcurrentLoadsSameKeys(t *testing.T) {
	c, srv, _ := fakeClient(t, nil, fake.WithBulkDelay(0))
	before := len(srv.Objects("opportunity"))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			var b strings.Builder
			b.WriteString("sales_details.crm_opportunity_id,name\n")
			for k := range 20 {
				fmt.Fprintf(&b, "C-%d,writer %d\n", k, i)
			}
			if _, err := c.Bulk.Load(context.Background(), bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}, strings.NewReader(b.String())); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(srv.Objects("opportunity")) - before; n != 20 {
		t.Errorf("%d new objects, want 20", n)
	}
}
