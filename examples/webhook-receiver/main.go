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
//	RECEIVER_REDIS_ADDR  a Redis the replicas share for the duplicate guard (default: in memory):
//	                     host:port, or a redis:// or rediss:// (TLS) URL with a password and
//	                     database (redis://:password@cache.internal:6379/0); never logged whole
//	RECEIVER_REDIS_PREFIX the guard's key prefix in that Redis (default redisdedup.DefaultPrefix)
//	RECEIVER_REDIS_REQUIRED 1: answer deliveries 503 while Redis fails, instead of passing them on
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
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

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
	store, closeStore, err := dedupStore(ctx, cfg.getenv, cfg.log)
	if err != nil {
		return err
	}
	defer closeStore()
	// Keyed by the body: a delivery is the object's fields and nothing
	// else, so the guard remembers it only for events.DefaultDedupRetryWindow
	// and a later change back to the same fields is handled. With a field
	// that identifies a change, set Dedup.Field or Dedup.Key and a longer
	// Window.
	//
	// While the store does not answer, the guard passes deliveries on (a
	// duplicate is less harm than a loss); with RECEIVER_REDIS_REQUIRED=1
	// it answers 503 instead, for work that must not run twice, and the
	// service sends the delivery again later.
	handler.Dedup = &events.Dedup{Store: store, RefuseWhenStoreFails: cfg.getenv("RECEIVER_REDIS_REQUIRED") == "1"}

	mux := http.NewServeMux()
	mux.Handle(callbackPath, handler)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	// The server the events package recommends ("Serving deliveries"):
	// timeouts, so that a client that does not know the secret cannot
	// hold a connection, and a connection cap that closes idle
	// connections for new ones, so that holding them all does not keep
	// deliveries out.
	srv := events.NewServer(mux)
	srv.ErrorLog = slog.NewLogLogger(cfg.log.Handler(), slog.LevelWarn)
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
	go func() { served <- srv.Serve(events.LimitConns(srv, ln, events.DefaultMaxConns)) }()
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
func dedupStore(ctx context.Context, getenv func(string) string, log *slog.Logger) (store events.DedupStore, close func() error, err error) {
	addr := getenv("RECEIVER_REDIS_ADDR")
	if addr == "" {
		return events.NewMemoryDedupStore(0, nil), func() error { return nil }, nil
	}
	opts, err := redisOptions(addr)
	if err != nil {
		return nil, nil, err
	}
	rdb := redis.NewClient(opts)
	var dopts []redisdedup.Option
	if p := getenv("RECEIVER_REDIS_PREFIX"); p != "" {
		dopts = append(dopts, redisdedup.WithPrefix(p))
	}
	// Say at once whether the guard works: while Redis does not answer,
	// the guard passes deliveries on (or, with RECEIVER_REDIS_REQUIRED,
	// refuses them), and each one logs the failure. The address is logged
	// without its password.
	pctx, cancel := context.WithTimeout(ctx, 2*opts.DialTimeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		log.Warn("duplicate guard: Redis does not answer", "redis", opts.Addr, "db", opts.DB, "tls", opts.TLSConfig != nil, "error", err.Error())
	} else {
		log.Info("duplicate guard on Redis", "redis", opts.Addr, "db", opts.DB, "tls", opts.TLSConfig != nil)
	}
	return redisdedup.New(rdb, dopts...), rdb.Close, nil
}

// redisOptions reads RECEIVER_REDIS_ADDR: host:port, or a redis:// or
// rediss:// (TLS) URL, which may carry a user name, a password and a
// database number (redis://user:password@host:6379/0). Its errors never
// repeat the value, which may hold a password.
func redisOptions(addr string) (*redis.Options, error) {
	var opts *redis.Options
	if strings.Contains(addr, "://") {
		o, err := redis.ParseURL(addr)
		if err != nil {
			return nil, errors.New("RECEIVER_REDIS_ADDR is not a valid redis:// or rediss:// URL (the value is not repeated: it may hold a password)")
		}
		opts = o
	} else {
		if _, _, err := net.SplitHostPort(addr); err != nil || strings.Contains(addr, "@") {
			return nil, errors.New("RECEIVER_REDIS_ADDR is neither host:port nor a redis:// or rediss:// URL (the value is not repeated: it may hold a password)")
		}
		opts = &redis.Options{Addr: addr}
	}
	// Few retries, short dials: while Redis is down, each delivery waits
	// for them before the guard decides (a duplicate is less harm than
	// a loss). A URL's own settings (?dial_timeout=...) win.
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 1
	}
	if opts.DialerRetries == 0 {
		opts.DialerRetries = 1
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = time.Second
	}
	return opts, nil
}
