package main

import (
	"context"
	"io"

	partner "github.com/partnerapi/partner-go"
)

// eventsStep is filled in by the events area.
func eventsStep(ctx context.Context, c *partner.Client, w io.Writer) error { return nil }
