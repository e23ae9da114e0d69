// Package repocheck holds no code: its tests check the repository as a
// whole against the module as it builds. They type-check the Go blocks of
// README.md and docs/*.md, keep the record of the exported API
// (api/v1.txt), hold docs/DESIGN.md's import rules and the module's
// dependency rules, and run the README's go doc command.
//
// They run the go command (one `go list -export -deps` per test binary,
// shared by every check, a `go list -test -deps` of the fake and a
// `go doc`), which takes a while on a cold build cache; in a package of their own they leave the SDK's tests (the
// root package's) their parallel slots. The tests run from the module's
// root, whatever the package's directory.
//
// After a deliberate change of the exported API, rewrite the record with
//
//	go test ./internal/repocheck -run TestAPIRecord -update
package repocheck
