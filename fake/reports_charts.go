package fake

// The chart routes of the reports area: POST /report/v1/{reportId}/chart-data
// counts the (filtered) rows by each chart's column, and
// POST /report/v1/{reportId}/chart-metadata describes the charts.

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
)

type chartBody struct {
	Filters  *filterGroup `json:"filters"`
	ChartIDs []int64      `json:"chartIds"`
}

// readChartBody reads the report id and the body of a chart request; on
// bad input it has answered 400.
func readChartBody(w http.ResponseWriter, r *http.Request) (int64, chartBody, bool) {
	var body chartBody
	id, ok := pathID(w, r, "reportId")
	if !ok || !decodeOptionalJSON(w, r, &body) {
		return 0, chartBody{}, false
	}
	return id, body, true
}

// selectCharts returns the charts asked for (all when ids is empty), or
// answers 404 naming an unknown one.
func selectCharts(w http.ResponseWriter, def Report, ids []int64) ([]Chart, bool) {
	if len(ids) == 0 {
		return def.Charts, true
	}
	out := make([]Chart, 0, len(ids))
	for _, id := range ids {
		i := slices.IndexFunc(def.Charts, func(c Chart) bool { return c.ID == id })
		if i < 0 {
			writeError(w, http.StatusNotFound, "not_found", "report %d has no chart %d", def.ID, id)
			return nil, false
		}
		out = append(out, def.Charts[i])
	}
	return out, true
}

type chartJSON struct {
	ID      int64             `json:"id"`
	Version int64             `json:"version"`
	Name    string            `json:"name"`
	Results []json.RawMessage `json:"results"`
}

type chartDataJSON struct {
	ReportVersion int64       `json:"reportVersion"`
	ReportName    string      `json:"reportName"`
	Charts        []chartJSON `json:"charts"`
}

// handleChartData groups the (filtered) rows by each chart's column and
// counts each group. An empty chartIds asks for every chart.
func (f *Fake) handleChartData(w http.ResponseWriter, r *http.Request) {
	id, body, ok := readChartBody(w, r)
	if !ok {
		return
	}
	def, version, rs, ok := f.reportOr404(w, id)
	if !ok {
		return
	}
	charts, ok := selectCharts(w, def, body.ChartIDs)
	if !ok {
		return
	}
	pred, ok := f.filterOr400(w, body.Filters, def.Columns)
	if !ok {
		return
	}
	type group struct {
		value any
		count int
	}
	counts := make([]map[string]*group, len(charts))
	cols := make([]int, len(charts))
	for i, ch := range charts {
		counts[i] = map[string]*group{}
		cols[i] = slices.IndexFunc(def.Columns, func(c Column) bool { return c.ID == ch.GroupBy })
	}
	for i := range rs.len() {
		if i%rowCheckEvery == 0 && r.Context().Err() != nil {
			return // the client left; nobody reads an answer
		}
		vals, err := rs.values(i, def.Columns)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "internal", "reading rows: %v", err)
			return
		}
		if pred != nil && !pred(vals) {
			continue
		}
		for c := range charts {
			v := vals[cols[c]]
			key := string(appendValue(nil, v))
			g := counts[c][key]
			if g == nil {
				g = &group{value: v}
				counts[c][key] = g
			}
			g.count++
		}
	}
	out := chartDataJSON{ReportVersion: version, ReportName: def.Name, Charts: []chartJSON{}}
	for c, ch := range charts {
		groups := make([]*group, 0, len(counts[c]))
		for _, g := range counts[c] {
			groups = append(groups, g)
		}
		slices.SortFunc(groups, func(a, b *group) int { return compareValues(a.value, b.value) })
		name := def.Columns[cols[c]].Name
		results := make([]json.RawMessage, len(groups))
		for i, g := range groups {
			b := appendString([]byte{'{'}, name)
			b = append(b, ':')
			b = appendValue(b, g.value)
			b = append(b, `,"count":`...)
			b = strconv.AppendInt(b, int64(g.count), 10)
			results[i] = append(b, '}')
		}
		out.Charts = append(out.Charts, chartJSON{ID: ch.ID, Version: version, Name: ch.Name, Results: results})
	}
	writeJSON(w, http.StatusOK, out)
}

// compareValues orders nulls first, then numbers, then everything else
// by its JSON text.
func compareValues(a, b any) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		}
		return 1
	}
	x, xok := a.(float64)
	y, yok := b.(float64)
	switch {
	case xok && yok:
		return cmp.Compare(x, y)
	case xok:
		return -1
	case yok:
		return 1
	}
	return cmp.Compare(string(appendValue(nil, a)), string(appendValue(nil, b)))
}

type columnJSON struct {
	ColID string `json:"colId"`
	Name  string `json:"name"`
	Type  string `json:"type"`
}

type chartMetaJSON struct {
	ID         int64      `json:"id"`
	Version    int64      `json:"version"`
	Name       string     `json:"name"`
	ChartType  string     `json:"chartType"`
	GroupBy    columnJSON `json:"groupBy"`
	ValueField string     `json:"valueField"`
}

type chartMetadataJSON struct {
	ReportID      int64           `json:"reportId"`
	ReportVersion int64           `json:"reportVersion"`
	ReportName    string          `json:"reportName"`
	Charts        []chartMetaJSON `json:"charts"`
}

// handleChartMetadata describes charts. The interface does not show the
// answer's shape; the fake sends reportId, reportVersion, reportName and
// charts[{id, version, name, chartType, groupBy{colId, name, type},
// valueField}].
func (f *Fake) handleChartMetadata(w http.ResponseWriter, r *http.Request) {
	id, body, ok := readChartBody(w, r)
	if !ok {
		return
	}
	if body.Filters != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "chart-metadata takes no filters")
		return
	}
	def, version, ok := f.reportDefOr404(w, id)
	if !ok {
		return
	}
	charts, ok := selectCharts(w, def, body.ChartIDs)
	if !ok {
		return
	}
	out := chartMetadataJSON{ReportID: id, ReportVersion: version, ReportName: def.Name, Charts: []chartMetaJSON{}}
	for _, ch := range charts {
		col := def.Columns[slices.IndexFunc(def.Columns, func(c Column) bool { return c.ID == ch.GroupBy })]
		out.Charts = append(out.Charts, chartMetaJSON{
			ID: ch.ID, Version: version, Name: ch.Name, ChartType: "COUNT_BY_GROUP",
			GroupBy: columnJSON{ColID: col.ID, Name: col.Name, Type: col.Type}, ValueField: "count",
		})
	}
	writeJSON(w, http.StatusOK, out)
}
