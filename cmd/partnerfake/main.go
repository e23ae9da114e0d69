// Command partnerfake serves the fake Partner Integration Service (package
// fake) with its demo data set, for non-Go clients and manual runs:
//
//	go run ./cmd/partnerfake -addr 127.0.0.1:8080
//
// It prints its URL, the demo client credentials and the ids of the demo
// data, and shuts down cleanly on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/partnerapi/partner-go/fake"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		log.Fatalf("partnerfake: %v", err)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("partnerfake", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	id := fs.String("client-id", fake.DefaultClientID, "OAuth client id of the demo client")
	secret := fs.String("client-secret", fake.DefaultClientSecret, "OAuth client secret of the demo client")
	lifetime := fs.Duration("token-lifetime", time.Hour, "lifetime of access tokens")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	f := fake.New(fake.WithClient(*id, *secret), fake.WithTokenLifetime(*lifetime), fake.WithDemoData())
	defer f.Close()
	url := "http://" + ln.Addr().String()
	f.SetURL(url)
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}

	fmt.Fprintf(out, "partnerfake serving at %s\n", url)
	fmt.Fprintf(out, "  client id:     %s\n", *id)
	fmt.Fprintf(out, "  client secret: %s\n", *secret)
	fmt.Fprintf(out, "  integrations:  %s (opportunity), %s (account)\n", fake.DemoOpportunityIntegration, fake.DemoAccountIntegration)
	fmt.Fprintf(out, "  opportunities: %s %s %s\n", fake.DemoOpportunity1, fake.DemoOpportunity2, fake.DemoOpportunity3)
	fmt.Fprintf(out, "  accounts:      %s %s\n", fake.DemoAccount1, fake.DemoAccount2)
	fmt.Fprintf(out, "  users:         %s (%s), %s (%s), %s (%s, suspended)\n",
		fake.DemoUser1, fake.DemoUserEmail1, fake.DemoUser2, fake.DemoUserEmail2, fake.DemoUser3, fake.DemoUserEmail3)
	fmt.Fprintf(out, "  attributes:    namespace %d\n", fake.DemoNamespace)
	fmt.Fprintf(out, "  reports:       %d (pipeline, object-backed), %d (partners), %d (draft), %d (%d rows)\n",
		fake.DemoReportPipeline, fake.DemoReportPartners, fake.DemoReportDraft, fake.DemoReportLarge, fake.DemoReportLargeRows)
	fmt.Fprintf(out, "try: PARTNER_BASE_URL=%s PARTNER_CLIENT_ID=%s PARTNER_CLIENT_SECRET=... go run ./examples/quickstart\n", url, *id)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(out, "partnerfake stopped")
	return nil
}
