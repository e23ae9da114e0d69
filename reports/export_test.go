package reports

// DecodePage exposes the page decoder to the benchmarks of package
// reports_test, which decode the same bytes from memory as a baseline.
var DecodePage = decodePage
