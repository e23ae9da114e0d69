//go:build !race

package fake

// raceEnabled says the tests run with the race detector (race_on_test.go).
const raceEnabled = false
