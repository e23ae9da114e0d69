// Package demo names the demo data set of the fake: the ids of the objects,
// integrations, reports and users that fake.WithDemoData seeds and
// cmd/partnerfake serves, fixed so that tests, docs and examples can name
// them.
//
//	srv := fake.NewServer(fake.WithDemoData())
//	o, _ := srv.Object(demo.Opportunity1)
package demo

// Integrations and objects.
const (
	OpportunityIntegration = "int-demo-opportunities"
	AccountIntegration     = "int-demo-accounts"
	Opportunity1           = "opp-demo-0001"
	Opportunity2           = "opp-demo-0002"
	Opportunity3           = "opp-demo-0003"
	Account1               = "acc-demo-0001"
	Account2               = "acc-demo-0002"
)

// IDs of the demo reports.
const (
	ReportPipeline  int64 = 101 // backed by the demo opportunities
	ReportPartners  int64 = 102 // 25 partners
	ReportDraft     int64 = 103 // a DRAFT report, 4 rows
	ReportLarge     int64 = 104 // ReportLargeRows deal registrations
	ReportLargeRows       = 100_000
)

// Users. User3 is suspended.
const (
	User1      = "usr-demo-0001"
	User2      = "usr-demo-0002"
	User3      = "usr-demo-0003" // suspended
	UserEmail1 = "ada.lovelace@example.com"
	UserEmail2 = "grace.hopper@example.com"
	UserEmail3 = "alan.turing@example.com"
)

// Namespace is the namespace of the demo user attributes.
const Namespace int64 = 1
