package fake

import "time"

// Size limits of every route, the fake's own (the interface shows none):
// a long-running fake must not be made to hold an unbounded request.
// fakehttp.LimitRequest applies them with fakehttp.MaxHeaderBytes and
// fakehttp.MaxQueryBytes.
const (
	// maxTokenBody caps the body of the token endpoint (413 beyond it).
	maxTokenBody = 64 << 10
	// maxLoadBody caps the body of a bulk load (413 beyond it). Loads are
	// parsed as they stream and spooled on disk past 4 MiB, so the cap
	// bounds time and the spool's disk, not memory.
	maxLoadBody = 4 << 30
	// maxUploadBody caps a file sent to a signed upload URL, with its
	// multipart framing (413 beyond it).
	maxUploadBody = maxUploadSize + 1<<20
)

// Default totals of the state a long-running fake keeps (see Limits).
// A live access token costs about 200 bytes, an upload URL about 300
// bytes and its file.
const (
	defaultMaxAccessTokens = 100_000
	defaultMaxUploads      = 10_000
	defaultMaxUploadBytes  = 1 << 30
	defaultMaxSpoolBytes   = 1 << 30
)

// Limits are totals of the state a long-running fake keeps for its
// clients, the fake's own (the interface shows none). A zero field takes
// its default. docs/reliability.md ("Shared fake") gives the cost of each
// kind of state.
type Limits struct {
	// AccessTokens caps the live access tokens (default 100,000). A
	// token issued past it makes the fake forget the oldest, which is
	// then refused as unknown (401).
	AccessTokens int
	// Uploads caps the signed upload URLs handed out and not yet expired
	// (default 10,000). A URL handed out past it makes the fake forget
	// the oldest with its file: its URL answers 404 and its token is
	// refused as unknown.
	Uploads int
	// UploadBytes caps the bytes of the uploaded files the fake holds
	// (default 1 GiB). An upload that would pass it is refused with 413;
	// a file is let go once loaded or expired.
	UploadBytes int64
	// SpoolBytes caps the bytes of load bodies the fake spools at once,
	// over all loads running (default 1 GiB): each body is kept, in
	// memory up to 4 MiB and past it in a temporary file, while its load
	// runs. A load whose body would pass it is refused with 413 and
	// changes nothing.
	SpoolBytes int64
}

// DefaultLimits returns the totals a fake keeps unless WithLimits sets
// others.
func DefaultLimits() Limits {
	return Limits{AccessTokens: defaultMaxAccessTokens, Uploads: defaultMaxUploads, UploadBytes: defaultMaxUploadBytes, SpoolBytes: defaultMaxSpoolBytes}
}

// WithLimits sets the totals of the state the fake keeps (see Limits).
func WithLimits(l Limits) Option {
	return func(f *Fake) {
		if l.AccessTokens > 0 {
			f.auth.maxAccess = l.AccessTokens
		}
		if l.Uploads > 0 {
			f.bulk.maxUploads = l.Uploads
		}
		if l.UploadBytes > 0 {
			f.bulk.maxUploadBytes = l.UploadBytes
		}
		if l.SpoolBytes > 0 {
			f.bulk.maxSpoolBytes = l.SpoolBytes
		}
	}
}

// WithSpoolDir makes the fake write the temporary files of load bodies
// past 4 MiB (see Limits.SpoolBytes) in dir instead of the system's
// temporary directory. A file is removed when its load ends; partnerfake
// gives a directory of its own, which it removes when it exits.
func WithSpoolDir(dir string) Option {
	return func(f *Fake) { f.bulk.spoolDir = dir }
}

// bodyStall is how long a bulk load or an upload may send nothing of its
// body before the fake ends it (see stallBody).
const bodyStall = 30 * time.Second
