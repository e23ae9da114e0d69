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
//	             "department": "R&D", "suspended": false}],
//	  "reports": [{"id": 7, "name": "Pipeline", "status": "PUBLISHED",
//	               "columns": [{"id": "0", "name": "Partner", "type": "TEXT"},
//	                           {"id": "1", "name": "Amount", "type": "NUMBER"}],
//	               "rows": [["P1", 1200], ["P2", 300]],
//	               "charts": [{"id": 1, "name": "By partner", "group_by": "0"}]}]
//	}
//
// A report's rows hold the values in column order; "object_type" instead
// of "rows" backs the report by the stored objects of that type (see
// Report.ObjectType). Ids left out are generated (reports: the next free
// id). Seeding adds to what is there: an object, integration or report with
// an existing id is replaced, a user whose userName is taken is an error.
type Seed struct {
	Integrations []SeedIntegration `json:"integrations,omitempty"`
	Objects      []SeedObject      `json:"objects,omitempty"`
	Users        []SeedUser        `json:"users,omitempty"`
	Reports      []SeedReport      `json:"reports,omitempty"`
}

// SeedIntegration is an Integration in the seed format.
type SeedIntegration struct {
	ID          string `json:"id,omitempty"`
	Type        string `json:"type,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	ObjectType  string `json:"object_type,omitempty"`
	KeyField    string `json:"key_field,omitempty"`
}

// SeedObject is an Object in the seed format.
type SeedObject struct {
	ID            string         `json:"id,omitempty"`
	Type          string         `json:"type"`
	IntegrationID string         `json:"integration_id,omitempty"`
	Fields        map[string]any `json:"fields,omitempty"`
}

// SeedUser is a User in the seed format.
type SeedUser struct {
	ID          string      `json:"id,omitempty"`
	UserName    string      `json:"user_name"`
	DisplayName string      `json:"display_name,omitempty"`
	GivenName   string      `json:"given_name,omitempty"`
	FamilyName  string      `json:"family_name,omitempty"`
	Emails      []SeedEmail `json:"emails,omitempty"`
	Department  string      `json:"department,omitempty"`
	Suspended   bool        `json:"suspended,omitempty"`
}

// SeedReport is a Report in the seed format.
type SeedReport struct {
	ID          int64        `json:"id,omitempty"`
	Name        string       `json:"name"`
	Description string       `json:"description,omitempty"`
	Status      string       `json:"status,omitempty"`
	Columns     []SeedColumn `json:"columns"`
	Rows        [][]any      `json:"rows,omitempty"`
	ObjectType  string       `json:"object_type,omitempty"`
	Charts      []SeedChart  `json:"charts,omitempty"`
	FailViews   bool         `json:"fail_views,omitempty"`
}

// SeedColumn is a report Column in the seed format.
type SeedColumn struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	Type string `json:"type,omitempty"`
}

// SeedChart is a report Chart in the seed format.
type SeedChart struct {
	ID      int64  `json:"id"`
	Name    string `json:"name,omitempty"`
	GroupBy string `json:"group_by"`
}

// SeedEmail is a UserEmail in the seed format.
type SeedEmail struct {
	Value   string `json:"value"`
	Type    string `json:"type,omitempty"`
	Primary bool   `json:"primary,omitempty"`
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

// WithSeed seeds the fake with s when it is built (after the demo data,
// when both are asked for). New panics when the seed is inconsistent;
// check a seed from a file with Fake.ApplySeed on a fresh fake, or build
// the fake and call ApplySeed, to get an error instead.
func WithSeed(s *Seed) Option {
	return func(f *Fake) { f.seeds = append(f.seeds, s) }
}

// ApplySeed adds the data of s to the fake. It checks every report first,
// so an inconsistent report (a row of the wrong length, a chart grouping by
// an unknown column) changes nothing; a user whose userName is taken stops
// the seeding there with an error.
func (f *Fake) ApplySeed(s *Seed) error {
	reports := make([]Report, 0, len(s.Reports))
	for _, sr := range s.Reports {
		r := Report{ID: sr.ID, Name: sr.Name, Description: sr.Description, Status: sr.Status,
			ObjectType: sr.ObjectType, FailViews: sr.FailViews}
		if sr.Rows != nil {
			r.Rows = make([][]any, len(sr.Rows))
			for i, row := range sr.Rows {
				r.Rows[i], _ = jsonValues(row).([]any)
			}
		}
		if r.Status != "" && r.Status != ReportDraft && r.Status != ReportPublished {
			return fmt.Errorf("fake: seed: report %q: unknown status %q", r.Name, r.Status)
		}
		for _, c := range sr.Columns {
			r.Columns = append(r.Columns, Column(c))
		}
		for _, c := range sr.Charts {
			r.Charts = append(r.Charts, Chart(c))
		}
		if r.Rows == nil && r.ObjectType == "" {
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
		f.AddIntegration(Integration(in))
	}
	for _, o := range s.Objects {
		fields := map[string]any{}
		for k, v := range o.Fields {
			fields[k] = jsonValues(v)
		}
		f.AddObject(Object{ID: o.ID, Type: o.Type, IntegrationID: o.IntegrationID, Fields: fields})
	}
	for _, u := range s.Users {
		var emails []UserEmail
		for _, e := range u.Emails {
			emails = append(emails, UserEmail(e))
		}
		if _, err := f.AddUser(User{ID: u.ID, UserName: u.UserName, DisplayName: u.DisplayName,
			GivenName: u.GivenName, FamilyName: u.FamilyName, Emails: emails,
			Department: u.Department, Suspended: u.Suspended}); err != nil {
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
