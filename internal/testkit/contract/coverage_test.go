package contract_test

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/testkit/contract"
)

// operation is one operation of the contract.
type operation struct {
	id, method, path, sdkMethod string
	fakeOnly                    bool
	// noSDK says why the SDK sends no request to the operation (x-no-sdk):
	// the connector's sign-in. TestConnectorTour exercises those.
	noSDK string
}

func operations(t *testing.T) []operation {
	t.Helper()
	c, err := contract.LoadReference()
	if err != nil {
		t.Fatal(err)
	}
	var ops []operation
	for path, item := range c.Doc().Paths.Map() {
		for method, op := range item.Operations() {
			sdk, _ := op.Extensions["x-sdk-method"].(string)
			fakeOnly := op.Extensions["x-fake-extension"] != nil
			noSDK, _ := op.Extensions["x-no-sdk"].(string)
			ops = append(ops, operation{op.OperationID, method, path, sdk, fakeOnly, noSDK})
			if src, _ := op.Extensions["x-source"].(string); src == "" {
				t.Errorf("%s %s: no x-source", method, path)
			}
			if op.OperationID == "" {
				t.Errorf("%s %s: no operationId", method, path)
			}
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	return ops
}

// skip reports whether a correction under way excuses key.
func skip(t *testing.T, key, what string) bool {
	t.Helper()
	if why := contract.Pending(key); why != "" {
		t.Logf("%s: %s (pending: %s)", key, what, why)
		return true
	}
	return false
}

// TestEveryOperationHasSDKMethodAndFakeRoute lists each operation of the
// contract with the SDK method that sends it (x-sdk-method: a field of
// partner.Client and a method of its service), or the reason the SDK
// sends none (x-no-sdk, without x-sdk-method), and the fake route that
// serves it: a request to the fake must not get the generic 404 or 405
// of a route the fake lacks.
func TestEveryOperationHasSDKMethodAndFakeRoute(t *testing.T) {
	client := reflect.TypeFor[partner.Client]()
	f := fake.New()
	defer f.Close()
	for _, op := range operations(t) {
		field, name, _ := strings.Cut(op.sdkMethod, ".")
		sf, ok := client.FieldByName(field)
		switch {
		case op.noSDK != "" && op.sdkMethod != "":
			t.Errorf("%s (%s %s): x-no-sdk beside x-sdk-method %s", op.id, op.method, op.path, op.sdkMethod)
		case op.noSDK != "":
		case op.sdkMethod == "":
			t.Errorf("%s (%s %s): no x-sdk-method", op.id, op.method, op.path)
		case !ok:
			t.Errorf("%s: partner.Client has no field %s", op.id, field)
		default:
			if _, ok := sf.Type.MethodByName(name); !ok && !skip(t, op.id, "no SDK method "+op.sdkMethod) {
				var names []string
				for method := range sf.Type.Methods() {
					names = append(names, method.Name)
				}
				t.Errorf("%s: %s has no method %s (it has %s)", op.id, sf.Type, name, strings.Join(names, ", "))
			}
		}
		path := strings.NewReplacer("{reportId}", "1", "{viewId}", "1").Replace(op.path)
		for _, p := range []string{"{user_id}", "{object_id}", "{integration_id}", "{subscriber_id}", "{event}", "{id}"} {
			path = strings.ReplaceAll(path, p, "x")
		}
		rec := httptest.NewRecorder()
		f.ServeHTTP(rec, httptest.NewRequest(op.method, path, nil))
		if noRoute(rec) && !skip(t, op.id, "no fake route") {
			t.Errorf("%s: the fake has no route %s %s (answered %d %q)", op.id, op.method, op.path, rec.Code, rec.Body.String())
		}
		t.Logf("%-28s %-6s %-52s %-26s fake %d", op.id, op.method, op.path, op.sdkMethod, rec.Code)
	}
}

// noRoute reports whether an answer is the fake's mux saying that it has
// no such route (its plain-text 404 or 405), not an answer of a route.
func noRoute(rec *httptest.ResponseRecorder) bool {
	return (rec.Code == http.StatusNotFound || rec.Code == http.StatusMethodNotAllowed) &&
		strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain")
}

// TestConnectorOnlyPathsAreNoRoutes: the paths only the connector has
// (x-connector-only-paths, rewritten by the connector to the service's
// own) are not operations of the contract, and the fake answers a POST
// to them like any route the service lacks.
func TestConnectorOnlyPathsAreNoRoutes(t *testing.T) {
	c, err := contract.LoadReference()
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := c.Doc().Extensions["x-connector-only-paths"].([]any)
	if len(paths) == 0 {
		t.Fatal("no x-connector-only-paths")
	}
	f := fake.New()
	defer f.Close()
	for _, p := range paths {
		path, _ := p.(map[string]any)["path"].(string)
		if c.Doc().Paths.Find(path) != nil {
			t.Errorf("%s is an operation of the contract", path)
		}
		rec := httptest.NewRecorder()
		f.ServeHTTP(rec, httptest.NewRequest("POST", path+"?integration_id=x", nil))
		if !noRoute(rec) && !skip(t, "POST "+path, "the fake serves it") {
			t.Errorf("fake: POST %s answered %d %q, want the 404 of a route the service lacks", path, rec.Code, rec.Body.String())
		}
	}
}
