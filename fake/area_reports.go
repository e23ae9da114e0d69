package fake

// This file is the reports area of the fake; its issue fills it in.

// reportsStore holds the state of the reports area.
type reportsStore struct{}

// registerReports registers the routes of the reports area.
func (f *Fake) registerReports() {}

// seedReportsDemo adds the reports part of the demo data set.
func (f *Fake) seedReportsDemo() {}
