package bulk

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/partnerapi/partner-go/internal/plumbing"
)

// Attributes and events of the wait span.
const (
	attrIntegrationID = "partner.bulk.integration_id"
	attrExecutionID   = "partner.bulk.execution_id"
	attrState         = "partner.bulk.state"
	eventState        = "partner.bulk.state"
)

// startWait starts the span of WaitExecution on ack.
func (s *Service) startWait(ctx context.Context, ack *Ack) (context.Context, trace.Span) {
	return plumbing.Of(s.t).StartSpan(ctx, "bulk.WaitExecution",
		attribute.String(attrIntegrationID, ack.IntegrationID), attribute.String(attrExecutionID, ack.ExecutionID))
}

// noteState adds a status read to the wait's span: an event with the
// state and counts when the state differs from the previous read's.
func noteState(span trace.Span, prev *State, e *Execution) {
	if e == nil || !span.IsRecording() || e.Status == *prev {
		return
	}
	*prev = e.Status
	span.AddEvent(eventState, trace.WithAttributes(attribute.String(attrState, string(e.Status)),
		attribute.Int64("partner.bulk.input_count", e.InputCount),
		attribute.Int64("partner.bulk.success_count", e.SuccessCount)))
}

// endWait ends the wait's span with its last status and counts the
// records of a completed execution (its success count, a failed one's
// included) in the records-loaded metric.
func (s *Service) endWait(ctx context.Context, span trace.Span, e *Execution, err error) {
	if e != nil {
		span.SetAttributes(attribute.String(attrState, string(e.Status)),
			attribute.Int64("partner.bulk.error_count", e.ErrorCount))
		if e.Done() && e.SuccessCount > 0 {
			s.records.Add(ctx, e.SuccessCount)
		}
	}
	plumbing.EndSpan(span, err)
}
