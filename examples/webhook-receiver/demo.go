package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/objects"
)

// demonstrate runs against the embedded fake: it subscribes the receiver
// at callback (which ends in "/") with secret to updates of the demo
// opportunities, changes three of them (writing the fake's audit field,
// audit), reports the deliveries got receives, shows that a repeated
// delivery and one without the secret are kept out, and unsubscribes.
func demonstrate(ctx context.Context, cfg config, svc *partner.Client, audit string, secret events.Secret, callback string, got <-chan *events.Delivery) (err error) {
	id, err := svc.Events.Subscribe(ctx, events.SubscribeParams{
		Name:          "webhook-receiver demo",
		Events:        []events.Kind{events.KindObjectUpdate},
		IntegrationID: demo.OpportunityIntegration,
		CallbackURL:   callback,
		Secret:        secret, // the callback URL's last segment
	})
	if err != nil {
		return fmt.Errorf("subscribing: %w", err)
	}
	fmt.Fprintf(cfg.out, "subscribed %s to %s of %s\n", id, events.KindObjectUpdate, demo.OpportunityIntegration)
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if uerr := svc.Events.Unsubscribe(uctx, id); uerr != nil {
			err = errors.Join(err, fmt.Errorf("unsubscribing: %w", uerr))
		} else {
			fmt.Fprintf(cfg.out, "unsubscribed %s\n", id)
		}
	}()

	// Change three opportunities: each change is a delivery.
	changed := []string{demo.Opportunity1, demo.Opportunity2, demo.Opportunity3}
	for _, o := range changed {
		if _, err := svc.Objects.Audit(ctx, o, objects.AuditParams{
			StatusCode: objects.StatusScheduled, Message: "webhook-receiver demo", // to the client's audit field
		}); err != nil {
			return fmt.Errorf("changing %s: %w", o, err)
		}
	}
	var first *events.Delivery
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for n := range len(changed) {
		select {
		case d := <-got:
			fmt.Fprintf(cfg.out, "handled a delivery: %q, %s = %s\n", d.Fields["name"], audit, d.Fields[audit])
			if n == 0 {
				first = d
			}
		case <-timeout.C:
			return fmt.Errorf("%d of %d deliveries within 30s", n, len(changed))
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	// The service sends a delivery again when it did not get the answer.
	// Deliver runs before the answer, so a repeat it saw would be in got
	// by the time the answer comes.
	status, err := post(ctx, callback+string(secret), first.Raw)
	if err != nil {
		return err
	}
	if len(got) != 0 || status != http.StatusNoContent {
		return fmt.Errorf("a repeated delivery was handled again (answer %d)", status)
	}
	fmt.Fprintf(cfg.out, "a repeat of the delivery of %q: answered %d by the duplicate guard, not handled again\n", first.Fields["name"], status)

	status, err = post(ctx, callback+string(events.NewSecret()), first.Raw)
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.out, "a delivery without a secret the receiver accepts: answered %d\n", status)
	fmt.Fprintf(cfg.out, "webhook-receiver: handled %d deliveries\n", len(changed))
	return nil
}

// post sends body to url as a delivery would come, and returns the
// answer's status.
func post(ctx context.Context, url string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if ue := (*neturl.Error)(nil); errors.As(err, &ue) {
		err = ue.Err // without the URL, which holds the secret
	}
	if err != nil {
		return 0, fmt.Errorf("posting to the receiver: %w", err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
