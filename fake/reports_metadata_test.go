package fake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestReportMetadataRoutes checks the fake's own shapes of the report
// metadata, data-schema and view metadata operations, and their errors.
func TestReportMetadataRoutes(t *testing.T) {
	f := New()
	id := smallReport(f, 3)
	want := `[{"id":"0","name":"N","type":"NUMBER"},{"id":"1","name":"S","type":"TEXT"}]`
	for _, op := range []string{"metadata", "data-schema"} {
		for _, body := range []string{"", " \n", "{}", `{"chartIds": []}`} {
			code, got := call(t, f, "POST", fmt.Sprintf("/report/v1/%d/%s", id, op), body)
			var md struct {
				ReportID   int64           `json:"reportId"`
				ReportName string          `json:"reportName"`
				Columns    json.RawMessage `json:"columns"`
			}
			if code != http.StatusOK || json.Unmarshal([]byte(got), &md) != nil || md.ReportID != id || string(md.Columns) != want {
				t.Errorf("%s with body %q: %d %s", op, body, code, got)
			}
			if (op == "metadata") != (md.ReportName == "small") {
				t.Errorf("%s: reportName %q", op, md.ReportName)
			}
		}
		for path, wantCode := range map[string]int{
			"/report/v1/424242/" + op: http.StatusNotFound,
			"/report/v1/abc/" + op:    http.StatusBadRequest,
		} {
			if code, body := call(t, f, "POST", path, "{}"); code != wantCode {
				t.Errorf("%s: %d %s, want %d", path, code, body, wantCode)
			}
		}
		if code, body := call(t, f, "POST", fmt.Sprintf("/report/v1/%d/%s", id, op), "[1]"); code != http.StatusBadRequest {
			t.Errorf("%s with a non-object body: %d %s", op, code, body)
		}
	}

	viewID, _ := f.prepareView(id)
	code, got := call(t, f, "GET", fmt.Sprintf("/report/v1/view/%d", viewID), "")
	var v map[string]any
	if code != http.StatusOK || json.Unmarshal([]byte(got), &v) != nil || v["viewId"] != float64(viewID) || v["reportId"] != float64(id) ||
		v["viewStatus"] != viewPending || v["rowCount"] != 3.0 || v["createdAt"] == "" {
		t.Errorf("view metadata: %d %s", code, got)
	}
	if code, body := call(t, f, "GET", "/report/v1/view/1", ""); code != http.StatusNotFound {
		t.Errorf("unknown view: %d %s", code, body)
	}
	if code, body := call(t, f, "GET", "/report/v1/view/x", ""); code != http.StatusBadRequest {
		t.Errorf("bad view id: %d %s", code, body)
	}
}

// TestReportFilterByPosition: colId "0", "1" name columns by position, as
// on the deployed service; column IDs still work as the fake's extension.
func TestReportFilterByPosition(t *testing.T) {
	f := New()
	id := smallReport(f, 5)
	for colID, want := range map[string]int{`"0"`: 1, `"n"`: 1, `"1"`: 1, `"2"`: -1, `"00"`: -1, `"-1"`: -1} {
		field, value := "NUMBER", "3"
		if colID == `"1"` {
			field, value = "TEXT", "r3"
		}
		body := fmt.Sprintf(`{"page":{"number":0,"size":10},"filters":{"op":"AND","fieldFilters":[{"type":%q,"colId":%s,"filter":{"op":"EQUAL_TO","negate":false,"values":[%q]}}]}}`, field, colID, value)
		code, got := call(t, f, "POST", fmt.Sprintf("/report/v1/%d/data", id), body)
		if want < 0 {
			if code != http.StatusBadRequest || !strings.Contains(got, "has no column") {
				t.Errorf("colId %s: %d %s, want 400", colID, code, got)
			}
			continue
		}
		var page struct {
			Results []map[string]any `json:"results"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(got), &page) != nil || len(page.Results) != want || page.Results[0]["N"] != 3.0 {
			t.Errorf("colId %s: %d %s", colID, code, got)
		}
	}
}
