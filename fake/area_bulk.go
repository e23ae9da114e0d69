package fake

// This file is the bulk area of the fake; its issue fills it in.

// bulkStore holds the state of the bulk area.
type bulkStore struct{}

// registerBulk registers the routes of the bulk area.
func (f *Fake) registerBulk() {}

// seedBulkDemo adds the bulk part of the demo data set.
func (f *Fake) seedBulkDemo() {}
