package fake

// Size limits of every route, the fake's own (the interface shows none):
// a long-running fake must not be made to hold an unbounded request.
// fakehttp.LimitRequest applies them with fakehttp.MaxHeaderBytes and
// fakehttp.MaxQueryBytes.
const (
	// maxTokenBody caps the body of the token endpoint (413 beyond it).
	maxTokenBody = 64 << 10
	// maxLoadBody caps the body of a bulk load (413 beyond it). Loads are
	// parsed as they stream, so the cap bounds time, not memory.
	maxLoadBody = 4 << 30
	// maxUploadBody caps a file sent to a signed upload URL, with its
	// multipart framing (413 beyond it).
	maxUploadBody = maxUploadSize + 1<<20
)
