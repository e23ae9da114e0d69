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

// lookup returns the route of a request's path: the path itself, or the
// path without its last segment (the secret).
func (rs *Routes) lookup(path string) (Route, bool) {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	path = strings.TrimSuffix(path, "/")
	if r, ok := rs.paths[path]; ok {
		return r, true
	}
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		r, ok := rs.paths[path[:max(i, 1)]]
		return r, ok
	}
	return Route{}, false
}

// route fills the kind and subscriber of d from the route of path, where
// its body does not carry them.
func (rs *Routes) route(path string, d *Delivery) {
	if rs == nil {
		return
	}
	r, ok := rs.lookup(path)
	if !ok {
		return
	}
	if d.Event == "" {
		d.Event = r.Kind
	}
	if d.SubscriberID == "" {
		d.SubscriberID = r.SubscriberID
	}
}
