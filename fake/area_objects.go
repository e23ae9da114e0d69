package fake

// This file is the objects area of the fake; its issue fills it in.

// objectsStore holds the state of the objects area.
type objectsStore struct{}

// registerObjects registers the routes of the objects area.
func (f *Fake) registerObjects() {}

// seedObjectsDemo adds the objects part of the demo data set.
func (f *Fake) seedObjectsDemo() {}
