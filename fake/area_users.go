package fake

// This file is the users area of the fake; its issue fills it in.

// usersStore holds the state of the users area.
type usersStore struct{}

// registerUsers registers the routes of the users area.
func (f *Fake) registerUsers() {}

// seedUsersDemo adds the users part of the demo data set.
func (f *Fake) seedUsersDemo() {}
