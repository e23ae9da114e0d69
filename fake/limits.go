package fake

import "github.com/partnerapi/partner-go/internal/fakehttp"

// Size limits of every route, the fake's own (the interface shows none):
// a long-running fake must not be made to hold an unbounded request.
// fakehttp.LimitRequest applies them.
const (
	// maxHeaderBytes bounds the request headers (431 beyond it; NewServer
	// also sets it as the server's limit).
	maxHeaderBytes = fakehttp.MaxHeaderBytes
	// maxQueryBytes bounds the raw query string (414 beyond it).
	maxQueryBytes = fakehttp.MaxQueryBytes
	// maxTokenBody caps the body of the token endpoint (413 beyond it).
	maxTokenBody = 64 << 10
	// maxLoadBody caps the body of a bulk load (413 beyond it). Loads are
	// parsed as they stream, so the cap bounds time, not memory.
	maxLoadBody = 4 << 30
	// maxUploadBody caps a file sent to a signed upload URL, with its
	// multipart framing (413 beyond it).
	maxUploadBody = maxUploadSize + 1<<20
)
