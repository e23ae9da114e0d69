package fake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Seed is a data set in the fake's own JSON format, for seeding a fake
// from a file (cmd/partnerfake -seed) or over the admin API
// (POST /_fake/seed). Every member is optional:
//
//	{
//	  "integrations": [{"id": "int-crm", "type": "CRM", "name": "CRM sync",
//	                    "object_type": "opportunity", "key_field": "external_id"}],
//	  "objects": [{"id": "opp-1", "type": "opportunity", "integration_id": "int-crm",
//	               "fields": {"name": "Deal", "amount": 1200, "stage": "open"}}],
//	  "users": [{"user_name": "ada@example.com", "display_name": "Ada",
//	             "given_name": "Ada", "family_name": "Lovelace",
//	             "emails": [{"value": "ada@example.com", "type": "work", "primary": true}],
//	             "department": "R&D", "active": true}],
//	  "reports": [{"id": 7, "name": "Pipeline", "status": "PUBLISHED",
//	               "columns": [{"id": "0", "name": "Partner", "type": "TEXT"},
//	                           {"id": "1", "name": "Amount", "type": "NUMBER"}],
//	               "rows": [["P1", 1200], ["P2", 300]],
//	               "charts": [{"id": 1, "name": "By partner", "group_by": "0"}]}]
//	}
//
// The members are the fake's own types (Integration, Object, User, Report)
// under their JSON names; members for Go callers only (times, Generate)
// have none. A report's rows hold the values in column order;
// "object_type" instead of "rows" backs the report by the stored objects of
// that type (see Report.ObjectType). Ids left out are generated (reports:
// the next free id). Seeding adds to what is there: an object, integration
// or report with an existing id is replaced (an object so replaced fires
// object.create, see "Events" in the package documentation), a user whose
// userName is taken is an error.
type Seed struct {
	Integrations []Integration `json:"integrations,omitempty"`
	Objects      []Object      `json:"objects,omitempty"`
	Users        []User        `json:"users,omitempty"`
	Reports      []Report      `json:"reports,omitempty"`
}

// ParseSeed reads a Seed from r. Unknown members are refused, numbers keep
// their text (json.Number).
func ParseSeed(r io.Reader) (*Seed, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var s Seed
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("fake: seed: %w", err)
	}
	if dec.More() {
		return nil, errors.New("fake: seed: data after the JSON value")
	}
	return &s, nil
}

// ApplySeed adds the data of s to the fake. It checks every report first,
// so an inconsistent report (a row of the wrong length, a chart grouping by
// an unknown column) changes nothing; a user whose userName is taken stops
// the seeding there with an error.
func (f *Fake) ApplySeed(s *Seed) error {
	reports := make([]Report, 0, len(s.Reports))
	for _, r := range s.Reports {
		if r.Rows != nil {
			rows := make([][]any, len(r.Rows))
			for i, row := range r.Rows {
				rows[i], _ = jsonValues(row).([]any)
			}
			r.Rows = rows
		}
		if r.Status != "" && r.Status != reportDraft && r.Status != reportPublished {
			return fmt.Errorf("fake: seed: report %q: unknown status %q", r.Name, r.Status)
		}
		if r.Rows == nil && r.ObjectType == "" && r.Generate == nil {
			r.Rows = [][]any{}
		}
		if err := checkReport(r); err != nil {
			return fmt.Errorf("fake: seed: %w", err)
		}
		reports = append(reports, r)
	}
	for _, o := range s.Objects {
		if o.Type == "" {
			return fmt.Errorf("fake: seed: object %q has no type", o.ID)
		}
	}
	for _, in := range s.Integrations {
		f.AddIntegration(in)
	}
	for _, o := range s.Objects {
		fields := map[string]any{}
		for k, v := range o.Fields {
			fields[k] = jsonValues(v)
		}
		o.Fields = fields
		f.AddObject(o)
	}
	for _, u := range s.Users {
		if _, err := f.AddUser(u); err != nil {
			return fmt.Errorf("fake: seed: user %q: %w", u.UserName, err)
		}
	}
	for _, r := range reports {
		f.AddReport(r)
	}
	return nil
}

// jsonValues turns the json.Number values of a decoded seed into float64,
// the number type Object.Fields documents.
func jsonValues(v any) any {
	switch x := v.(type) {
	case json.Number:
		if fl, err := x.Float64(); err == nil {
			return fl
		}
		return x.String()
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValues(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValues(e)
		}
		return out
	default:
		return v
	}
}
