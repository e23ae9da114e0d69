package main

import (
	"context"
	"io"

	partner "github.com/partnerapi/partner-go"
)

// scimStep is filled in by the scim area.
func scimStep(ctx context.Context, c *partner.Client, w io.Writer) error { return nil }
