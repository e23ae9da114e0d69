module github.com/partnerapi/partner-go/scripts/vulnindex

go 1.26.0
