// Command webhook-receiver is a service that receives the Partner
// Integration Service's webhook deliveries: an events.Handler built from
// the client, behind an http.Server with timeouts and a connection cap, a
// health endpoint, a duplicate guard, structured logs, OpenTelemetry spans,
// and a graceful shutdown on SIGTERM that lets the deliveries in flight
// finish.
//
//	go run ./examples/webhook-receiver
//
// With no PARTNER_* variables it runs a demonstration against the embedded
// fake service: it subscribes itself, changes three opportunities, prints
// the deliveries it handled (and one the duplicate guard kept out), and
// exits. With PARTNER_BASE_URL, PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET
// (and the other PARTNER_* variables deployment.FromEnv reads) it serves
// until SIGTERM or Ctrl-C; subscribe its public URL
// separately (the SDK's Events.Subscribe, with SubscribeParams.Secret set
// to the secret it accepts, as demo.go does).
//
// Its own settings:
//
//	RECEIVER_ADDR        address to listen on (default :8080; the demo: 127.0.0.1, any port)
//	RECEIVER_SECRET      the subscriber secret in the callback URL's last segment (required with a deployment)
//	RECEIVER_OLD_SECRET  the secret before a rotation, accepted too until it is removed
//	RECEIVER_REDIS_ADDR  host:port of a Redis the replicas share for the duplicate guard (default: in memory)
//	RECEIVER_REDIS_PREFIX the guard's key prefix in that Redis (default redisdedup.DefaultPrefix)
//
// To rotate the secret without losing a delivery: set RECEIVER_OLD_SECRET to
// the current secret and RECEIVER_SECRET to a new one (events.NewSecret),
// restart, subscribe again with the new secret and remove the old
// subscription, then unset RECEIVER_OLD_SECRET and restart.
//
// -h prints these settings (usage.go); it takes no other flag or
// argument.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/net/netutil"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/events/redisdedup"
	"github.com/partnerapi/partner-go/fake"
)

// callbackPath is where deliveries come: the callback URL is
// <public URL>/partner-events/<secret>.
const callbackPath = "/partner-events/"

// shutdownGrace bounds how long a shutdown waits for the deliveries in
// flight; the service sends again whatever was cut short.
const shutdownGrace = 30 * time.Second

// config is what a run needs; main fills it from the environment, tests
// directly.
type config struct {
	getenv   func(string) string
	log      *slog.Logger
	out      io.Writer            // the demonstration's report
	tracer   trace.TracerProvider // nil: an SDK provider that writes spans to log
	fakeOpts []fake.Option
	// Hooks for tests: listening is called with the address the receiver
	// listens on, and delivered with each delivery Deliver handles.
	listening func(addr string)
	delivered func(d *events.Delivery)
}

func main() {
	if err := parseFlags(os.Args[1:], os.Stderr); errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := config{getenv: os.Getenv, log: slog.New(slog.NewJSONHandler(os.Stderr, nil)), out: os.Stdout}
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "webhook-receiver: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) (err error) {
	secrets, err := secretsFromEnv(cfg.getenv)
	if err != nil {
		return err
	}
	tp := cfg.tracer
	if tp == nil {
		var flush func(context.Context) error
		tp, flush = newTracerProvider(cfg.log)
		defer func() {
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			err = errors.Join(err, flush(fctx)) // the spans still batched
		}()
	}
	// The deployment the PARTNER_* variables name, or else the embedded
	// fake with its demo data, speaking the words they give.
	conn, err := deployment.FromEnv(cfg.getenv)
	onFake := errors.Is(err, deployment.ErrNotSet)
	if onFake {
		srv := fake.NewServer(append([]fake.Option{fake.WithDemoData(), fake.WithWords(conn.Words),
			fake.WithDeployment(fake.Deployment{SubscriptionKey: conn.SubscriptionKey})}, cfg.fakeOpts...)...)
		defer srv.Close()
		env := conn.Environment
		conn, err = srv.Connection(), nil
		conn.Environment = env
	}
	if err != nil {
		return err
	}
	// The client's spans and the Handler's go to tp (NewHandler takes the
	// client's), its debug records to the log.
	svc, err := partner.New(partner.WithConnection(conn), partner.WithUserAgent("webhook-receiver"),
		partner.WithTracerProvider(tp), partner.WithLogger(cfg.log))
	if err != nil {
		return err
	}
	// The deployment's audit field, logged with each delivery: "" without
	// PARTNER_PORTAL_WORD.
	audit := conn.Words.AuditField()
	if secrets.current == "" { // the demonstration makes its own
		secrets.current = events.NewSecret()
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err = errors.Join(err, svc.Close(cctx))
	}()

	var got chan *events.Delivery // the demonstration's deliveries
	if onFake {
		got = make(chan *events.Delivery, 64)
	}
	handler := svc.Events.NewHandler(func(ctx context.Context, d *events.Delivery) error {
		// The work of a delivery goes here. It must be idempotent (an
		// upsert keyed by the object's external id, say): the duplicate
		// guard keeps out repeats inside its window, not every repeat.
		attrs := []any{"object", d.Fields["name"], "stage", d.Fields["stage"], "trace", trace.SpanContextFromContext(ctx).TraceID().String()}
		if audit != "" {
			attrs = append(attrs, audit, d.Fields[audit])
		}
		cfg.log.InfoContext(ctx, "delivery", attrs...)
		if cfg.delivered != nil {
			cfg.delivered(d)
		}
		select {
		case got <- d:
		default: // not the demonstration, or one it does not wait for
		}
		return nil
	})
	handler.Secrets = events.NewSecretSet(secrets.current, secrets.old)
	handler.Logger = cfg.log
	store, closeStore, err := dedupStore(cfg.getenv)
	if err != nil {
		return err
	}
	defer closeStore()
	// Keyed by the body: a delivery is the object's fields and nothing
	// else, so the guard remembers it only for events.DefaultDedupRetryWindow
	// and a later change back to the same fields is handled. With a field
	// that identifies a change, set Dedup.Field or Dedup.Key and a longer
	// Window.
	handler.Dedup = &events.Dedup{Store: store}

	mux := http.NewServeMux()
	mux.Handle(callbackPath, handler)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	// Timeouts as the events package documents them ("Serving
	// deliveries"): a client that does not know the secret cannot hold a
	// connection.
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(cfg.log.Handler(), slog.LevelWarn),
	}
	addr := cfg.getenv("RECEIVER_ADDR")
	if addr == "" && onFake {
		addr = "127.0.0.1:0"
	} else if addr == "" {
		addr = ":8080"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(netutil.LimitListener(ln, 256)) }()
	cfg.log.Info("receiving", "addr", ln.Addr().String(), "path", callbackPath, "secrets", handler.Secrets)
	if cfg.listening != nil {
		cfg.listening(ln.Addr().String())
	}

	var work error
	if onFake {
		work = demonstrate(ctx, cfg, svc, audit, secrets.current, "http://"+ln.Addr().String()+callbackPath, got)
	} else {
		select {
		case <-ctx.Done(): // SIGTERM or Ctrl-C
		case work = <-served:
		}
	}

	// Stop taking connections and wait for the deliveries in flight:
	// Shutdown returns once every handler has returned.
	cfg.log.Info("shutting down; waiting for deliveries in flight")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		work = errors.Join(work, fmt.Errorf("shutdown: %w", err))
	}
	cfg.log.Info("stopped")
	return work
}

// receiverSecrets are the subscriber secrets the receiver accepts.
type receiverSecrets struct{ current, old events.Secret }

// secretsFromEnv reads RECEIVER_SECRET and RECEIVER_OLD_SECRET. Errors
// name the variable, never its value.
func secretsFromEnv(getenv func(string) string) (receiverSecrets, error) {
	s := receiverSecrets{current: events.Secret(getenv("RECEIVER_SECRET")), old: events.Secret(getenv("RECEIVER_OLD_SECRET"))}
	if s.current == "" && getenv("PARTNER_BASE_URL") != "" {
		return s, errors.New("RECEIVER_SECRET is required with a deployment: the secret its subscription's callback URL ends in")
	}
	for name, v := range map[string]events.Secret{"RECEIVER_SECRET": s.current, "RECEIVER_OLD_SECRET": s.old} {
		if v != "" && len(v) < events.MinSecretLen {
			return s, fmt.Errorf("%s is shorter than %d characters: make one with events.NewSecret", name, events.MinSecretLen)
		}
	}
	if s.old != "" && s.current == "" {
		return s, errors.New("RECEIVER_OLD_SECRET is set without RECEIVER_SECRET")
	}
	return s, nil
}

// dedupStore is the store of the duplicate guard. Receivers behind a load
// balancer must share one store, or each would handle its own copy of a
// repeated delivery: with RECEIVER_REDIS_ADDR set, the guard's keys are in
// that Redis (under RECEIVER_REDIS_PREFIX, default redisdedup's), shared
// by every replica; otherwise they are in this process's memory. close
// releases what the store holds.
//
// Any other shared cache plugs in here too: an events.DedupStore (and
// events.DedupHolderStore) over it.
func dedupStore(getenv func(string) string) (store events.DedupStore, close func() error, err error) {
	addr := getenv("RECEIVER_REDIS_ADDR")
	if addr == "" {
		return events.NewMemoryDedupStore(0, nil), func() error { return nil }, nil
	}
	// Few retries: while Redis is down, each delivery waits for them
	// before the guard lets it through (a duplicate is less harm than a
	// loss).
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: 1, DialerRetries: 1, DialTimeout: time.Second})
	var opts []redisdedup.Option
	if p := getenv("RECEIVER_REDIS_PREFIX"); p != "" {
		opts = append(opts, redisdedup.WithPrefix(p))
	}
	return redisdedup.New(rdb, opts...), rdb.Close, nil
}
