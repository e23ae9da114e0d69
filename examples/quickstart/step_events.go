package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/objects"
)

// eventsStep hosts a webhook receiver on 127.0.0.1, subscribes it to
// updates of a demo opportunity, changes the opportunity's audit status
// (in the audit field audit), prints the delivery it receives and
// unsubscribes. The callback URL ends in a fresh subscriber secret, and
// the receiver refuses (401) any request without it: only the service,
// which was given the URL, can deliver. Against a real server the
// callback URL must be reachable from that server.
func eventsStep(ctx context.Context, c *partner.Client, w io.Writer, audit objects.FieldName) error {
	const objectID = demo.Opportunity1
	got := make(chan *events.Delivery, 16)
	secret := events.NewSecret()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{
		Handler: &events.Handler{Secrets: events.NewSecretSet(secret), Deliver: func(ctx context.Context, d *events.Delivery) error {
			select {
			case got <- d:
				return nil
			default:
				return errors.New("receiver is full") // 500: the service retries
			}
		}},
		ReadHeaderTimeout: 5 * time.Second,
	}
	go hs.Serve(ln)
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()

	id, err := c.Events.Subscribe(ctx, events.SubscribeParams{
		Name:        "quickstart",
		Events:      []events.Kind{events.KindObjectUpdate},
		ObjectIDs:   []string{objectID},
		CallbackURL: "http://" + ln.Addr().String() + "/partner-events",
		Secret:      secret, // appended to the callback URL's path
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "events: subscribed a webhook on %s (callback URL with a secret) to %s of %s\n", ln.Addr(), events.KindObjectUpdate, objectID)
	// Unsubscribe even when ctx is done, so that no subscriber is left
	// behind.
	unsubscribe := func() error {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := c.Events.Unsubscribe(uctx, id); err != nil {
			return err
		}
		fmt.Fprintln(w, "events: unsubscribed")
		return nil
	}

	if _, err := c.Objects.Audit(ctx, objectID, objects.AuditParams{
		FieldName:  audit,
		StatusCode: objects.StatusScheduled,
		Message:    "quickstart: sync scheduled",
	}); err != nil {
		return errors.Join(err, unsubscribe())
	}

	wait := time.NewTimer(30 * time.Second)
	defer wait.Stop()
	for {
		select {
		case d := <-got:
			// A delivery is the changed object's fields, flat, as
			// strings; no envelope names the event or the subscriber.
			// The subscription names one object, so the audit status we
			// wrote tells our delivery apart.
			status := d.Fields[string(audit)]
			if status != string(objects.StatusScheduled) {
				continue
			}
			fmt.Fprintf(w, "events: received an update of %q: %s = %s\n", d.Fields["name"],
				audit, status)
			return unsubscribe()
		case <-wait.C:
			return errors.Join(errors.New("no delivery within 30s"), unsubscribe())
		case <-ctx.Done():
			return errors.Join(ctx.Err(), unsubscribe())
		}
	}
}
