// Package area lets package partner build the *Service of each area
// package without those packages exporting a constructor that takes an
// internal type: services are reachable only from partner.Client, as in
// go-github. Each area package registers its constructor in an init
// function; partner.New (and the module's own tests) build through New.
package area

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/partnerapi/partner-go/core"
)

var ctors sync.Map // reflect.Type of T -> func(*core.Client, A) *T

// Register records how to build a *T on a transport. Call it from the
// area package's init.
func Register[T any](f func(*core.Client) *T) {
	RegisterWith(func(t *core.Client, _ struct{}) *T { return f(t) })
}

// RegisterWith is Register for a service built with settings of type A.
func RegisterWith[T, A any](f func(*core.Client, A) *T) {
	ctors.Store(reflect.TypeFor[T](), f)
}

// New builds the *T registered with Register, sending through t.
func New[T any](t *core.Client) *T { return NewWith[T](t, struct{}{}) }

// NewWith builds the *T registered with RegisterWith.
func NewWith[T, A any](t *core.Client, a A) *T {
	f, ok := ctors.Load(reflect.TypeFor[T]())
	if !ok {
		panic(fmt.Sprintf("area: no constructor registered for %v", reflect.TypeFor[T]()))
	}
	build, ok := f.(func(*core.Client, A) *T)
	if !ok {
		panic(fmt.Sprintf("area: constructor of %v does not take %v", reflect.TypeFor[T](), reflect.TypeFor[A]()))
	}
	return build(t, a)
}

// OAuth says how the oauth.Service of a client gets its tokens.
type OAuth struct {
	ClientID     string
	ClientSecret string
	// Scopes are requested space-separated in `scope`.
	Scopes []string
	// State, when set, is sent with each token request and the answer's
	// `state` must echo it.
	State string
	// FormEncoded posts token requests as application/x-www-form-urlencoded
	// (RFC 6749) instead of the JSON body the interface documents.
	FormEncoded bool
	// External, when set, is the token source of the client
	// (partner.WithTokenSource) instead of the client credentials grant.
	External oauth2.TokenSource
	// Now is the clock used for expiry (default time.Now); tests inject one.
	Now func() time.Time
}
