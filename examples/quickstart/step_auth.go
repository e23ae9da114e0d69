package main

import (
	"context"
	"fmt"
	"io"
	"time"

	partner "github.com/partnerapi/partner-go"
)

func authStep(ctx context.Context, c *partner.Client, w io.Writer) error {
	tok, err := c.OAuth.Token(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "auth: got a %s token valid for %s\n", tok.TokenType, time.Until(tok.Expiry).Round(time.Second))
	return nil
}
