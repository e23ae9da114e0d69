package main

import (
	"context"
	"io"

	partner "github.com/partnerapi/partner-go"
)

// reportsStep is filled in by the reports area.
func reportsStep(ctx context.Context, c *partner.Client, w io.Writer) error { return nil }
