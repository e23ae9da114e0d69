package check

import (
	"net/url"
	"strings"
)

// RedactedURL returns raw with the password of its userinfo replaced by "xxxxx"
// (url.URL.Redacted), for a message about the URL. A raw URL that does
// not parse, or whose userinfo url.Parse does not see (an opaque URL such
// as "admin:pw@host"), has everything before the last "@" of its
// authority replaced instead.
func RedactedURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Opaque == "" {
		return u.Redacted()
	}
	start := 0
	if i := strings.Index(raw, "//"); i >= 0 {
		start = i + 2
	}
	end := len(raw)
	if i := strings.IndexAny(raw[start:], "/?#"); i >= 0 {
		end = start + i
	}
	at := strings.LastIndexByte(raw[start:end], '@')
	if at < 0 {
		return raw
	}
	return raw[:start] + "xxxxx" + raw[start+at:]
}

// URLParseError returns the error of url.Parse without the URL it repeats: err's
// inner error when err is a *url.Error, err otherwise.
func URLParseError(err error) error {
	if uerr, ok := err.(*url.Error); ok {
		return uerr.Err
	}
	return err
}
