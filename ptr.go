package partner

// Ptr returns a pointer to v, for the optional fields of params and
// resources that tell "unset" from a zero value: scim.User.Active,
// bulk.StatusParams.IncludeErrors and MaxErrors.
//
// Deprecated: Go 1.26's new(expr) does the same, and go fix rewrites
// the calls:
//
//	u := &scim.User{UserName: "ada@example.com", Active: new(false)}
//	st := bulk.StatusParams{IncludeErrors: new(true), MaxErrors: new(3)}
//
//go:fix inline
func Ptr[T any](v T) *T { return new(v) }
