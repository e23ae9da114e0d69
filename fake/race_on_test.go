//go:build race

package fake

// raceEnabled says the tests run with the race detector, whose shadow
// memory and slower allocation the heap measures of memory_test.go are
// not about: they run without it, in go test ./....
const raceEnabled = true
