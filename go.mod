module github.com/partnerapi/partner-go

go 1.26.0

require (
	github.com/google/go-querystring v1.2.0
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/jarcoal/httpmock v1.4.2
	go.uber.org/goleak v1.3.0
	golang.org/x/oauth2 v0.37.0
)

require (
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	golang.org/x/sys v0.33.0 // indirect
)
