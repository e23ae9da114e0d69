// Package version holds the SDK's version, a leaf below core: the root
// package's Version, the User-Agent's, and the instrumentation version
// of the spans and metrics of core and events.
package version

// Version is the SDK's version (partner.Version).
const Version = "1.1.0"
