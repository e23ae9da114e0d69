// Package check holds input checks the SDK's packages share.
package check

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
)

// Reader returns an error that names the problem when r cannot be
// read as a request body: a nil pointer in a non-nil io.Reader (a nil
// *os.File, say), or a closed *os.File. A nil r is not checked: callers
// say themselves whether a body is required.
func Reader(r io.Reader) error {
	if r == nil {
		return nil
	}
	if v := reflect.ValueOf(r); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("body is a nil %T", r)
	}
	if f, ok := r.(*os.File); ok {
		if _, err := f.Stat(); errors.Is(err, os.ErrClosed) {
			return fmt.Errorf("body file %s: %w", f.Name(), os.ErrClosed)
		}
	}
	return nil
}
