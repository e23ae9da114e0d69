package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func (a *app) tokenCmd() *cobra.Command {
	var show bool
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
invalidated again before the command ends.`,
		Example: `  partner token
  partner token --scope reports --show`,
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
			fmt.Fprintf(w, "expires: %s (in %s)\n", tok.Expiry.UTC().Format(time.RFC3339), time.Until(tok.Expiry).Round(time.Second))
			switch s, _ := tok.Extra("scope").(string); {
			case s != "":
				fmt.Fprintf(w, "scopes:  %s\n", s)
			case len(a.scopes) > 0:
				fmt.Fprintf(w, "scopes:  %s (requested)\n", strings.Join(a.scopes, " "))
			default:
				fmt.Fprintln(w, "scopes:  every scope of the client (none requested)")
			}
			if show {
				fmt.Fprintf(w, "token:   %s\n", tok.AccessToken)
				return nil
			}
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			return c.Close(cctx)
		},
	}
	cmd.Flags().BoolVar(&show, "show", false, "also print the access token (keep it secret)")
	return cmd
}
