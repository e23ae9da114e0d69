package events_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/netutil"

	"github.com/partnerapi/partner-go/events"
)

// A receiver's own http.Server, with the timeouts and the connection cap
// that keep clients that do not know the secret from holding connections.
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
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // ":8443" in production, with ServeTLS
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(netutil.LimitListener(ln, 256))
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
