package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func (a *app) tokenCmd() *cobra.Command {
	var show, asJSON bool
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Fetch a fresh access token and print its expiry and scopes",
		Long: `token fetches a fresh access token with the configured client credentials and
prints when it expires and its scopes. The interface's token answer carries
no scope, so the scopes shown are those the service reported if it did, or
else those requested with --scope, marked "(requested)": what was asked
for, not what was granted (the service may grant fewer). Without --scope
none is requested: the token has every scope of the client.

The token itself is printed only with --show; without --show it is
invalidated again before the command ends. --json prints the same as one
JSON object: expires_at, expires_in (seconds), scopes, scopes_from
("service", "requested" or "client": every scope of the client), and
access_token with --show.`,
		Example: `  partnerctl token
  partnerctl token --scope reports --show
  partnerctl token --json | jq .expires_in`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			tok, err := c.OAuth.Token(ctx)
			if err != nil {
				return fmt.Errorf("token: %w", err)
			}
			w := cmd.OutOrStdout()
			info := tokenInfo{ExpiresAt: tok.Expiry.UTC(), ExpiresIn: int64(time.Until(tok.Expiry).Round(time.Second).Seconds()), Scopes: []string{}}
			switch s, _ := tok.Extra("scope").(string); {
			case s != "":
				info.Scopes, info.ScopesFrom = strings.Fields(s), "service"
			case len(a.scopes) > 0:
				info.Scopes, info.ScopesFrom = a.scopes, "requested"
			default:
				info.ScopesFrom = "client"
			}
			if show {
				info.AccessToken = tok.AccessToken
			}
			if asJSON {
				if err := writeJSON(w, info); err != nil {
					return err
				}
			} else {
				printf(w, "expires: %s (in %s)\n", info.ExpiresAt.Format(time.RFC3339), time.Duration(info.ExpiresIn)*time.Second)
				switch info.ScopesFrom {
				case "service":
					printf(w, "scopes:  %s\n", strings.Join(info.Scopes, " "))
				case "requested":
					printf(w, "scopes:  %s (requested)\n", strings.Join(info.Scopes, " "))
				default:
					fmt.Fprintln(w, "scopes:  every scope of the client (none requested)")
				}
				if show {
					printf(w, "token:   %s\n", tok.AccessToken)
				}
			}
			if show {
				return nil
			}
			return closeClient(ctx, c)
		},
	}
	cmd.Flags().BoolVar(&show, "show", false, "also print the access token (keep it secret)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

// tokenInfo is what token prints with --json.
type tokenInfo struct {
	ExpiresAt   time.Time `json:"expires_at"`
	ExpiresIn   int64     `json:"expires_in"`
	Scopes      []string  `json:"scopes"`
	ScopesFrom  string    `json:"scopes_from"`
	AccessToken string    `json:"access_token,omitempty"`
}
