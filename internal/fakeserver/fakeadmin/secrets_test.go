package fakeadmin_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
)

// TestAdminRequestLogHoldsNoSecrets: the admin API's request log shows
// neither the gateway subscription key (from the header or the query,
// right or wrong, in any spelling of the parameter's case), nor tokens or
// the client secret sent in a query, while it still logs those requests.
func TestAdminRequestLogHoldsNoSecrets(t *testing.T) {
	t.Parallel()
	const key, secret = "sk-admin-log-8c41", "partner-test-secret"
	_, base := adminServer(t, func() *fake.Fake {
		return fake.New(fake.WithDemoData(), fake.WithDeployment(fake.Deployment{SubscriptionKey: key}))
	})
	st, body := call(t, "POST", base+"/oauth/token?client_secret="+secret+"&subscription-key="+key,
		`{"grant_type":"client_credentials","client_id":"partner-test-client","client_secret":"`+secret+`"}`)
	if st != 200 {
		t.Fatalf("token: %d %s", st, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.Unmarshal([]byte(body), &tok)
	for _, q := range []string{
		"subscription-key=" + key,
		"SUBSCRIPTION-KEY=wrong-" + key + "&subscription-key=" + key,
		"subscription-key=" + key + "&Access_Token=" + tok.AccessToken,
	} {
		call(t, "GET", base+"/event/v1/subscriber?"+q, "", "Authorization", "Bearer "+tok.AccessToken)
	}
	call(t, "GET", base+"/event/v1/subscriber", "", "Ocp-Apim-Subscription-Key", "wrong-"+key)

	_, log := call(t, "GET", base+"/_fake/requests", "")
	var reqs []struct {
		Path, Query, Fault string
		Status             int
	}
	if err := json.Unmarshal([]byte(log), &reqs); err != nil || len(reqs) != 5 {
		t.Fatalf("request log (%v): %s", err, log)
	}
	for _, r := range reqs[1:4] {
		if r.Path != "/event/v1/subscriber" || r.Status != 200 || !strings.Contains(strings.ToLower(r.Query), "subscription-key=%2a%2a%2a") {
			t.Errorf("logged %+v", r)
		}
	}
	if reqs[4].Fault != "subscription-key" || reqs[4].Status != 401 {
		t.Errorf("refused request logged as %+v", reqs[4])
	}
	for _, s := range []string{key, secret, tok.AccessToken} {
		if strings.Contains(log, s) {
			t.Errorf("the request log shows %q:\n%s", s, log)
		}
	}
}
