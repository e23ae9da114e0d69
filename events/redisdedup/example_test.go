package redisdedup_test

import (
	"context"
	"log"
	"log/slog"
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/events/redisdedup"
)

// Each replica of a receiver behind a load balancer builds the same
// Handler over the same Redis: a delivery that reaches two replicas, or
// comes back after a lost answer, reaches Deliver once across the group.
// When Redis is down, deliveries are passed on and the failure logged.
// (Not run: it needs a Redis server.)
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	secret := events.NewSecret() // in production: read back from your secret store
	h := &events.Handler{
		Secrets: events.NewSecretSet(secret),
		Logger:  slog.Default(),
		Dedup:   &events.Dedup{Store: redisdedup.New(rdb, redisdedup.WithPrefix("crm-sync:dedup:"))},
		Deliver: func(ctx context.Context, d *events.Delivery) error {
			log.Println(d.Fields["name"], d.Fields["stage"])
			return nil
		},
	}
	http.Handle("/partner/", h)
}
