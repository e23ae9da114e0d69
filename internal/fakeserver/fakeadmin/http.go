package fakeadmin

import "github.com/partnerapi/partner-go/internal/fakeserver/fakehttp"

// The admin routes answer, and bound their requests, as the fake's
// service routes do (internal/fakeserver/fakehttp).
var (
	writeJSON  = fakehttp.WriteJSON
	writeError = fakehttp.WriteError
)
