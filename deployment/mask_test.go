package deployment_test

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/deployment"
)

const (
	clientSecret = "s3cret-client-value"
	subKey       = "sub-key-value-42"
)

func testConnection() deployment.Connection {
	return deployment.Connection{BaseURL: "https://api.example.com", ClientID: "app-id", ClientSecret: clientSecret,
		SubscriptionKey: subKey, Words: deployment.Words{EnvHeader: "x-acme-env"}}
}

// Holders of a Connection, each as a program may keep one.
type (
	inField struct {
		Name string
		Conn deployment.Connection
	}
	inPointerField struct {
		Name string
		Conn *deployment.Connection
	}
	inNested struct {
		Service struct {
			Conn deployment.Connection
		}
	}
	inAnyField struct {
		Conn any
	}
	inSliceField struct {
		Conns []deployment.Connection
	}
	inMapField struct {
		Conns map[string]deployment.Connection
	}
)

// TestConnectionMasked is the table of the ways a Connection reaches
// text: each holder (the value, a pointer, a field of a struct, nested,
// behind an interface, in a slice, an array or a map) through each of
// fmt's verbs, slog's text and JSON handlers, encoding/json, xml and
// gob. None shows a secret; each that writes the Connection shows its
// other fields.
func TestConnectionMasked(t *testing.T) {
	c := testConnection()
	holders := map[string]any{
		"value":            c,
		"pointer":          &c,
		"struct field":     inField{Name: "crm", Conn: c},
		"pointer field":    inPointerField{Name: "crm", Conn: &c},
		"nested struct":    func() inNested { var n inNested; n.Service.Conn = c; return n }(),
		"interface field":  inAnyField{Conn: c},
		"slice":            []deployment.Connection{c, c},
		"slice of pointer": []*deployment.Connection{&c},
		"array":            [1]deployment.Connection{c},
		"map value":        map[string]deployment.Connection{"crm": c},
		"map key":          map[deployment.Connection]int{c: 1},
		"slice in field":   inSliceField{Conns: []deployment.Connection{c}},
		"map in field":     inMapField{Conns: map[string]deployment.Connection{"crm": c}},
		"[]any":            []any{c},
	}
	encoders := map[string]func(any) (string, error){}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%t", "%x", "%X", "%10.3v", "%-8s", "% x"} {
		encoders["fmt "+verb] = func(v any) (string, error) { return fmt.Sprintf(verb, v), nil }
	}
	encoders["fmt.Sprint"] = func(v any) (string, error) { return fmt.Sprint(v), nil }
	encoders["fmt.Sprintln"] = func(v any) (string, error) { return fmt.Sprintln(v), nil }
	encoders["slog text"] = func(v any) (string, error) { return logWith(v, false), nil }
	encoders["slog JSON"] = func(v any) (string, error) { return logWith(v, true), nil }
	encoders["slog text group"] = func(v any) (string, error) { return logGroup(v, false), nil }
	encoders["slog JSON group"] = func(v any) (string, error) { return logGroup(v, true), nil }
	encoders["encoding/json"] = func(v any) (string, error) { b, err := json.Marshal(v); return string(b), err }
	encoders["json indent"] = func(v any) (string, error) { b, err := json.MarshalIndent(v, "", " "); return string(b), err }
	encoders["encoding/xml"] = func(v any) (string, error) { b, err := xml.Marshal(v); return string(b), err }
	encoders["encoding/gob"] = func(v any) (string, error) {
		var b bytes.Buffer
		err := gob.NewEncoder(&b).Encode(v)
		return b.String(), err
	}
	ways := 0
	for hname, h := range holders {
		for ename, enc := range encoders {
			out, err := enc(h)
			ways++
			what := hname + " through " + ename
			if strings.Contains(out, clientSecret) || strings.Contains(out, subKey) {
				t.Errorf("%s shows a secret: %s", what, out)
			}
			if err != nil {
				if strings.Contains(err.Error(), clientSecret) || strings.Contains(err.Error(), subKey) {
					t.Errorf("%s: the error shows a secret: %v", what, err)
				}
				// xml refuses maps, gob interfaces it was not told of:
				// nothing written.
				continue
			}
			if strings.Contains(out, `"!ERROR:json: unsupported`) {
				continue // slog's JSON handler refuses a map keyed by a Connection
			}
			if !strings.Contains(ename, "%x") && !strings.Contains(ename, "%X") && !strings.Contains(ename, "% x") && !strings.Contains(out, "api.example.com") {
				t.Errorf("%s does not show the Connection: %s", what, out)
			}
		}
	}
	if ways < 52 {
		t.Errorf("%d ways tried, want at least the issue's 52", ways)
	}
}

func logWith(v any, asJSON bool) string {
	var b bytes.Buffer
	var h slog.Handler = slog.NewTextHandler(&b, nil)
	if asJSON {
		h = slog.NewJSONHandler(&b, nil)
	}
	slog.New(h).Info("connecting", "conn", v)
	return b.String()
}

func logGroup(v any, asJSON bool) string {
	var b bytes.Buffer
	var h slog.Handler = slog.NewTextHandler(&b, nil)
	if asJSON {
		h = slog.NewJSONHandler(&b, nil)
	}
	slog.New(h).With(slog.Group("client", "conn", v)).Info("connecting")
	return b.String()
}

// TestConnectionEncodings: the encoders write the fields as they write
// a struct, with the secrets masked, and gob reads back what it wrote.
func TestConnectionEncodings(t *testing.T) {
	c := testConnection()
	b, err := json.Marshal(c)
	if want := `{"BaseURL":"https://api.example.com","ClientID":"app-id","ClientSecret":"[redacted]","SubscriptionKey":"[redacted]","Words":{"EnvHeader":"x-acme-env","PortalWord":"","SubscriptionKeyHeader":""},"Environment":""}`; err != nil || string(b) != want {
		t.Errorf("json: %s, %v\nwant %s", b, err, want)
	}
	b, err = xml.Marshal(c)
	if want := `<Connection><BaseURL>https://api.example.com</BaseURL><ClientID>app-id</ClientID><ClientSecret>[redacted]</ClientSecret><SubscriptionKey>[redacted]</SubscriptionKey><Words><EnvHeader>x-acme-env</EnvHeader><PortalWord></PortalWord><SubscriptionKeyHeader></SubscriptionKeyHeader></Words><Environment></Environment></Connection>`; err != nil || string(b) != want {
		t.Errorf("xml: %s, %v\nwant %s", b, err, want)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(c); err != nil {
		t.Fatal(err)
	}
	var back deployment.Connection
	if err := gob.NewDecoder(&buf).Decode(&back); err != nil {
		t.Fatal(err)
	}
	want := c
	want.ClientSecret, want.SubscriptionKey = "[redacted]", "[redacted]"
	if back != want {
		t.Errorf("gob read back %#v", back)
	}
	if got := fmt.Sprintf("%d", c); got != "%!d(deployment.Connection="+c.String()+")" {
		t.Errorf("%%d: %s", got)
	}
	if got := fmt.Sprintf("%q", c); got != fmt.Sprintf("%q", c.String()) {
		t.Errorf("%%q: %s", got)
	}
	if got := fmt.Sprintf("%v", deployment.Connection{BaseURL: "https://x"}); strings.Contains(got, "[redacted]") {
		t.Errorf("empty secrets print as masked: %s", got)
	}
}
