package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partnerapi/partner-go/internal/contract"
	"github.com/partnerapi/partner-go/internal/version"
)

// maxBody bounds an answer Run reads: a larger one fails the run.
const maxBody = 8 << 20

// userAgent names Run's requests as the SDK's, so that a contract check
// in front of a fake holds them to the contract too.
const userAgent = "partner-go/" + version.Version + " doctor"

// prober is one run: the settings, the token, the report so far.
type prober struct {
	cfg       Config
	hc        *http.Client
	base      *url.URL
	checker   *contract.Checker
	profile   profile
	envHeader string
	keyHeader string
	token     string
	maxPages  int
	checks    []*Check
	// stop, once set, says why the checks left are skipped; refused is
	// Run's error when the credentials were refused.
	stop    string
	refused error
}

// answer is one exchange: the operation, the status, the header and the
// body as read.
type answer struct {
	op     string
	x      *contract.Exchange
	status int
	header http.Header
	body   []byte
}

// json decodes the answer's body (numbers as json.Number), nil when it
// is not JSON.
func (a *answer) json() any {
	v, err := contract.DecodeJSON(a.body)
	if err != nil {
		return nil
	}
	return v
}

// call sends one request to the deployment. body, unless nil, is sent as
// JSON. The request is first held to the contract: a request of Run's
// own that breaks it is a fault of Run, and fails it.
func (p *prober) call(ctx context.Context, method, path string, query url.Values, body any) (*answer, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	req, service, err := p.newRequest(ctx, method, path, query, raw)
	if err != nil {
		return nil, err
	}
	check := req.Clone(ctx)
	check.URL = service
	x, v := p.checker.CheckRequest(check, raw)
	if x == nil || v != nil {
		return nil, fmt.Errorf("doctor: its own request %s %s breaks the contract: %v", method, path, v)
	}
	a := &answer{op: x.Operation(), x: x}
	for attempt := 1; ; attempt++ {
		if attempt > 1 && raw != nil {
			req.Body = io.NopCloser(bytes.NewReader(raw))
		}
		if err := p.send(req, a); err != nil {
			return nil, fmt.Errorf("doctor: %s %s: %w", method, path, err)
		}
		wait, again := retryWait(a, attempt)
		if !again {
			return a, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// newRequest builds a request of the SDK's (its headers, the token, the
// environment, the gateway key) to path (escaped: url.PathEscape of each
// id) below the base URL, and returns it with its URL as the service
// sees it, for the contract's routing.
func (p *prober) newRequest(ctx context.Context, method, path string, query url.Values, raw []byte) (*http.Request, *url.URL, error) {
	plain, err := url.PathUnescape(path)
	if err != nil {
		return nil, nil, err
	}
	service := &url.URL{Path: plain, RawPath: path, RawQuery: query.Encode()}
	u := *p.base
	u.Path = strings.TrimSuffix(p.base.Path, "/") + plain
	u.RawPath = strings.TrimSuffix(p.base.EscapedPath(), "/") + path
	u.RawQuery = service.RawQuery
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(raw))
	if err != nil {
		return nil, nil, err
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	} else {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	if p.cfg.Connection.Environment != "" {
		req.Header.Set(p.envHeader, p.cfg.Connection.Environment)
	}
	if k := p.cfg.Connection.SubscriptionKey; k != "" {
		req.Header.Set(p.keyHeader, k)
	}
	return req, service, nil
}

// send sends req once and reads its answer into a.
func (p *prober) send(req *http.Request, a *answer) error {
	resp, err := p.hc.Do(req)
	if err != nil {
		return p.redactErr(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("reading the answer: %w", p.redactErr(err))
	}
	if len(b) > maxBody {
		return fmt.Errorf("the answer is larger than %d bytes", maxBody)
	}
	a.status, a.header, a.body = resp.StatusCode, resp.Header, b
	return nil
}

// attempts bounds the attempts of a request answered with a transient
// failure (429, 502, 503, 504), as the SDK retries its reads; Run sends
// nothing that is not safe to repeat.
const attempts = 3

// retryWait says whether to send a request again after answer a of
// attempt, and after how long: its Retry-After in seconds up to 10
// seconds, else a second, then two.
func retryWait(a *answer, attempt int) (time.Duration, bool) {
	switch a.status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
	default:
		return 0, false
	}
	if attempt >= attempts {
		return 0, false
	}
	wait := time.Duration(attempt) * time.Second
	if n, err := strconv.Atoi(a.header.Get("Retry-After")); err == nil && n >= 0 {
		wait = min(time.Duration(n)*time.Second, 10*time.Second)
	}
	return wait, true
}

// token gets the run's access token: the token check and, from its
// answer's Date, the clock check.
func (p *prober) getToken(ctx context.Context) error {
	c := p.add(&Check{Name: "token", Operation: "post-token"})
	body := map[string]string{"grant_type": "client_credentials",
		"client_id": p.cfg.Connection.ClientID, "client_secret": p.cfg.Connection.ClientSecret}
	if len(p.cfg.Scopes) > 0 {
		body["scope"] = strings.Join(p.cfg.Scopes, " ")
	}
	var q url.Values
	if p.cfg.Connection.Environment != "" {
		q = url.Values{p.envHeader: {p.cfg.Connection.Environment}}
	}
	a, err := p.call(ctx, http.MethodPost, "/oauth/token", q, body)
	if err != nil {
		c.Status, c.Note = Failed, err.Error()
		return err
	}
	p.clock(a)
	switch {
	case a.status == http.StatusOK:
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden || credentialsCode(a):
		p.refuse(c, a, "the token endpoint refused the client credentials")
		return p.refused
	case a.status == http.StatusBadRequest:
		p.refusesRequests(c, a, http.StatusOK)
		return nil
	default:
		p.judge(c, a, http.StatusOK)
		c.Status = Failed
		p.stop = "no token: the token endpoint answered " + strconv.Itoa(a.status)
		return nil
	}
	p.judge(c, a, http.StatusOK)
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Scope       string `json:"scope"`
	}
	if err := json.Unmarshal(a.body, &tok); err != nil || tok.AccessToken == "" {
		c.diverge(Divergence{Operation: a.op, Member: "/access_token", Fake: "a token", Deployment: "none"})
		c.Status = Failed
		p.stop = "the token answer holds no access_token"
		return nil
	}
	p.token = tok.AccessToken
	c.note(fmt.Sprintf("a token for %s", time.Duration(tok.ExpiresIn)*time.Second))
	if tok.ExpiresIn <= 0 {
		c.diverge(Divergence{Operation: a.op, Member: "/expires_in", Fake: "the token's lifetime in seconds", Deployment: strconv.FormatInt(tok.ExpiresIn, 10)})
	}
	switch {
	case tok.Scope != "":
		c.note("scopes granted: " + tok.Scope)
	case len(p.cfg.Scopes) > 0:
		c.note("scopes asked for: " + strings.Join(p.cfg.Scopes, " ") + " (the answer names none)")
	default:
		c.note("every scope of the client (none asked for)")
	}
	return nil
}

// maxSkew is how far the service's clock may be from this machine's
// before token lifetimes go wrong: the fake shares this machine's clock.
const maxSkew = 2 * time.Minute

// clock compares the answer's Date with this machine's clock.
func (p *prober) clock(a *answer) {
	c := p.add(&Check{Name: "clock", Operation: a.op})
	d, err := http.ParseTime(a.header.Get("Date"))
	if err != nil {
		c.Status, c.Note = Skipped, "the answer has no Date header"
		return
	}
	now := time.Now
	if p.cfg.Now != nil {
		now = p.cfg.Now
	}
	skew := now().Sub(d).Round(time.Second)
	if skew > maxSkew || skew < -maxSkew {
		c.diverge(Divergence{Operation: a.op, Member: "Date", Fake: "this machine's clock (within " + maxSkew.String() + ")",
			Deployment: "a clock " + skew.Abs().String() + aheadOrBehind(skew)})
		return
	}
	c.note("the service's clock is within " + maxSkew.String() + " of this machine's")
}

func aheadOrBehind(skew time.Duration) string {
	if skew < 0 {
		return " ahead"
	}
	return " behind"
}

// credentialsCode reports whether an answer of the token endpoint is
// an OAuth error about the client or its grant, rather than about the
// request (a header or parameter the deployment wants).
func credentialsCode(a *answer) bool {
	var e struct {
		Error string `json:"error"`
	}
	if a.status != http.StatusBadRequest || json.Unmarshal(a.body, &e) != nil {
		return false
	}
	return e.Error == "invalid_client" || e.Error == "invalid_grant" || e.Error == "unauthorized_client" || e.Error == "invalid_scope"
}

// refuse records a refusal of the credentials, which ends the run.
func (p *prober) refuse(c *Check, a *answer, what string) {
	msg := fmt.Sprintf("%s: %d", what, a.status)
	if m := p.message(a); m != "" {
		msg += " " + strconv.Quote(m)
	}
	if k := p.cfg.Connection.SubscriptionKey; strings.Contains(strings.ToLower(string(a.body)), "subscription key") {
		if k == "" {
			msg += fmt.Sprintf(" (the gateway asks for a subscription key in %s: none was given)", p.keyHeader)
		} else {
			msg += fmt.Sprintf(" (the gateway refused the subscription key sent in %s)", p.keyHeader)
		}
	}
	c.Status, c.Note = Failed, msg
	p.refused = fmt.Errorf("%w: %s", ErrCredentialsRefused, msg)
	p.stop = "the credentials were refused"
}

// message is what an error answer says, in a member an error body uses
// or as text, shortened; never a secret of the run.
func (p *prober) message(a *answer) string {
	var m map[string]any
	text := ""
	if json.Unmarshal(a.body, &m) == nil {
		code, _ := m["error"].(string)
		if d, _ := m["error_description"].(string); code != "" && d != "" {
			m["error_description"] = code + ": " + d // OAuth's error object
		}
		for _, k := range []string{"error_description", "detail", "message", "error", "errorMessage", "title"} {
			if s, ok := m[k].(string); ok && s != "" {
				text = s
				break
			}
		}
	} else if ct := a.header.Get("Content-Type"); strings.HasPrefix(ct, "text/") {
		text = strings.TrimSpace(string(a.body))
	}
	if len(text) > 160 {
		text = text[:160] + "..."
	}
	return p.redact(text)
}

// redact masks the run's secrets in text.
func (p *prober) redact(text string) string {
	for _, s := range []string{p.cfg.Connection.ClientSecret, p.cfg.Connection.SubscriptionKey, p.token} {
		if s != "" {
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	return text
}

func (p *prober) redactErr(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return errors.New(p.redact(err.Error()))
}

// add appends a check to the report, passed until it says otherwise.
func (p *prober) add(c *Check) *Check {
	if c.Status == "" {
		c.Status = Passed
	}
	p.checks = append(p.checks, c)
	return c
}

// diverge adds a divergence, one per operation and member (the first
// word of it, as of every item of a list).
func (c *Check) diverge(d Divergence) {
	c.Status = Diverged
	if !slices.ContainsFunc(c.Divergences, func(o Divergence) bool { return o.Operation == d.Operation && o.Member == d.Member }) {
		c.Divergences = append(c.Divergences, d)
	}
}

// note adds to the check's note.
func (c *Check) note(s string) {
	if c.Note != "" {
		c.Note += "; "
	}
	c.Note += s
}
