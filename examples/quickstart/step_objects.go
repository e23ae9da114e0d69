package main

import (
	"context"
	"io"

	partner "github.com/partnerapi/partner-go"
)

// objectsStep is filled in by the objects area.
func objectsStep(ctx context.Context, c *partner.Client, w io.Writer) error { return nil }
