package deployment

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
)

// This file keeps a Connection's secrets out of what prints or encodes
// one: fmt (Format), encoding/json (MarshalJSON), encoding/xml
// (MarshalXML) and encoding/gob (GobEncode). String, GoString and
// LogValue are in deployment.go.

// masked is a Connection's fields without its methods, its secrets
// masked, for the encoders.
type masked Connection

func (c Connection) masked() masked {
	m := masked(c)
	m.ClientSecret, m.SubscriptionKey = mask(c.ClientSecret), mask(c.SubscriptionKey)
	return m
}

// Format implements fmt.Formatter: every verb prints c with its secrets
// masked. %v, %+v and %s print String, %#v GoString, %q String quoted,
// %x and %X String in hexadecimal; any other verb (%d, %t, ...) prints
// String inside fmt's mark of a wrong verb, %!d(deployment.Connection=...).
func (c Connection) Format(f fmt.State, verb rune) {
	switch verb {
	case 'v':
		if f.Flag('#') {
			io.WriteString(f, c.GoString())
			return
		}
		io.WriteString(f, c.String())
	case 's', 'q', 'x', 'X':
		fmt.Fprintf(f, fmt.FormatString(f, verb), c.String())
	default:
		fmt.Fprintf(f, "%%!%c(deployment.Connection=%s)", verb, c.String())
	}
}

// MarshalJSON implements json.Marshaler: c's fields by name, as
// encoding/json writes a struct, its secrets masked ("[redacted]").
func (c Connection) MarshalJSON() ([]byte, error) { return json.Marshal(c.masked()) }

// MarshalXML implements xml.Marshaler: c's fields as elements, as
// encoding/xml writes a struct, its secrets masked.
func (c Connection) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	return e.EncodeElement(c.masked(), start)
}

// GobEncode implements gob.GobEncoder: c's fields, its secrets masked.
// GobDecode reads them back, the secrets as "[redacted]".
func (c Connection) GobEncode() ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(c.masked())
	return b.Bytes(), err
}

// GobDecode implements gob.GobDecoder, for what GobEncode wrote.
func (c *Connection) GobDecode(data []byte) error {
	var m masked
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&m); err != nil {
		return err
	}
	*c = Connection(m)
	return nil
}
