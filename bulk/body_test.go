package bulk_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/bulk"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
)

// TestBodyFileProblemsNamed: a nil *os.File or a closed file passed as a
// body fails before anything is sent, with an error that says so (not
// "invalid argument"), on every call that takes a body.
func TestBodyFileProblemsNamed(t *testing.T) {
	c, srv, _ := fakeClient(t, nil)
	ctx := context.Background()
	closed := writeTemp(t, "closed-opps.csv", oppsCSV)
	closed.Close()
	p := bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}
	op := bulk.LoadOpportunitiesParams{IntegrationID: demo.OpportunityIntegration}
	calls := map[string]func(io.Reader) error{
		"Load": func(r io.Reader) error { _, err := c.Bulk.Load(ctx, p, r); return err },
		"LoadOpportunities": func(r io.Reader) error {
			_, err := c.Bulk.LoadOpportunities(ctx, op, r)
			return err
		},
		"LoadAttachment": func(r io.Reader) error {
			_, err := c.Bulk.LoadAttachment(ctx, p, "opps.csv", r)
			return err
		},
		"LoadOpportunitiesAttachment": func(r io.Reader) error {
			_, err := c.Bulk.LoadOpportunitiesAttachment(ctx, op, "opps.csv", r)
			return err
		},
	}
	calls["Upload"] = func(r io.Reader) error {
		tk, err := c.Bulk.UploadURL(ctx, demo.OpportunityIntegration, "opps.csv")
		if err != nil {
			t.Fatal(err)
		}
		return c.Bulk.Upload(ctx, tk, bulk.UploadParams{}, r)
	}
	for name, call := range calls {
		var nilFile *os.File
		err := call(nilFile)
		if err == nil || !strings.Contains(err.Error(), "nil *os.File") || strings.Contains(err.Error(), "invalid argument") {
			t.Errorf("%s(nil *os.File) = %v, want an error naming the nil *os.File", name, err)
		}
		err = call(closed)
		if !errors.Is(err, os.ErrClosed) || !strings.Contains(err.Error(), "closed-opps.csv") {
			t.Errorf("%s(closed file) = %v, want os.ErrClosed naming the file", name, err)
		}
		if err != nil && strings.Count(err.Error(), "partner: ") != 1 {
			t.Errorf("%s: prefix repeated: %v", name, err)
		}
	}
	if n := len(srv.BulkExecutions()); n != 0 {
		t.Errorf("%d executions started from bad bodies", n)
	}
}

// TestLoadFromPipe: a file that cannot seek (a pipe, standard input) is
// sent once as a plain reader rather than refused, by Load and by
// LoadAttachment.
func TestLoadFromPipe(t *testing.T) {
	p := bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}
	for name, load := range map[string]func(c *partner.Client, f *os.File) (*bulk.Ack, error){
		"Load": func(c *partner.Client, f *os.File) (*bulk.Ack, error) {
			return c.Bulk.Load(context.Background(), p, f)
		},
		"LoadAttachment": func(c *partner.Client, f *os.File) (*bulk.Ack, error) {
			return c.Bulk.LoadAttachment(context.Background(), p, "opps.csv", f)
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, srv, _ := fakeClient(t, nil)
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			go func() { io.WriteString(pw, oppsCSV); pw.Close() }()
			ack, err := load(c, pr)
			if err != nil {
				t.Fatal(err)
			}
			if ex, _ := srv.BulkExecution(ack.ExecutionID); ex.InputCount != 4 {
				t.Errorf("execution %+v, want 4 input rows", ex)
			}
		})
	}
}

// TestSkipCountOnRepeatedLoad pins what the package doc says SkipCount
// means in the fake: the same rows loaded again are skipped, and every
// record is counted once as a success, an error or a skip.
func TestSkipCountOnRepeatedLoad(t *testing.T) {
	c, _, clock := fakeClient(t, nil)
	ctx := context.Background()
	p := bulk.LoadParams{IntegrationID: demo.OpportunityIntegration}
	load := func() *bulk.Execution {
		t.Helper()
		ack, err := c.Bulk.Load(ctx, p, strings.NewReader(oppsCSV))
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(fake.DefaultBulkDelay)
		ex, err := c.Bulk.WaitExecution(ctx, ack, bulk.WaitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ex.SuccessCount+ex.ErrorCount+ex.SkipCount != ex.InputCount {
			t.Errorf("counts do not add up: %+v", ex)
		}
		return ex
	}
	if ex := load(); ex.SuccessCount != 2 || ex.SkipCount != 0 {
		t.Errorf("first load: %+v", ex)
	}
	if ex := load(); ex.SuccessCount != 0 || ex.ErrorCount != 2 || ex.SkipCount != 2 {
		t.Errorf("second load of the same rows: %+v, want 2 skipped", ex)
	}
}
