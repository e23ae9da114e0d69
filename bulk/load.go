package bulk

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/partnerapi/partner-go/core"
	"github.com/partnerapi/partner-go/internal/check"
)

// LoadParams are the query parameters of POST /bulk/v1/bulkload.
type LoadParams struct {
	// IntegrationID names the integration being loaded. Required.
	IntegrationID string
	// Format of the data (data_format). When it is empty, Load leaves
	// data_format out (the service reads CSV, its default) and sends the
	// body as text/csv; LoadAttachment goes by the file name's extension.
	// XLSX is an attached file's format (LoadAttachment) or an uploaded
	// file's (FileToken), never a body's.
	Format Format
	// ColumnDelimiter is the one-character CSV column delimiter
	// (column_delimiter): "," when empty.
	ColumnDelimiter string
	// FileToken is the UploadToken of a Ticket whose file was uploaded:
	// the load then processes that file and sends no body.
	FileToken string
}

// query validates p and returns its query string. format overrides
// p.Format when p.Format is empty.
func (p LoadParams) query(format Format) (url.Values, Format, error) {
	q, f, err := baseQuery(p.IntegrationID, p.Format, format, "data_format", p.ColumnDelimiter)
	if err != nil {
		return nil, "", err
	}
	if p.FileToken != "" {
		q.Set("file_token", p.FileToken)
	}
	return q, f, nil
}

// Load sends body as the data of a load (POST /bulk/v1/bulkload): CSV
// rows with a header row first, or a JSON array of objects, as p.Format
// says. An XLSX workbook is never a body: Load refuses p.Format XLSX with
// a body before sending (LoadAttachment attaches it). The body is
// streamed, never held in memory. A load is not repeated once the server
// may have received it; when it must be sent again (a 429, or a
// connection refused before anything was written) an io.ReadSeeker such
// as an *os.File is rewound, while another reader fails with
// ErrBodyNotReplayable. An error after which the service may
// have received the load is marked partner.IsOutcomeUnknown: read the
// integration's data before loading again (see the package doc). body
// may be nil when p.FileToken names an uploaded file.
func (s *Service) Load(ctx context.Context, p LoadParams, body io.Reader) (*Ack, error) {
	q, f, err := p.query("")
	if err != nil {
		return nil, err
	}
	if body == nil && p.FileToken == "" {
		return nil, errors.New("partner: bulk: a body or a file token is required")
	}
	if body != nil && f == XLSX {
		return nil, errors.New("partner: bulk: a body is loaded from CSV or JSON, not XLSX: attach an XLSX file (LoadAttachment)")
	}
	req := &core.Request{Op: "bulk.Load", Method: http.MethodPost, Path: "/bulk/v1/bulkload", Query: q}
	if body != nil {
		req.Body, req.ContentType = body, f.mediaType()
	}
	return s.load(ctx, req)
}

func (s *Service) load(ctx context.Context, req *core.Request) (*Ack, error) {
	return core.DoNew[Ack](ctx, s.t, req)
}

// LoadRows loads rows through s as a JSON array of objects (POST
// /bulk/v1/bulkload, data_format JSON): T is a struct or a map, each row
// encoded with encoding/json. The rows are encoded one by one into the
// request as it is sent. p.Format must be empty or JSON. Like Load it is
// not repeated once the service may have received it; an error marked
// partner.IsOutcomeUnknown means it may have been: read the integration's
// data before loading again.
//
// It is a function rather than a method of Service because a Go method
// takes no type parameters; the type parameter is what checks, when the
// program is compiled, that rows is a slice.
func LoadRows[T any](ctx context.Context, s *Service, p LoadParams, rows []T) (*Ack, error) {
	if f, err := p.Format.validate(); err != nil {
		return nil, err
	} else if f != "" && f != JSON {
		return nil, fmt.Errorf("partner: bulk: rows are sent as JSON, not %s", f)
	}
	if p.FileToken != "" {
		return nil, errors.New("partner: bulk: rows and a file token cannot be loaded together")
	}
	q, _, err := p.query(JSON)
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	defer wg.Wait() // no encoder outlives the call: it reads the caller's rows
	open := func() (io.Reader, error) {
		wg.Wait() // the previous attempt's encoder is done
		pr, pw := io.Pipe()
		wg.Go(func() { pw.CloseWithError(encodeRows(pw, rows)) })
		return pr, nil
	}
	return s.load(ctx, &core.Request{
		Op:     "bulk.LoadRows",
		Method: http.MethodPost, Path: "/bulk/v1/bulkload", Query: q,
		BodyFunc: open, ContentType: JSON.mediaType(),
	})
}

// encodeRows writes rows as a JSON array.
func encodeRows[T any](w io.Writer, rows []T) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	enc := json.NewEncoder(bw)
	bw.WriteByte('[')
	for i := range rows {
		if i > 0 {
			bw.WriteByte(',')
		}
		if err := enc.Encode(rows[i]); err != nil {
			return fmt.Errorf("partner: bulk: encoding row %d: %w", i, err)
		}
	}
	bw.WriteByte(']')
	return bw.Flush()
}

// LoadAttachment loads a file sent as multipart/form-data in a part named
// "file" (POST /bulk/v1/bulkload). The request always says the file's
// format (data_format): p.Format, or else the one fileName's extension
// names (FormatOf); when neither says it, LoadAttachment sends nothing
// and returns an error. The file is streamed from r into the request;
// like Load, it is rewound for a repeat when r is an io.ReadSeeker, and
// an error marked partner.IsOutcomeUnknown means the service may have
// received the load: read the integration's data before loading again.
func (s *Service) LoadAttachment(ctx context.Context, p LoadParams, fileName string, r io.Reader) (*Ack, error) {
	if err := checkAttachment(fileName, r); err != nil {
		return nil, err
	}
	if p.FileToken != "" {
		return nil, errors.New("partner: bulk: an attachment and a file token cannot be loaded together")
	}
	q, f, err := p.query(FormatOf(fileName))
	if err != nil {
		return nil, err
	}
	if f == "" {
		return nil, unknownFormat(fileName, "LoadParams.Format")
	}
	return s.attach(ctx, "bulk.LoadAttachment", "/bulk/v1/bulkload", q, fileName, f, r)
}

// unknownFormat is the error of an attachment whose format neither the
// params (field) nor the file name says.
func unknownFormat(fileName, field string) error {
	return fmt.Errorf("partner: bulk: cannot tell the format of %q: set %s or name a .csv, .json or .xlsx file", fileName, field)
}

func checkAttachment(fileName string, r io.Reader) error {
	if fileName == "" {
		return errors.New("partner: bulk: file name is required")
	}
	if r == nil {
		return errors.New("partner: bulk: file reader is required")
	}
	if err := check.Reader(r); err != nil {
		return fmt.Errorf("partner: bulk: %w", err)
	}
	return nil
}

// attach posts r as the part "file" of a multipart/form-data body.
func (s *Service) attach(ctx context.Context, op, path string, q url.Values, fileName string, f Format, r io.Reader) (*Ack, error) {
	mb, err := newMultipartBody(multipart.NewWriter(io.Discard).Boundary(), fileName, f)
	if err != nil {
		return nil, fmt.Errorf("partner: bulk: %w", err)
	}
	body, err := mb.reader(r)
	if err != nil {
		return nil, fmt.Errorf("partner: bulk: %w", err)
	}
	return s.load(ctx, &core.Request{
		Op: op, Method: http.MethodPost, Path: path, Query: q,
		Body: body, ContentType: "multipart/form-data; boundary=" + mb.boundary,
	})
}

// LoadOpportunitiesParams are the query parameters of
// POST /bulk/v1/bulkload_opportunity.
type LoadOpportunitiesParams struct {
	// IntegrationID names an integration of opportunities. Required.
	IntegrationID string
	// Format of the data (content_type): CSV (when empty) or JSON;
	// LoadOpportunitiesAttachment also takes XLSX, and when it is empty
	// goes by the file name's extension.
	Format Format
	// ColumnDelimiter is the one-character CSV column delimiter: ","
	// when empty.
	ColumnDelimiter string
	// NoHeaderRow says the CSV has no header row (has_header_row=false):
	// the service names the columns by position. The parameter is always
	// sent, true unless NoHeaderRow is set.
	NoHeaderRow bool
}

// LoadOpportunities loads opportunities from body, CSV or JSON
// (POST /bulk/v1/bulkload_opportunity). The body is streamed and never
// repeated once the server may have received it, as for Load: an error
// marked partner.IsOutcomeUnknown means it may have been, so read the
// integration's opportunities (or a report over them) before loading
// again. The acknowledgement carries no data format or delimiter.
func (s *Service) LoadOpportunities(ctx context.Context, p LoadOpportunitiesParams, body io.Reader) (*Ack, error) {
	if body == nil {
		return nil, errors.New("partner: bulk: a body is required")
	}
	q, f, err := p.query(CSV)
	if err != nil {
		return nil, err
	}
	if f == XLSX {
		return nil, errors.New("partner: bulk: opportunities are loaded from CSV or JSON, not XLSX: attach an XLSX file (LoadOpportunitiesAttachment)")
	}
	return s.load(ctx, &core.Request{
		Op:     "bulk.LoadOpportunities",
		Method: http.MethodPost, Path: "/bulk/v1/bulkload_opportunity", Query: q,
		Body: body, ContentType: f.mediaType(),
	})
}

// query validates p and returns its query string and format: content_type
// is p.Format, or else format; has_header_row is always sent.
func (p LoadOpportunitiesParams) query(format Format) (url.Values, Format, error) {
	q, f, err := baseQuery(p.IntegrationID, p.Format, format, "content_type", p.ColumnDelimiter)
	if err != nil {
		return nil, "", err
	}
	q.Set("has_header_row", strconv.FormatBool(!p.NoHeaderRow))
	return q, f, nil
}

// baseQuery validates and returns the query both load operations take
// alike: integration_id, the format (set, or else fallback) in the
// parameter param when there is one, and column_delimiter when set.
func baseQuery(integrationID string, set, fallback Format, param, delim string) (url.Values, Format, error) {
	if integrationID == "" {
		return nil, "", errors.New("partner: bulk: integration id is required")
	}
	f, err := set.validate()
	if err != nil {
		return nil, "", err
	}
	if f == "" {
		f = fallback
	}
	if err := checkDelimiter(delim); err != nil {
		return nil, "", err
	}
	q := url.Values{"integration_id": {integrationID}}
	if f != "" {
		q.Set(param, string(f))
	}
	if delim != "" {
		q.Set("column_delimiter", delim)
	}
	return q, f, nil
}

// LoadOpportunitiesAttachment loads opportunities from a file sent as
// multipart/form-data in a part named "file"
// (POST /bulk/v1/bulkload_opportunity): CSV, JSON or XLSX. The query
// carries integration_id, has_header_row, column_delimiter when set, and
// always content_type: p.Format, or else the format fileName's
// extension names (FormatOf); when neither says it,
// LoadOpportunitiesAttachment sends nothing and returns an error. The file
// is streamed and rewound for a repeat when r is an io.ReadSeeker, as for
// LoadAttachment; an error marked partner.IsOutcomeUnknown means the
// service may have received the load, as for LoadOpportunities.
func (s *Service) LoadOpportunitiesAttachment(ctx context.Context, p LoadOpportunitiesParams, fileName string, r io.Reader) (*Ack, error) {
	if p.IntegrationID == "" {
		return nil, errors.New("partner: bulk: integration id is required")
	}
	if err := checkAttachment(fileName, r); err != nil {
		return nil, err
	}
	q, f, err := p.query(FormatOf(fileName))
	if err != nil {
		return nil, err
	}
	if f == "" {
		return nil, unknownFormat(fileName, "LoadOpportunitiesParams.Format")
	}
	return s.attach(ctx, "bulk.LoadOpportunitiesAttachment", "/bulk/v1/bulkload_opportunity", q, fileName, f, r)
}
