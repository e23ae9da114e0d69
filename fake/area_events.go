package fake

// This file is the events area of the fake; its issue fills it in.

// eventsStore holds the state of the events area.
type eventsStore struct{}

// registerEvents registers the routes of the events area.
func (f *Fake) registerEvents() {}

// seedEventsDemo adds the events part of the demo data set.
func (f *Fake) seedEventsDemo() {}
