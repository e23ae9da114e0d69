package partner

// Ptr returns a pointer to v, for the optional fields of params and
// resources that tell "unset" from a zero value: scim.User.Active,
// bulk.StatusParams.IncludeErrors and MaxErrors.
//
//	u := &scim.User{UserName: "ada@example.com", Active: partner.Ptr(false)}
//	st := bulk.StatusParams{IncludeErrors: partner.Ptr(true), MaxErrors: partner.Ptr(3)}
func Ptr[T any](v T) *T { return &v }
