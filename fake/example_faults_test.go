package fake_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
)

// A receiver's duplicate guard, tested against the fake: a Redeliver fault
// sends a delivery the receiver answered 2xx once more, and a DropAnswer
// fault drops the receiver's answer so that the fake retries. The change
// is handled once.
func ExampleFault_deliveries() {
	srv := fake.NewServer(fake.WithDemoData(), fake.WithDeliveryPolicy(fake.DeliveryPolicy{Backoff: time.Millisecond}))
	defer srv.Close()
	c := client(srv)
	ctx := context.Background()

	var handled atomic.Int32
	receiver := c.Events.NewHandler(func(ctx context.Context, d *events.Delivery) error {
		handled.Add(1) // the code under test would act on d here
		return nil
	})
	receiver.Insecure = true // a test's receiver, which only the fake reaches
	receiver.Dedup = &events.Dedup{}
	hook := httptest.NewServer(receiver)
	defer hook.Close()
	if _, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name: "stage watch", Events: []events.Kind{events.KindObjectAll}, CallbackURL: hook.URL + "/hook",
	}); err != nil {
		log.Fatal(err)
	}

	srv.InjectFault(fake.Fault{Path: "/hook", DropAnswer: true, Times: 1}) // faults act in this order
	srv.InjectFault(fake.Fault{Path: "/hook", Redeliver: true, Times: 1})
	srv.UpdateObject(demo.Opportunity1, map[string]any{"stage": "won"})
	if err := srv.WaitDeliveries(ctx); err != nil {
		log.Fatal(err)
	}
	for _, d := range srv.Deliveries() {
		fmt.Printf("%s attempt %d: status %d, delivered %t, answer dropped %t, redelivery %t\n",
			d.Event, d.Attempt, d.Status, d.Delivered, d.AnswerDropped, d.Redelivery)
	}
	fmt.Println("handled", handled.Load())
	// Output:
	// object.stage_change attempt 1: status 0, delivered false, answer dropped true, redelivery false
	// object.stage_change attempt 2: status 204, delivered true, answer dropped false, redelivery false
	// object.stage_change attempt 3: status 204, delivered true, answer dropped false, redelivery true
	// handled 1
}
