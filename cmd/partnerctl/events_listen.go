package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
)

type listenFlags struct {
	kinds                                      []string
	integration, filter, addr, public, forward string
	name                                       string
	local                                      bool
	limits                                     serverLimits
}

// serverLimits bound what clients of the receiver may hold: without them,
// a client that does not know the secret keeps a connection by trickling
// a body or idling after its 401.
type serverLimits struct {
	read, idle time.Duration // whole request; keep-alive between requests
	maxConns   int           // connections served at once
}

func (a *app) eventsListenCmd() *cobra.Command {
	var fl listenFlags
	cmd := &cobra.Command{
		Use:   "listen --events KIND[,KIND]",
		Short: "Receive webhook deliveries here and print each as a JSON line",
		Long: `listen hosts a webhook receiver on --listen, registers one subscriber per
event kind, each with a callback URL of its own that reaches it (the URL
followed by the kind), and prints each delivery as one JSON line on stdout:
{"event": KIND, "subscriber_id": ID, "body": {...}}, the kind and subscriber
named by the path the delivery came to, the body as it was received. With
--forward it also POSTs each delivery to that URL and answers
the service as the forward did: 204 for a 2xx, the forward's own 4xx or 5xx
status (and Retry-After), 502 when the forward could not be reached, 500
for any other answer. So the service retries, or gives up, as it would
with the forward itself.

--public-url is the callback URL the service calls (a tunnel or proxy to the
listener, which passes on the paths below it). --local says instead that
the service runs on this machine (a partnerfake): the callback URL is then
the listener's own address. One of the two is required, whatever the base
URL: a base URL on 127.0.0.1 may be a proxy to a service elsewhere. The
subscriber is registered with a fresh random secret as the last path
segment of that URL, and the receiver answers 401 to a request without it,
so only the service, which was given the URL, can deliver; the secret is
never printed. On Ctrl-C the subscribers are removed again and the exit
status is 130.

The receiver closes a connection whose request takes longer than
--read-timeout to arrive (headers within 10s, or --read-timeout when
shorter), or that stays idle between requests for --idle-timeout, and
serves at most --max-connections at once: when all are open, it closes
the oldest one waiting for a request (idle, or silent since it
connected) to take a new one, so connections held idle by a client
without the secret do not keep deliveries out.`,
		Example: `  partnerctl events listen --local --events object.update,object.create
  partnerctl events listen --local --events object.all --integration int-crm --forward http://localhost:3000/hook
  partnerctl events listen --events object.update --listen :8088 --public-url https://hooks.example.com/partner`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(fl.kinds) == 0 {
				return usagef("--events is required")
			}
			if fl.limits.read <= 0 || fl.limits.idle <= 0 || fl.limits.maxConns <= 0 {
				return usagef("--read-timeout, --idle-timeout and --max-connections must be positive")
			}
			if fl.public == "" && !fl.local {
				return usagef("--public-url is required (the URL through which the service reaches this listener), or --local when the service runs on this machine, as partnerfake does")
			}
			if fl.public != "" && fl.local {
				return usagef("--public-url and --local exclude each other: --local subscribes the listener's own address")
			}
			if fl.forward != "" {
				if u, err := url.Parse(fl.forward); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return usagef("--forward %q is not an http(s) URL", fl.forward)
				}
			}
			return a.withClient(cmd, func(_ context.Context, c *partner.Client) error {
				return a.listen(cmd, c, fl)
			})
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&fl.kinds, "events", nil, "event kinds to subscribe to, comma-separated (required)")
	f.StringVar(&fl.integration, "integration", "", "only the objects of this integration `ID`")
	f.StringVar(&fl.filter, "filter", "", "subscription filter `EXPR`, such as 'stage = \"won\"'")
	f.StringVar(&fl.addr, "listen", "127.0.0.1:0", "address the receiver listens on")
	f.StringVar(&fl.public, "public-url", "", "callback `URL` the service calls (a tunnel or proxy to the listener)")
	f.BoolVar(&fl.local, "local", false, "the service runs on this machine (a partnerfake): its callback URL is the listener's own address")
	f.StringVar(&fl.forward, "forward", "", "also POST each delivery to this `URL`")
	f.StringVar(&fl.name, "name", "", "subscriber name (default: partnerctl-listen on this host)")
	rec := events.NewServer(nil) // the events package's recommended values
	f.DurationVar(&fl.limits.read, "read-timeout", rec.ReadTimeout, "longest a request to the receiver may take to arrive, body included")
	f.DurationVar(&fl.limits.idle, "idle-timeout", rec.IdleTimeout, "longest a connection to the receiver may stay idle between requests")
	f.IntVar(&fl.limits.maxConns, "max-connections", events.DefaultMaxConns, "connections the receiver serves at once")
	return cmd
}

func (a *app) listen(cmd *cobra.Command, c *partner.Client, fl listenFlags) error {
	ctx := cmd.Context()
	ln, err := net.Listen("tcp", fl.addr)
	if err != nil {
		return usagef("--listen: %w", err)
	}
	path := hookPath
	callback := fl.public
	if fl.local {
		callback = "http://" + reachable(ln.Addr()) + path
	} else {
		u, err := url.Parse(callback)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			ln.Close()
			return usagef("--public-url %q is not an http(s) URL", callback)
		}
		path = u.EscapedPath()
		if path == "" {
			path = "/"
		}
	}
	secret := events.NewSecret()
	deliveries := make(chan received)
	routes := &events.Routes{}
	rc := startReceiver(ln, path, secret, fl.forward, fl.limits, routes, deliveries)
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		rc.stop(sctx)
	}()

	name := fl.name
	if name == "" {
		host, _ := os.Hostname()
		name = "partnerctl-listen " + host
	}
	// One subscriber per kind, each at its own path, so that the path
	// names the kind and subscriber of a delivery.
	var ids []string
	defer func() {
		// Ctrl-C cancelled ctx: unsubscribe under a fresh one.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		for _, id := range ids {
			if err := c.Events.Unsubscribe(uctx, id); err != nil {
				printf(cmd.ErrOrStderr(), "unsubscribe %s: %v\n", id, err)
				continue
			}
			printf(cmd.ErrOrStderr(), "unsubscribed %s\n", id)
		}
	}()
	for _, k := range fl.kinds {
		kind := events.Kind(strings.TrimSpace(k))
		kindPath := strings.TrimSuffix(path, "/") + "/" + url.PathEscape(string(kind))
		routes.Add(kindPath, events.Route{Kind: kind})
		kindURL := strings.TrimSuffix(callback, "/") + "/" + url.PathEscape(string(kind))
		id, err := c.Events.Subscribe(ctx, events.SubscribeParams{Name: name, Events: []events.Kind{kind}, CallbackURL: kindURL, Secret: secret,
			Filter: events.Raw(fl.filter), IntegrationID: fl.integration})
		if err != nil {
			return fmt.Errorf("subscribe to %s: %w", kind, err)
		}
		ids = append(ids, id)
		routes.Add(kindPath, events.Route{Kind: kind, SubscriberID: id})
		printf(cmd.ErrOrStderr(), "subscriber %s receives %s at %s/<secret>\n", id, kind, kindURL)
	}
	printf(cmd.ErrOrStderr(), "listening on %s (Ctrl-C to stop)\n", ln.Addr())

	var printErr error
loop:
	for {
		select {
		case r := <-deliveries:
			if err := printDelivery(cmd.OutOrStdout(), r.Delivery, a.isTerminal(cmd.OutOrStdout())); err != nil && printErr == nil {
				printErr = err
			}
			if fl.forward != "" {
				what := "delivery"
				if r.Delivery.DeliveryID != "" {
					what += " " + r.Delivery.DeliveryID
				}
				if r.ForwardErr != nil {
					answered := http.StatusInternalServerError
					var se *events.StatusError
					if errors.As(r.ForwardErr, &se) && se.Status >= 400 && se.Status <= 599 {
						answered = se.Status
					}
					printf(cmd.ErrOrStderr(), "%s: forward failed: %v; answered the service %d\n", what, r.ForwardErr, answered)
				} else {
					printf(cmd.ErrOrStderr(), "%s: forwarded: %d\n", what, r.Forward)
				}
			}
		case <-ctx.Done():
			break loop
		}
	}
	if printErr != nil {
		return printErr
	}
	// Only Ctrl-C ends the loop: exit 130, as for every interrupted command.
	return fmt.Errorf("listening stopped: %w", context.Cause(ctx))
}

// reachable is the listener's address as a callback can name it: an
// unspecified host (":8088") is reached on the loopback address.
func reachable(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// received is one delivery as the listener got it, with the outcome of
// forwarding it.
type received struct {
	Delivery *events.Delivery
	// Forward is the status the forward URL answered (0: not forwarded
	// or no answer); ForwardErr says why a forward failed.
	Forward    int
	ForwardErr error
}

// receiver hosts an events.Handler on a listener and hands each delivery
// to a channel; with a forward URL it also POSTs the delivery there and
// answers the service as the forward answered (see forwardOne).
type receiver struct {
	forward string
	client  *http.Client
	out     chan<- received
	srv     *http.Server
	done    chan struct{} // closed by stop

	mu    sync.Mutex
	fresh map[net.Conn]bool // connections on which no request has arrived yet
}

// track records the connections on which no request has arrived yet.
// http.Server.Shutdown counts such a connection as busy for its first 5
// seconds, so that a client that opened a connection it never used (an
// HTTP client's spare dial) would hold Ctrl-C for 5 seconds; stop closes
// them instead.
func (rc *receiver) track(c net.Conn, st http.ConnState) {
	rc.mu.Lock()
	if st == http.StateNew {
		rc.fresh[c] = true
	} else {
		delete(rc.fresh, c)
	}
	rc.mu.Unlock()
}

// closeFresh closes the connections on which no request has arrived. Run
// by Shutdown once the listener is closed, so that no new one follows.
func (rc *receiver) closeFresh() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for c := range rc.fresh {
		c.Close()
		delete(rc.fresh, c)
	}
}

// forwardTimeout bounds one POST to the --forward URL.
const forwardTimeout = 30 * time.Second

// startReceiver serves deliveries on ln at path followed by secret, as
// Subscribe registered it, until stop is called. The handler takes the
// subtree below path and refuses, with 401, any request whose last
// segment is not the secret. The server is events.NewServer's, with
// lim's timeouts, on a listener capped by events.LimitConns.
func startReceiver(ln net.Listener, path string, secret events.Secret, forward string, lim serverLimits, routes *events.Routes, out chan<- received) *receiver {
	rc := &receiver{forward: forward, client: &http.Client{Timeout: forwardTimeout}, out: out, done: make(chan struct{}),
		fresh: map[net.Conn]bool{}}
	mux := http.NewServeMux()
	mux.Handle(strings.TrimSuffix(path, "/")+"/", &events.Handler{Deliver: rc.deliver, Secrets: events.NewSecretSet(secret), Routes: routes})
	// The events package's recommended server, with the flags' limits.
	rc.srv = events.NewServer(mux)
	rc.srv.ReadHeaderTimeout = min(rc.srv.ReadHeaderTimeout, lim.read)
	rc.srv.ReadTimeout = lim.read
	// From the end of the headers to the end of the answer: the body,
	// then the forward.
	rc.srv.WriteTimeout = lim.read + forwardTimeout + 5*time.Second
	rc.srv.IdleTimeout = lim.idle
	rc.srv.ConnState = rc.track
	rc.srv.RegisterOnShutdown(rc.closeFresh)
	go rc.srv.Serve(events.LimitConns(rc.srv, ln, lim.maxConns))
	return rc
}

func (rc *receiver) deliver(ctx context.Context, d *events.Delivery) error {
	r := received{Delivery: d}
	if rc.forward != "" {
		r.Forward, r.ForwardErr = rc.forwardOne(ctx, d)
	}
	select {
	case rc.out <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-rc.done:
		return errors.New("the listener is stopping")
	}
	return r.ForwardErr
}

// forwardOne POSTs the delivery to the forward URL. A 4xx or 5xx answer
// becomes an *events.StatusError with that status and Retry-After, so the
// service is answered as the forward answered and retries as it decides;
// no answer becomes 502 Bad Gateway, another non-2xx answer 500.
func (rc *receiver) forwardOne(ctx context.Context, d *events.Delivery) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rc.forward, bytes.NewReader(d.Raw))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := rc.client.Do(req)
	if err != nil {
		return 0, &events.StatusError{Status: http.StatusBadGateway, Err: err}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, &events.StatusError{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"),
			Err: fmt.Errorf("forward answered %s", resp.Status)}
	}
	return resp.StatusCode, nil
}

func (rc *receiver) stop(ctx context.Context) error {
	close(rc.done)
	return rc.srv.Shutdown(ctx)
}

// printDelivery writes a delivery as one line of JSON: its kind and
// subscriber (as its path names them) and its body as it was received,
// compacted. On a terminal, what JSON lets through raw and a terminal
// acts on (DEL, C1 controls, bidirectional overrides; see unsafeRune) is
// written as a JSON escape (\u007f, \u009b), which is the same JSON, and
// invalid UTF-8 as \ufffd, as a JSON decoder reads it.
func printDelivery(w io.Writer, d *events.Delivery, tty bool) error {
	b, err := json.Marshal(struct {
		Event        events.Kind     `json:"event"`
		SubscriberID string          `json:"subscriber_id"`
		Body         json.RawMessage `json:"body"`
	}{d.Event, d.SubscriberID, d.Raw})
	if err != nil {
		return err
	}
	line := string(b) + "\n"
	if tty {
		line = jsonTermSafe(line)
	}
	_, err = io.WriteString(w, line)
	return err
}

// jsonTermSafe returns the JSON text s with each rune a terminal acts on
// written as a JSON \u escape, and each byte of invalid UTF-8 as \ufffd.
// (termSafe's Go escapes, such as \x7f, are not JSON.)
func jsonTermSafe(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r) || r == utf8.RuneError {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hookPath is the path of the callback URL when listen makes it itself
// (without --public-url); the subscriber's secret follows it.
const hookPath = "/hooks/partner"
