package events_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"

	"github.com/partnerapi/partner-go/events"
)

// A receiver's own http.Server, with the timeouts and the connection cap
// that keep clients that do not know the secret from holding connections
// or locking deliveries out.
func ExampleHandler_server() {
	secret := events.NewSecret()
	mux := http.NewServeMux()
	mux.Handle("/partner/", &events.Handler{
		Secrets: events.NewSecretSet(secret),
		Deliver: func(ctx context.Context, d *events.Delivery) error {
			fmt.Println("delivered:", d.Fields["stage"])
			return nil
		},
	})
	srv := events.NewServer(mux)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // ":8443" in production, with ServeTLS
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(events.LimitConns(srv, ln, events.DefaultMaxConns))
	defer srv.Close()

	resp, err := http.Post("http://"+ln.Addr().String()+"/partner/"+string(secret), "application/json", strings.NewReader(`{"stage":"won"}`))
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output:
	// delivered: won
	// 204
}
