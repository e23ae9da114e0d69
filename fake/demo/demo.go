// Package demo names the demo data set of the fake: the ids of the objects,
// integrations, reports and users that fake.WithDemoData seeds and
// cmd/partnerfake serves, fixed so that tests, docs and examples can name
// them.
//
//	srv := fake.NewServer(fake.WithDemoData())
//	o, _ := srv.Object(demo.Opportunity1)
//
// Below is what the fake seeds, field by field, so that a test can write a
// change or a filter that matches (a test of the fake holds this list to
// the seed).
//
// # Integrations
//
// Each with the type of the objects its bulk loads write and the key field
// a row is matched on:
//
//	int-demo-opportunities: opportunity objects, bulk key sales_details.crm_opportunity_id
//	int-demo-accounts: account objects, bulk key account_info.external_account_id
//
// # Objects
//
// Each with its type, its integration and its fields by dotted name
// (strings quoted). Every opportunity has sales_details.partner "P1"; each
// is in another stage, so a change of stage (object.stage_change) or a
// filter on stage picks one:
//
//	opp-demo-0001 (opportunity of int-demo-opportunities): amount=10000 name="Acme renewal" sales_details.partner="P1" stage="prospecting"
//	opp-demo-0002 (opportunity of int-demo-opportunities): amount=20000 name="Globex expansion" sales_details.partner="P1" stage="negotiation"
//	opp-demo-0003 (opportunity of int-demo-opportunities): amount=30000 name="Initech pilot" sales_details.partner="P1" stage="closed"
//	acc-demo-0001 (account of int-demo-accounts): account_info.industry="manufacturing" name="Acme Corp"
//	acc-demo-0002 (account of int-demo-accounts): account_info.industry="manufacturing" name="Globex Inc"
//
// No object holds an external id or an audit field until a test writes
// one.
//
// # Users
//
// Each with its userName (also its primary work e-mail), display name,
// department, state and user attributes:
//
//	usr-demo-0001: ada.lovelace@example.com, Ada Lovelace, Engineering, active; region=emea (namespace 1) role=partner_admin,deal_registrar (namespace 1)
//	usr-demo-0002: grace.hopper@example.com, Grace Hopper, Sales, active; region=amer (namespace 1) role=sales_rep (namespace 1)
//	usr-demo-0003: alan.turing@example.com, Alan Turing, Research, suspended
//
// # Reports
//
// Each with its status and rows, its columns (id, name, type; filters name
// a column by its position, "0" for the first) and its charts (id, name,
// the column it groups by):
//
//	101 "Pipeline by stage" (PUBLISHED), rows: the opportunity objects
//	columns: name "Opportunity" TEXT, stage "Stage" TEXT, amount "Amount" CURRENCY
//	charts: 1 "Opportunities by stage" by stage
//
//	102 "Partners" (PUBLISHED), rows: 25, generated
//	columns: partner_id "Partner ID" NUMBER, partner_name "Partner" TEXT, region "Region" TEXT, tier "Tier" TEXT, active "Active" BOOLEAN
//	charts: 1 "Partners by region" by region, 2 "Partners by tier" by tier
//
//	103 "Quarterly targets (draft)" (DRAFT), rows: 4
//	columns: quarter "Quarter" TEXT, target "Target" DECIMAL
//
//	104 "Deal registrations" (PUBLISHED), rows: 100000, generated
//	columns: deal_id "Deal ID" NUMBER, partner "Partner" TEXT, region "Region" TEXT, stage "Stage" TEXT, amount "Amount" CURRENCY, registered "Registered" DATE
//	charts: 1 "Deals by stage" by stage, 2 "Deals by region" by region
//
// Row i (from 0) of report 102 is partner i+1, "Partner 001" onwards, in
// region EMEA, NA, APAC, LATAM in turn, tier Gold, Silver, Registered in
// turn, inactive when i is a multiple of 5. Report 104's rows cycle through
// the same regions and through the stages prospecting, qualification,
// proposal, negotiation, closed (seven rows each). Report 101 reads the
// opportunities above when it is read, so it changes with them.
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
