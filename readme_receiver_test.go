package partner_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
)

// TestReceiverHandlesAChangeOnce is the README's test of a receiver's
// duplicate guard against the fake's delivery faults, word for word
// (TestReadmeTestFunctionsRun, in internal/repocheck, keeps them the same).
func TestReceiverHandlesAChangeOnce(t *testing.T) {
	t.Parallel()
	// Retries after a millisecond: the test waits for nothing.
	srv := fake.NewServer(fake.WithDemoData(), fake.WithDeliveryPolicy(fake.DeliveryPolicy{Backoff: time.Millisecond}))
	defer srv.Close()
	c, err := partner.New(partner.WithConnection(srv.Connection())) // the fake's URL, credentials and words
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())

	// The receiver under test, with its duplicate guard.
	handled := make(chan string, 10)
	secret := events.NewSecret()
	receiver := c.Events.NewHandler(func(ctx context.Context, d *events.Delivery) error {
		handled <- d.Fields["stage"]
		return nil
	})
	receiver.Secrets = events.NewSecretSet(secret)
	receiver.Dedup = &events.Dedup{}
	hook := httptest.NewServer(receiver)
	defer hook.Close()
	if _, err := c.Events.Subscribe(t.Context(), events.SubscribeParams{
		Name: "crm sync", Events: []events.Kind{events.KindObjectAll},
		CallbackURL: hook.URL + "/partner", Secret: secret,
	}); err != nil {
		t.Fatal(err)
	}

	// The fake loses the receiver's answer to the first attempt and retries;
	// then it sends the delivery once more after the receiver's 204.
	srv.InjectFault(fake.Fault{Path: "/partner/*", DropAnswer: true, Times: 1})
	srv.InjectFault(fake.Fault{Path: "/partner/*", Redeliver: true, Times: 1})
	srv.UpdateObject(demo.Opportunity2, map[string]any{"stage": "won"})
	if err := srv.WaitDeliveries(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Deliveries()); n != 3 {
		t.Errorf("%d delivery attempts, want 3", n)
	}
	if n := len(handled); n != 1 {
		t.Errorf("the change was handled %d times, want once", n)
	}
}
