package main

import (
	"context"
	"io"

	partner "github.com/partnerapi/partner-go"
)

// bulkStep is filled in by the bulk area.
func bulkStep(ctx context.Context, c *partner.Client, w io.Writer) error { return nil }
