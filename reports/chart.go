package reports

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/partnerapi/partner-go/core"
)

// ChartDataParams asks for chart data.
type ChartDataParams struct {
	// Filters, when set, restricts the rows the charts are computed from.
	Filters *FilterGroup `json:"filters,omitempty"`
	// ChartIDs are the charts to return. The interface does not say what
	// an empty list means; the fake answers every chart of the report.
	ChartIDs []int64 `json:"chartIds"`
}

// ChartData is the answer of the chart data operation.
type ChartData struct {
	ReportVersion int64   `json:"reportVersion"`
	ReportName    string  `json:"reportName"`
	Charts        []Chart `json:"charts"`
}

// Chart is the data of one chart: rows of column name to value, in the
// server's column order.
type Chart struct {
	ID      int64  `json:"id"`
	Version int64  `json:"version"`
	Name    string `json:"name"`
	Results []Row  `json:"results"`
}

// ChartData reads chart data computed from a report's (filtered) rows
// (POST /report/v1/{reportId}/chart-data).
func (s *Service) ChartData(ctx context.Context, reportID int64, p ChartDataParams) (*ChartData, error) {
	if p.Filters != nil {
		if err := p.Filters.Validate(); err != nil {
			return nil, err
		}
	}
	if p.ChartIDs == nil {
		p.ChartIDs = []int64{}
	}
	return core.DoNew[ChartData](ctx, s.t, &core.Request{
		Op:     "reports.ChartData",
		Method: http.MethodPost, Route: core.PathOf("/report/v1/{reportId}/chart-data", reportID),
		JSON: p, Idempotent: true,
	})
}

// ChartMetadata is the answer of the chart metadata operation, whose shape
// the interface does not show: it is kept whole as Raw, and Charts reads
// the part that is known.
type ChartMetadata struct {
	Raw json.RawMessage
}

// ChartInfo is what is known of a chart's metadata: the members a chart
// data result also has.
type ChartInfo struct {
	ID      int64  `json:"id"`
	Version int64  `json:"version"`
	Name    string `json:"name"`
}

// Charts decodes the `charts` array of the metadata, if it has one.
func (m *ChartMetadata) Charts() ([]ChartInfo, error) {
	var out struct {
		Charts []ChartInfo `json:"charts"`
	}
	if err := json.Unmarshal(m.Raw, &out); err != nil {
		return nil, fmt.Errorf("partner: reports: chart metadata: %w", err)
	}
	return out.Charts, nil
}

// ChartMetadataParams asks for chart metadata.
type ChartMetadataParams struct {
	// ChartIDs are the charts to describe; nil is sent as an empty list.
	// The interface does not say what an empty list means; the fake
	// describes every chart of the report.
	ChartIDs []int64 `json:"chartIds"`
}

// ChartMetadata reads the real-time metadata of charts (POST
// /report/v1/{reportId}/chart-metadata).
func (s *Service) ChartMetadata(ctx context.Context, reportID int64, p ChartMetadataParams) (*ChartMetadata, error) {
	if p.ChartIDs == nil {
		p.ChartIDs = []int64{}
	}
	var raw json.RawMessage
	err := s.t.Do(ctx, &core.Request{
		Op:     "reports.ChartMetadata",
		Method: http.MethodPost, Route: core.PathOf("/report/v1/{reportId}/chart-metadata", reportID),
		JSON: p, Idempotent: true,
	}, &raw)
	if err != nil {
		return nil, err
	}
	return &ChartMetadata{Raw: raw}, nil
}
