package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// This file reads the answer: a 2xx body read whole inside the retry
// loop (so that one cut off is a failed attempt), the caps on its size,
// and its decoding into the caller's value.

// readAnswer reads the body of a 2xx answer inside the retry loop
// (checkRetry), so that an answer cut off mid-body is a failed attempt
// (cut) rather than an error after the call. Request.Read reads it when
// set; otherwise the body read replaces resp.Body: a body of known
// length up to maxWholeBody, and, when Do decodes the answer, one of
// unknown length (up to that size; a longer one streams on). A failure
// marks the call ambiguous: the service answered 2xx, so it did the
// work. An error of Request.Read's own (not cut) ends the call.
//
// It is also the one place that caps a 2xx answer (call.maxAnswer),
// whoever reads it: a body declared longer fails at once, and the body
// fails with ErrAnswerTooLarge past the cap, counting the bytes read
// after net/http's transparent gzip.
func (st *call) readAnswer(resp *http.Response) (cut bool, err error) {
	if resp.StatusCode/100 != 2 || st.method == http.MethodHead {
		return false, nil
	}
	n := resp.ContentLength
	if n > st.maxAnswer {
		return true, st.answerLost(tooLarge(st.maxAnswer))
	}
	if st.read == nil && n > 0 && n <= maxWholeBody {
		// Within the cap already: net/http gives no more than the
		// declared length.
		b := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, b); err != nil {
			return true, st.answerLost(err)
		}
		st.keepWhole(resp, b)
		return false, nil
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: st.maxAnswer, limit: st.maxAnswer}
	if st.read != nil {
		return st.readWith(resp)
	}
	if n >= 0 || !st.decodes {
		return false, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxWholeBody+1))
	if err != nil {
		return true, st.answerLost(err)
	}
	if len(b) > maxWholeBody {
		resp.Body = &headBody{Reader: io.MultiReader(bytes.NewReader(b), resp.Body), rest: resp.Body}
		return false, nil
	}
	st.keepWhole(resp, b)
	return false, nil
}

// keepWhole keeps b, the whole body of resp: for Do, which decodes it,
// in the call (answer), the connection's body closed at once; for the
// caller of Send, as resp's body (wholeBody).
func (st *call) keepWhole(resp *http.Response, b []byte) {
	if st.decodes {
		resp.Body.Close()
		resp.Body, st.answer = http.NoBody, b
		return
	}
	w := &wholeBody{b: b, rest: resp.Body}
	w.r.Reset(b)
	resp.Body = w
}

// readWith has Request.Read read the answer, and closes its body.
func (st *call) readWith(resp *http.Response) (bool, error) {
	body := &answerBody{ReadCloser: resp.Body}
	resp.Body = body
	err := st.read(resp)
	body.Close()
	resp.Body = http.NoBody
	switch {
	case err == nil:
		return false, nil
	case body.err != nil:
		return true, st.answerLost(err)
	}
	return false, err
}

// answerBody is a body that Request.Read reads: it keeps the error of a
// failed read (an answer cut off), which tells it from Read's own.
type answerBody struct {
	io.ReadCloser
	err error
}

func (b *answerBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// answerLost marks the call ambiguous after a 2xx answer whose body could
// not be read, and returns the error of the attempt.
func (st *call) answerLost(err error) error {
	st.ambiguous = true
	st.wrote.Store(true) // it was answered: never "not sent"
	return fmt.Errorf("reading response: %w", err)
}

// Limits of a 2xx answer's body, counted after decompression
// (Request.MaxAnswerSize).
const (
	// DefaultMaxAnswerSize caps the answer of a request that sets no
	// MaxAnswerSize: 8 MiB.
	DefaultMaxAnswerSize = 8 << 20
	// MaxTokenAnswerSize caps the answer of a token request: 64 KiB.
	MaxTokenAnswerSize = 64 << 10
	// MaxPageAnswerSize caps a page of report data (an export's page):
	// 256 MiB.
	MaxPageAnswerSize = 256 << 20
)

func tooLarge(limit int64) error {
	return fmt.Errorf("%w: more than %d bytes, the limit for this kind of answer", ErrAnswerTooLarge, limit)
}

// cappedBody is an answer's body that fails with ErrAnswerTooLarge once
// more than left bytes would be read.
type cappedBody struct {
	io.ReadCloser
	left  int64
	limit int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, tooLarge(c.limit)
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n + int(c.left), tooLarge(c.limit)
	}
	return n, err
}

// wholeBody is an answer's body as readAnswer read it whole, handed on
// by Send: b, read through r, and rest, the connection's body, closed
// with it.
type wholeBody struct {
	r    bytes.Reader
	b    []byte
	rest io.ReadCloser
}

func (w *wholeBody) Read(p []byte) (int, error) { return w.r.Read(p) }
func (w *wholeBody) Close() error               { return w.rest.Close() }

// headBody is an answer's body of unknown length longer than
// maxWholeBody: what readAnswer read of it, then the rest, which is
// closed with it.
type headBody struct {
	io.Reader
	rest io.ReadCloser
}

func (h *headBody) Close() error { return h.rest.Close() }

// decode reads a 2xx answer into out (see Do); whole is its body when
// the call read it whole (call.answer).
func decode(resp *http.Response, out any, whole []byte) error {
	switch d := out.(type) {
	case nil:
		_, err := io.Copy(io.Discard, resp.Body)
		return err
	case Decoder:
		return d(resp.Body)
	}
	if resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if whole != nil {
		// Read whole in the retry loop (call.readAnswer).
		return decodeBytes(whole, out)
	}
	err := json.NewDecoder(resp.Body).Decode(out)
	if errors.Is(err, io.EOF) {
		err = nil // an empty body decodes to the zero value
	}
	// Read what follows the value (a newline) so that the connection can
	// be reused; a long tail is not worth reading.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	return err
}

// maxWholeBody is the largest answer call.readAnswer reads whole.
const maxWholeBody = 4 << 20

// decodeBytes decodes a whole body into out: a type with its own
// UnmarshalJSON gets the bytes at once, after one validity scan, instead
// of after a Decoder has scanned them twice; a checksItself, without
// that scan.
func decodeBytes(b []byte, out any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil // an empty body decodes to the zero value
	}
	var err error
	switch u := out.(type) {
	case checksItself:
		err = u.UnmarshalJSON(b)
	case json.Unmarshaler:
		if json.Valid(b) {
			err = u.UnmarshalJSON(b)
		} else {
			err = json.Unmarshal(b, out)
		}
	default:
		err = json.Unmarshal(b, out)
	}
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*json.SyntaxError](err); ok {
		// Something after the value: decode the first one, as a Decoder
		// over the body would.
		err = json.NewDecoder(bytes.NewReader(b)).Decode(out)
	}
	return err
}

// checksItself is a json.Unmarshaler whose UnmarshalJSON checks its
// input itself: it fails on invalid JSON, as json.Unmarshal does before
// it calls an Unmarshaler, and on a valid value with more after it
// either decodes that value, as a Decoder would, or fails with a
// *json.SyntaxError (then decodeBytes decodes the first value). The
// answer of scim's user calls is one: decodeBytes spares it a validity
// scan of its own, one of three passes over the bytes. The method only
// marks the type.
type checksItself interface {
	json.Unmarshaler
	UnmarshalChecksInput()
}

// readAttempt reads the answer of an attempt that got one
// (call.readAnswer). A 2xx cut off mid-body fails the attempt like a lost
// answer: resp becomes nil and err the attempt's error. final reports an
// answer that Request.Read refused whole, which ends the call with err.
func (st *call) readAttempt(resp *http.Response) (_ *http.Response, final bool, err error) {
	cut, rerr := st.readAnswer(resp)
	switch {
	case rerr == nil:
		return resp, false, nil
	case !cut:
		return resp, true, rerr
	}
	return nil, false, st.attemptErr(rerr)
}
