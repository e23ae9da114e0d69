package events

import (
	"strings"
	"sync"
)

// Route is what a callback path says of the deliveries sent to it: the
// event kind and the subscriber, when known.
type Route struct {
	Kind         Kind
	SubscriberID string
}

// Routes names the event kind and subscriber of each callback path, for
// a Handler that receives the deliveries of several subscribers: a
// delivery carries no envelope, so with one subscriber per kind, each
// with a path of its own, the path is what tells them apart. Add a path
// before subscribing, and again with the subscriber id once Subscribe
// returns it. A Routes is safe for concurrent use; its zero value is
// empty.
type Routes struct {
	mu    sync.RWMutex
	paths map[string]Route
}

// Add names the route of the deliveries to path: the callback URL's path
// as given to Subscribe, without the secret Subscribe appends
// ("/hooks/object.update").
func (rs *Routes) Add(path string, r Route) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.paths == nil {
		rs.paths = map[string]Route{}
	}
	rs.paths[strings.TrimSuffix(path, "/")] = r
}

// Remove forgets path.
func (rs *Routes) Remove(path string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.paths, strings.TrimSuffix(path, "/"))
}

// subscriberPath returns the part of a delivery's path that names its
// subscriber, and the route Routes has for it. It is the one rule both
// Routes and Dedup's key use: the path without a trailing slash, when
// Routes names it; else the path without its last segment (the secret
// Subscribe appends), when Routes names that or when secrets is set (the
// last segment is then a secret); else the whole path (a Handler without
// Secrets and without a route cannot tell a secret from a path segment).
// rs may be nil.
func (rs *Routes) subscriberPath(path string, secrets bool) (string, Route) {
	path = strings.TrimSuffix(path, "/")
	if r, ok := rs.get(path); ok {
		return path, r
	}
	parent := path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		parent = path[:max(i, 1)]
	}
	if r, ok := rs.get(parent); ok {
		return parent, r
	}
	if secrets {
		return parent, Route{}
	}
	return path, Route{}
}

// get returns the route of a path as added.
func (rs *Routes) get(path string) (Route, bool) {
	if rs == nil {
		return Route{}, false
	}
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	r, ok := rs.paths[path]
	return r, ok
}

// fill sets the kind and subscriber of d from r, where its body does not
// carry them.
func (r Route) fill(d *Delivery) {
	if d.Event == "" {
		d.Event = r.Kind
	}
	if d.SubscriberID == "" {
		d.SubscriberID = r.SubscriberID
	}
}
