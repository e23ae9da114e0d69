// Package api holds the contract of the Partner Integration Service,
// openapi.yaml: an OpenAPI 3 document of every operation the SDK calls
// and the fake serves, each with its source. The module's tests hold the
// SDK and the fake to it (internal/testkit/contract); this package only carries
// the document, so that importing it builds no OpenAPI library.
package api

import _ "embed"

// OpenAPI is the text of openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
