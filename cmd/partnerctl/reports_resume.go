package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/partnerapi/partner-go/reports"
)

// An export of CSV or JSON lines to a file -o FILE writes .FILE.partial
// beside it and keeps, in .FILE.checkpoint, where it stands: the SDK's
// checkpoint (reports.Checkpoint) and the length of the partial file
// that holds the rows before it. An export that stops keeps both, and
// --resume goes on from there; the export that completes renames the
// partial file to FILE and removes the checkpoint.

// exportState is the content of a .FILE.checkpoint file.
type exportState struct {
	ReportID   int64              `json:"report_id"`
	Format     string             `json:"format"`
	Bytes      int64              `json:"bytes"` // of the partial file, the rows before Checkpoint
	Checkpoint reports.Checkpoint `json:"checkpoint"`
}

// resumable says whether an export in format to a file can be resumed:
// CSV and JSON lines can be appended to, an XLSX workbook cannot.
func resumable(format string) bool { return format == formatCSV || format == formatJSONL }

// resumeFiles returns the partial file and the checkpoint file of an
// export to out.
func resumeFiles(out string) (partial, checkpoint string) {
	dir, base := filepath.Split(out)
	return filepath.Join(dir, "."+base+".partial"), filepath.Join(dir, "."+base+".checkpoint")
}

// resumeCommand is the command line that goes on with an export.
func resumeCommand(id int64, out string) string {
	return fmt.Sprintf("partnerctl reports export %d -o %s --resume", id, shellQuote(out))
}

// exportFile is the partial file of an export to out that can resume,
// and what it keeps in the checkpoint file.
type exportFile struct {
	f                   *os.File
	partial, checkpoint string
	state               exportState
	n                   int64 // bytes written to f
	saved               bool  // a checkpoint with rows was saved
}

// openExportFile opens the partial file of an export of report id in
// format to out: a new one, or with resume the one a stopped export kept,
// cut to its checkpoint's length.
func openExportFile(out string, id int64, format string, resume bool) (*exportFile, error) {
	partial, checkpoint := resumeFiles(out)
	e := &exportFile{partial: partial, checkpoint: checkpoint, state: exportState{ReportID: id, Format: format}}
	if !resume {
		// A stopped export's files go: created anew, exclusively, never
		// through a symbolic link.
		os.Remove(partial)
		os.Remove(checkpoint)
		f, err := os.OpenFile(partial, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			return nil, err
		}
		e.f = f
		return e, nil
	}
	b, err := os.ReadFile(checkpoint)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("--resume: no stopped export to %s (%s does not exist): export without --resume", out, checkpoint)
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &e.state); err != nil {
		return nil, fmt.Errorf("--resume: %s: %w", checkpoint, err)
	}
	switch {
	case e.state.ReportID != id:
		return nil, usagef("--resume: the export kept for %s is of report %d, not %d", out, e.state.ReportID, id)
	case e.state.Format != format:
		return nil, usagef("--resume: the export kept for %s is %s, not %s", out, e.state.Format, format)
	}
	if fi, err := os.Lstat(partial); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("--resume: %s is not the partial file of a stopped export: export without --resume", partial)
	}
	f, err := os.OpenFile(partial, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() < e.state.Bytes {
		err = fmt.Errorf("%s is shorter than its checkpoint says: export without --resume", partial)
	}
	if err == nil {
		err = f.Truncate(e.state.Bytes)
	}
	if err == nil {
		_, err = f.Seek(e.state.Bytes, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("--resume: %w", err)
	}
	e.f, e.n, e.saved = f, e.state.Bytes, true
	return e, nil
}

// from is the checkpoint to go on from, or nil for a new export.
func (e *exportFile) from() *reports.Checkpoint {
	if !e.saved {
		return nil
	}
	cp := e.state.Checkpoint
	return &cp
}

func (e *exportFile) Write(p []byte) (int, error) {
	n, err := e.f.Write(p)
	e.n += int64(n)
	return n, err
}

// save keeps cp and the partial file's length (all written before cp)
// in the checkpoint file, replaced whole. e.state stays what the file
// holds: a save that fails leaves both at the checkpoint before.
func (e *exportFile) save(cp reports.Checkpoint) {
	if cp.Rows == 0 {
		return
	}
	st := e.state
	st.Checkpoint, st.Bytes = cp, e.n
	b, err := json.Marshal(st)
	if err != nil {
		return
	}
	tmp := e.checkpoint + ".tmp"
	if os.WriteFile(tmp, b, 0o666) == nil && os.Rename(tmp, e.checkpoint) == nil {
		e.state, e.saved = st, true
	}
}

// discard removes the partial file and the checkpoint.
func (e *exportFile) discard() {
	e.f.Close()
	os.Remove(e.partial)
	os.Remove(e.checkpoint)
}
