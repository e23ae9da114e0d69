package main

import (
	"context"
	"io"

	partner "github.com/partnerapi/partner-go"
)

// usersStep is filled in by the users area.
func usersStep(ctx context.Context, c *partner.Client, w io.Writer) error { return nil }
