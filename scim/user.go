package scim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// Schema is a SCIM schema URN, as listed in a resource's "schemas".
type Schema string

// The schemas of a user resource. The service defines these two; other
// URNs coming back from the server are kept as they are.
const (
	SchemaUser           Schema = "urn:ietf:params:scim:schemas:core:2.0:User"
	SchemaEnterpriseUser Schema = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
)

// ErrorType is the scimType member of a SCIM error (RFC 7644 §3.12), found
// in (*partner.Error).SCIMType; ErrorTypeOf reads it from an error.
type ErrorType string

// Values of ErrorType the service sends. Others are kept as they come.
const (
	ErrorTypeUniqueness    ErrorType = "uniqueness"    // 409: userName already taken
	ErrorTypeInvalidValue  ErrorType = "invalidValue"  // 400: a required attribute is missing or wrong
	ErrorTypeInvalidSyntax ErrorType = "invalidSyntax" // 400: the body is not valid JSON
	ErrorTypeInvalidFilter ErrorType = "invalidFilter" // 400: the list filter could not be parsed
	ErrorTypeTooMany       ErrorType = "tooMany"       // 400: the filter matches too many resources
	ErrorTypeMutability    ErrorType = "mutability"    // 400: a read-only attribute was changed
)

// Untyped names of the ErrorType values, compared with
// (*partner.Error).SCIMType as strings.
const (
	// Deprecated: Use ErrorTypeUniqueness with ErrorTypeOf.
	TypeUniqueness = "uniqueness"
	// Deprecated: Use ErrorTypeInvalidValue with ErrorTypeOf.
	TypeInvalidValue = "invalidValue"
	// Deprecated: Use ErrorTypeInvalidSyntax with ErrorTypeOf.
	TypeInvalidSyntax = "invalidSyntax"
	// Deprecated: Use ErrorTypeInvalidFilter with ErrorTypeOf.
	TypeInvalidFilter = "invalidFilter"
	// Deprecated: Use ErrorTypeTooMany with ErrorTypeOf.
	TypeTooMany = "tooMany"
	// Deprecated: Use ErrorTypeMutability with ErrorTypeOf.
	TypeMutability = "mutability"
)

// User is a SCIM 2.0 user resource. Its JSON form is the wire form:
// members the SDK does not model are kept in Extra, so a user read with
// Get and written back with Update loses nothing at the top level.
type User struct {
	// Schemas lists the schemas the resource uses. Create and Update fill
	// in SchemaUser, and SchemaEnterpriseUser when Enterprise is set.
	Schemas []Schema `json:"schemas,omitempty"`
	// ID is assigned by the service; leave it empty on Create.
	ID string `json:"id,omitempty"`
	// UserName identifies the user; an e-mail address form is used. It is
	// unique in the service, compared without regard to case.
	UserName    string  `json:"userName"`
	Name        *Name   `json:"name,omitempty"`
	DisplayName string  `json:"displayName,omitempty"`
	Emails      []Email `json:"emails,omitempty"`
	// Active is whether the user may sign in; false means suspended. Nil
	// leaves it to the service (new users are active). Set it with
	// new(false) or new(true); read it with IsActive.
	Active *bool `json:"active,omitempty"`
	// Meta is assigned by the service.
	Meta *Meta `json:"meta,omitempty"`
	// Enterprise is the enterprise extension, sent under its URN as the
	// member name.
	Enterprise *EnterpriseUser `json:"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User,omitempty"`

	// Extra holds the members of the JSON object that the fields above do
	// not model (other extensions, attributes of the full SCIM schema),
	// keyed by member name. They are sent back as they are.
	Extra map[string]json.RawMessage `json:"-"`
}

// Name is the components of a user's name.
type Name struct {
	GivenName  string `json:"givenName,omitempty"`
	FamilyName string `json:"familyName,omitempty"`
}

// Email is one e-mail address of a user.
type Email struct {
	Value   string `json:"value"`
	Type    string `json:"type,omitempty"` // "work", "home", ...
	Primary bool   `json:"primary,omitempty"`
}

// Meta is the resource metadata the service assigns.
type Meta struct {
	ResourceType string     `json:"resourceType,omitempty"` // "User"
	Created      *time.Time `json:"created,omitempty"`
	LastModified *time.Time `json:"lastModified,omitempty"`
	Location     string     `json:"location,omitempty"`
	Version      string     `json:"version,omitempty"`
}

// EnterpriseUser is the enterprise extension of a user
// (urn:ietf:params:scim:schemas:extension:enterprise:2.0:User).
type EnterpriseUser struct {
	Department string `json:"department,omitempty"`
	// Extra holds the extension's members not modelled above.
	Extra map[string]json.RawMessage `json:"-"`
}

// IsActive reports whether the user is active. A user whose Active is
// unset is active, as the service makes new users.
func (u *User) IsActive() bool { return u.Active == nil || *u.Active }

// PrimaryEmail returns the value of the primary e-mail address, or of the
// first one when none is marked primary, or "".
func (u *User) PrimaryEmail() string {
	for _, e := range u.Emails {
		if e.Primary {
			return e.Value
		}
	}
	if len(u.Emails) > 0 {
		return u.Emails[0].Value
	}
	return ""
}

type userJSON User // without methods, so encoding/json does the known members

// fastUser is what the fast path of User.UnmarshalJSON decodes into,
// taken from fastUsers and put back empty: a call decodes one user per
// answer. Its fields are User's, but Extra, each its own rather than
// reached through an embedded userJSON: encoding/json makes a
// reflect.StructField (and its index slice) of the embedded field for
// every member it decodes through one. TestFastUserHasUsersFields holds
// them to User's.
type fastUser struct {
	Schemas     []Schema `json:"schemas,omitempty"`
	ID          string   `json:"id,omitempty"`
	UserName    string   `json:"userName"`
	Name        *Name    `json:"name,omitempty"`
	DisplayName string   `json:"displayName,omitempty"`
	Emails      []Email  `json:"emails,omitempty"`
	Active      *bool    `json:"active,omitempty"`
	Meta        *Meta    `json:"meta,omitempty"`
	// The extension, decoded without its UnmarshalJSON.
	Enterprise *enterpriseJSON `json:"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"`
}

// user is the User f holds.
func (f *fastUser) user() User {
	return User{Schemas: f.Schemas, ID: f.ID, UserName: f.UserName, Name: f.Name, DisplayName: f.DisplayName,
		Emails: f.Emails, Active: f.Active, Meta: f.Meta, Enterprise: (*EnterpriseUser)(f.Enterprise)}
}

var fastUsers sync.Pool

// MarshalJSON encodes the user with its Extra members.
func (u User) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(userJSON(u))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, u.Extra, userMembers)
}

// UnmarshalJSON decodes the user, keeping unknown members in Extra.
// Member names match the fields without regard to case, as in
// encoding/json.
func (u *User) UnmarshalJSON(b []byte) error {
	fast, _ := fastUsers.Get().(*fastUser)
	if fast == nil {
		fast = new(fastUser)
	}
	ok := decodeKnown(b, fast)
	if ok {
		*u = fast.user()
	}
	*fast = fastUser{}
	fastUsers.Put(fast)
	if ok {
		return nil
	}
	var v User
	extra, err := decodeMembers(b, func(name string) any {
		switch {
		case strings.EqualFold(name, "schemas"):
			return &v.Schemas
		case strings.EqualFold(name, "id"):
			return &v.ID
		case strings.EqualFold(name, "userName"):
			return &v.UserName
		case strings.EqualFold(name, "name"):
			return &v.Name
		case strings.EqualFold(name, "displayName"):
			return &v.DisplayName
		case strings.EqualFold(name, "emails"):
			return &v.Emails
		case strings.EqualFold(name, "active"):
			return &v.Active
		case strings.EqualFold(name, "meta"):
			return &v.Meta
		case strings.EqualFold(name, string(SchemaEnterpriseUser)):
			return &v.Enterprise
		}
		return nil
	})
	if err != nil {
		return err
	}
	v.Extra = extra
	*u = v
	return nil
}

// answerUser is a user as the calls answered with one decode it. Its
// UnmarshalJSON, User's, fails on invalid JSON by itself (decodeKnown's
// Decoder checks the value, decodeMembers' json.Unmarshal the whole
// input), so core decodes it without a validity scan of its own.
type answerUser struct{ User }

// UnmarshalChecksInput marks answerUser's UnmarshalJSON as checking its
// input (core's checksItself).
func (*answerUser) UnmarshalChecksInput() {}

type enterpriseJSON EnterpriseUser

// MarshalJSON encodes the extension with its Extra members.
func (e EnterpriseUser) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(enterpriseJSON(e))
	if err != nil {
		return nil, err
	}
	return appendExtra(b, e.Extra, enterpriseMembers)
}

// UnmarshalJSON decodes the extension, keeping unknown members in Extra.
func (e *EnterpriseUser) UnmarshalJSON(b []byte) error {
	var fast enterpriseJSON
	if decodeKnown(b, &fast) {
		*e = EnterpriseUser(fast)
		return nil
	}
	var v EnterpriseUser
	extra, err := decodeMembers(b, func(name string) any {
		if strings.EqualFold(name, "department") {
			return &v.Department
		}
		return nil
	})
	if err != nil {
		return err
	}
	v.Extra = extra
	*e = v
	return nil
}

// decodeKnown is the fast path of decoding: it decodes b into v and
// reports whether that worked with no member left over. The usual answer
// of the service holds only modelled members; anything else (an unknown
// member, a type error) is left to the member-by-member path.
func decodeKnown(b []byte, v any) bool {
	d, _ := knownDecoders.Get().(*knownDecoder)
	if d == nil {
		d = new(knownDecoder)
		d.dec = json.NewDecoder(&d.r)
		d.dec.DisallowUnknownFields()
	}
	d.r.Reset(b)
	ok := d.dec.Decode(v) == nil
	d.r.Reset(nil)
	if ok && len(b) <= maxPooledInput && onlySpace(d.dec.Buffered()) {
		knownDecoders.Put(d)
	}
	return ok
}

// knownDecoder is the Decoder decodeKnown decodes through, with the
// reader it reads, kept in knownDecoders so that its buffer and scanner
// are not grown anew for every user. It goes back only after a
// successful Decode that left nothing but white space unread (which
// the next Decode skips): one that failed may keep the failure (a
// Decoder keeps a read error) or bytes of an earlier input.
type knownDecoder struct {
	r   bytes.Reader
	dec *json.Decoder
}

var knownDecoders sync.Pool

// maxPooledInput is the largest input after which decodeKnown keeps its
// Decoder, whose buffer grows to the size of a value.
const maxPooledInput = 64 << 10

// onlySpace reports whether r holds nothing but JSON white space.
func onlySpace(r io.Reader) bool {
	br, ok := r.(*bytes.Reader)
	if !ok {
		return false
	}
	for {
		c, err := br.ReadByte()
		if err != nil {
			return true
		}
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
}

// decodeMembers decodes the JSON object b member by member: into the
// destination field(name) gives, or, when it gives nil, into the returned
// map of other members (nil when there are none).
func decodeMembers(b []byte, field func(name string) any) (map[string]json.RawMessage, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	if all == nil {
		return nil, nil // JSON null: nothing to do
	}
	for k, raw := range all {
		dst := field(k)
		if dst == nil {
			continue
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return nil, fmt.Errorf("member %q: %w", k, err)
		}
		delete(all, k)
	}
	if len(all) == 0 {
		return nil, nil
	}
	return all, nil
}

func isKnown(known []string, name string) bool {
	return slices.ContainsFunc(known, func(n string) bool { return strings.EqualFold(n, name) })
}

// The JSON member names of User and EnterpriseUser (their field tags).
var (
	userMembers = []string{"schemas", "id", "userName", "name", "displayName", "emails", "active", "meta",
		string(SchemaEnterpriseUser)}
	enterpriseMembers = []string{"department"}
)

// appendExtra adds the members of extra, sorted by name, to the encoded
// JSON object b, skipping the names of modelled fields (known): a field
// always wins over an Extra member of the same name.
func appendExtra(b []byte, extra map[string]json.RawMessage, known []string) ([]byte, error) {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !isKnown(known, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return b, nil
	}
	slices.Sort(keys)
	out := bytes.TrimSuffix(bytes.TrimSpace(b), []byte("}"))
	for _, k := range keys {
		v := bytes.TrimSpace(extra[k])
		if !json.Valid(v) {
			return nil, fmt.Errorf("scim: Extra member %q is not valid JSON", k)
		}
		name, _ := json.Marshal(k)
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, name...)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, '}'), nil
}
