package events_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
)

// A receiver that only the service can feed: the subscriber's callback
// URL ends in a fresh secret, and the Handler refuses any delivery whose
// path does not (401).
func ExampleNewSecret() {
	srv, c := exampleClient(fake.WithDemoData())
	defer srv.Close()
	ctx := context.Background()

	secret := events.NewSecret()
	mux := http.NewServeMux()
	// The subtree below the callback path: the secret is its last segment.
	mux.Handle("/partner/", &events.Handler{
		Secrets: events.NewSecretSet(secret),
		Deliver: func(ctx context.Context, d *events.Delivery) error {
			fmt.Println("delivered:", d.Fields["name"], d.Fields["stage"])
			return nil
		},
	})
	hook := httptest.NewServer(mux)
	defer hook.Close()

	if _, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name:        "stage watch",
		Events:      []events.Kind{events.KindObjectStageChange},
		ObjectIDs:   []string{demo.Opportunity1},
		CallbackURL: hook.URL + "/partner",
		Secret:      secret, // registers hook.URL + "/partner/" + the secret
	}); err != nil {
		log.Fatal(err)
	}
	srv.UpdateObject(demo.Opportunity1, map[string]any{"stage": "won"})
	if err := srv.WaitDeliveries(ctx); err != nil {
		log.Fatal(err)
	}

	// Whoever knows the endpoint but not the secret is refused.
	resp, err := http.Post(hook.URL+"/partner/guess", "application/json", nil)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("forged:", resp.StatusCode)
	// Output:
	// delivered: Acme renewal won
	// forged: 401
}

// Rotating the secret without losing a delivery: the Handler accepts the
// new secret, a second subscriber is registered with it, then the old
// subscriber is removed, and last its secret.
func ExampleSecretSet_rotate() {
	srv, c := exampleClient(fake.WithDemoData())
	defer srv.Close()
	ctx := context.Background()

	oldSecret := events.NewSecret()
	secrets := events.NewSecretSet(oldSecret)
	hook := httptest.NewServer(&events.Handler{Secrets: secrets, Deliver: func(ctx context.Context, d *events.Delivery) error {
		fmt.Println("delivered:", d.Fields["note"])
		return nil
	}})
	defer hook.Close()
	subscribe := func(s events.Secret) string {
		id, err := c.Events.Subscribe(ctx, events.SubscribeParams{Name: "crm sync", Events: []events.Kind{events.KindObjectUpdate},
			ObjectIDs: []string{demo.Opportunity1}, CallbackURL: hook.URL, Secret: s})
		if err != nil {
			log.Fatal(err)
		}
		return id
	}
	oldID := subscribe(oldSecret)

	// 1. Accept the new secret beside the old one.
	newSecret := events.NewSecret()
	secrets.Add(newSecret)
	// 2. Register a second subscriber with it; for a while both deliver.
	subscribe(newSecret)
	// 3. Remove the old subscriber.
	if err := c.Events.Unsubscribe(ctx, oldID); err != nil {
		log.Fatal(err)
	}
	// 4. Stop accepting the old secret: a URL that leaked with it is dead.
	secrets.Remove(oldSecret)

	srv.UpdateObject(demo.Opportunity1, map[string]any{"note": "after the rotation"})
	if err := srv.WaitDeliveries(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(secrets)
	// Output:
	// delivered: after the rotation
	// events.SecretSet{secrets: 1}
}
