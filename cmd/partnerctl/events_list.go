package main

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/events"
)

func (a *app) eventsListCmd() *cobra.Command {
	var asJSON, showSecrets bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the registered subscribers",
		Long: `list prints the registered subscribers. With --json it prints them as the
service returns them, with the callback URL when the service returns one: a
path segment of a callback URL that looks like a secret (16 or more letters,
digits, '-' and '_', such as the subscriber secret partnerctl events listen
puts last), a password and query values show as <secret> unless
--show-secrets is given.`,
		Example: `  partnerctl events list`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(ctx context.Context, c *partner.Client) error {
				var subs []events.Subscriber
				for s, err := range c.Events.Subscribers(ctx) {
					if err != nil {
						return fmt.Errorf("list subscribers: %w", err)
					}
					if s.Webhook != nil && !showSecrets {
						s.Webhook = &events.WebhookSettings{CallbackURL: maskCallbackURL(s.Webhook.CallbackURL)}
					}
					subs = append(subs, s)
				}
				if asJSON {
					if subs == nil {
						subs = []events.Subscriber{}
					}
					return writeJSON(cmd.OutOrStdout(), subs)
				}
				t := newTable(cmd.OutOrStdout(), "ID", "NAME", "INTEGRATION", "OBJECTS", "FILTERS")
				for _, s := range subs {
					t.row(s.ID, s.Name, s.IntegrationID, strings.Join(s.ObjectIDs, ","), s.Filters)
				}
				return t.flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	cmd.Flags().BoolVar(&showSecrets, "show-secrets", false, "print callback URLs with their secrets")
	return cmd
}

// minSecretSegment is the length from which a callback URL's path
// segment of letters, digits, '-' and '_' counts as a secret token
// (events.NewSecret makes 26).
const minSecretSegment = 16

// maskCallbackURL returns a callback URL with what may be secret shown as
// "<secret>": every path segment of minSecretSegment or more letters,
// digits, '-' and '_' (the subscriber secret is the last one), the
// userinfo's password and every query value. The fragment, never sent,
// is left out. A URL that does not parse as absolute shows as "<secret>".
func maskCallbackURL(raw string) string {
	const mask = "<secret>"
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return mask
	}
	var b strings.Builder
	b.WriteString(u.Scheme + "://")
	if u.User != nil {
		b.WriteString(url.User(u.User.Username()).String())
		if _, ok := u.User.Password(); ok {
			b.WriteString(":" + mask)
		}
		b.WriteString("@")
	}
	b.WriteString(u.Host)
	segs := strings.Split(u.EscapedPath(), "/")
	for i, seg := range segs {
		if len(seg) >= minSecretSegment && strings.Trim(seg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == "" {
			segs[i] = mask
		}
	}
	b.WriteString(strings.Join(segs, "/"))
	if u.RawQuery != "" {
		q := u.Query()
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(q)) {
			kv = append(kv, url.QueryEscape(k)+"="+mask)
		}
		b.WriteString("?" + strings.Join(kv, "&"))
	}
	return b.String()
}
