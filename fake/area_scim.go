package fake

// This file is the scim area of the fake; its issue fills it in.

// scimStore holds the state of the scim area.
type scimStore struct{}

// registerSCIM registers the routes of the scim area.
func (f *Fake) registerSCIM() {}

// seedSCIMDemo adds the scim part of the demo data set.
func (f *Fake) seedSCIMDemo() {}
