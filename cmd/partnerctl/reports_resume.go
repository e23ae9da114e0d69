package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/partnerapi/partner-go/ownfile"
	"github.com/partnerapi/partner-go/reports"
)

// An export of CSV or JSON lines to a file -o FILE writes .FILE.partial
// beside it and keeps, in .FILE.checkpoint, where it stands: the SDK's
// checkpoint (reports.Checkpoint), what the export is (report, format,
// --raw-csv, FILE's name) and the length and SHA-256 of the partial file
// that holds the rows before it. An export that stops keeps both, and
// --resume goes on from there once every one of these matches the command
// and the partial file; the export that completes renames the partial
// file to FILE and removes the checkpoint.
//
// Both files are the command's own: the partial file is created
// exclusively and opened again without following a symbolic link, the
// checkpoint is written to a new temporary file that replaces it by
// rename, and read only when it is a small regular file of this user's.

// checkpointVersion is the version of the checkpoint file's content.
const checkpointVersion = 2

// maxCheckpointSize bounds the checkpoint file a resume reads (one is
// some 300 bytes).
const maxCheckpointSize = 16 << 10

// exportState is the content of a .FILE.checkpoint file.
type exportState struct {
	Version    int                `json:"version"`
	Output     string             `json:"output"` // FILE's base name
	ReportID   int64              `json:"report_id"`
	Format     string             `json:"format"`
	RawCSV     bool               `json:"raw_csv"`
	Bytes      int64              `json:"bytes"`  // of the partial file, the rows before Checkpoint
	SHA256     string             `json:"sha256"` // of those bytes, in hex
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

// resumeCommand is the command line that goes on with an export of
// report id in format with the flags fl: --format when -o's extension
// does not name it, --force when it was given (FILE may exist).
func resumeCommand(id int64, format string, fl exportFlags) string {
	cmd := fmt.Sprintf("partnerctl reports export %d -o %s --resume", id, shellQuote(fl.out))
	if fl.rawCSV {
		cmd += " --raw-csv"
	}
	if format != formatOfExt(fl.out) {
		cmd += " --format " + format
	}
	if fl.force {
		cmd += " --force"
	}
	return cmd
}

// exportFile is the partial file of an export to out that can resume,
// and what it keeps in the checkpoint file.
type exportFile struct {
	f                   *os.File
	partial, checkpoint string
	state               exportState
	n                   int64     // bytes written to f
	sum                 hash.Hash // of the n bytes
	saved               bool      // a checkpoint with rows was saved
}

// startOver is how a refused resume ends its message.
const startOver = "export without --resume to start over"

// openExportFile opens the partial file of an export of report id in
// format (with rawCSV) to out: a new one, or with resume the one a
// stopped export kept, once its checkpoint matches the command and the
// partial file (checkState). Nothing is written until start.
func openExportFile(out string, id int64, format string, rawCSV, resume bool) (*exportFile, error) {
	partial, checkpoint := resumeFiles(out)
	e := &exportFile{partial: partial, checkpoint: checkpoint, sum: sha256.New(), state: exportState{
		Version: checkpointVersion, Output: filepath.Base(out), ReportID: id, Format: format, RawCSV: rawCSV,
	}}
	if !resume {
		// A stopped export's files go (the entries, never what a link
		// points to); the partial file is created anew, exclusively
		// (O_EXCL fails on any entry there, a symbolic link included).
		os.Remove(checkpoint)
		f, err := ownfile.Create(partial)
		if err != nil {
			return nil, err
		}
		e.f = f
		return e, nil
	}
	st, err := readCheckpoint(checkpoint)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("--resume: no stopped export to %s (%s does not exist): export without --resume", out, checkpoint)
	}
	if err != nil {
		return nil, usagef("--resume: %v: %s", err, startOver)
	}
	if err := e.checkState(st, out); err != nil {
		return nil, err
	}
	f, err := ownfile.Open(partial, os.O_RDWR)
	if err != nil {
		return nil, usagef("--resume: %v: %s", err, startOver)
	}
	// The partial file must hold, from its start, the bytes the
	// checkpoint counted: the same length and hash, and as many rows as
	// its position (whole rows: it ends where a row ends). Bytes after
	// them (rows written after the checkpoint) are cut by start.
	rows := &rowCounter{csv: format == formatCSV}
	n, err := io.CopyN(io.MultiWriter(e.sum, rows), f, st.Bytes)
	if err == nil && hex.EncodeToString(e.sum.Sum(nil)) != st.SHA256 {
		err = fmt.Errorf("%s is not the file its checkpoint describes", partial)
	}
	if errors.Is(err, io.EOF) {
		err = fmt.Errorf("%s is shorter than its checkpoint says (%d bytes, not %d)", partial, n, st.Bytes)
	}
	if got, whole := rows.rows(); err == nil && (got != st.Checkpoint.Rows || !whole) {
		err = fmt.Errorf("%s holds %s, its checkpoint says %s", partial, plural(got, "whole row"), groupDigits(st.Checkpoint.Rows))
	}
	if err != nil {
		f.Close()
		return nil, usagef("--resume: %v: %s", err, startOver)
	}
	e.f, e.n, e.state, e.saved = f, st.Bytes, st, true
	return e, nil
}

// readCheckpoint reads the checkpoint file path, which must be a small
// regular file of this user's.
func readCheckpoint(path string) (exportState, error) {
	var st exportState
	b, err := ownfile.ReadFile(path, maxCheckpointSize)
	if err != nil {
		return st, err
	}
	if json.Unmarshal(b, &st) != nil {
		return st, fmt.Errorf("%s is not a checkpoint", path)
	}
	return st, nil
}

// checkState says why the checkpoint st, read for an export to out, does
// not go on with the export e is: every setting that changes the output
// must be the same.
func (e *exportFile) checkState(st exportState, out string) error {
	want := e.state
	var what string
	switch {
	case st.Version != checkpointVersion || st.SHA256 == "" || st.Bytes < 0 || st.Checkpoint.Rows <= 0 || st.Checkpoint.ViewID <= 0:
		return usagef("--resume: %s is not a checkpoint this partnerctl wrote: %s", e.checkpoint, startOver)
	case !positionAgrees(st.Checkpoint):
		cp := st.Checkpoint
		return usagef("--resume: the checkpoint in %s is at page %d, %d rows into it, of pages of %d rows: not where %s rows end: %s",
			e.checkpoint, cp.NextPage, cp.PageRows, cp.PageSize, groupDigits(cp.Rows), startOver)
	case st.Output != want.Output:
		what = fmt.Sprintf("of an export to %s, not %s", st.Output, want.Output)
	case st.ReportID != want.ReportID:
		what = fmt.Sprintf("of report %d, not %d", st.ReportID, want.ReportID)
	case st.Format != want.Format:
		what = fmt.Sprintf("%s, not %s", st.Format, want.Format)
	case st.RawCSV != want.RawCSV:
		what = "written with --raw-csv"
		if !st.RawCSV {
			what = "written without --raw-csv"
		}
	default:
		return nil
	}
	return usagef("--resume: the export kept for %s is %s: give the same command, or %s", out, what, startOver)
}

// from is the checkpoint to go on from, or nil for a new export.
func (e *exportFile) from() *reports.Checkpoint {
	if !e.saved {
		return nil
	}
	cp := e.state.Checkpoint
	return &cp
}

// start readies a resumed partial file for writing: it is cut to the
// length its checkpoint counted, and written from there.
func (e *exportFile) start() error {
	if !e.saved {
		return nil
	}
	if err := e.f.Truncate(e.n); err != nil {
		return err
	}
	_, err := e.f.Seek(e.n, io.SeekStart)
	return err
}

func (e *exportFile) Write(p []byte) (int, error) {
	n, err := e.f.Write(p)
	e.sum.Write(p[:n])
	e.n += int64(n)
	return n, err
}

// save keeps cp and the partial file's length and hash (all written
// before cp) in the checkpoint file, replaced whole through a new
// temporary file (created exclusively, never through a link). The
// partial file and the new checkpoint reach the disk before the rename,
// so a checkpoint that survives a crash names rows that survived it too.
// e.state stays what the file holds: a save that fails leaves both at
// the checkpoint before.
func (e *exportFile) save(cp reports.Checkpoint) {
	if cp.Rows == 0 || e.f.Sync() != nil {
		return
	}
	st := e.state
	st.Checkpoint, st.Bytes, st.SHA256 = cp, e.n, hex.EncodeToString(e.sum.Sum(nil))
	b, err := json.Marshal(st)
	if err != nil {
		return
	}
	if ownfile.WriteFile(e.checkpoint, b, 0o600) != nil {
		return
	}
	e.state, e.saved = st, true
}

// discard removes the partial file and the checkpoint.
func (e *exportFile) discard() {
	e.f.Close()
	os.Remove(e.partial)
	os.Remove(e.checkpoint)
}

// positionAgrees reports whether cp's place in the view (page NextPage,
// PageRows rows into it, pages of PageSize rows from page 0) is where
// cp.Rows rows read from the view's start end: Rows is NextPage whole
// pages and PageRows more, or, with PageRows 0, the pages before NextPage
// with the last of them short (the view's last page).
func positionAgrees(cp reports.Checkpoint) bool {
	size := cp.PageSize
	switch {
	case size < 1 || size > reports.MaxPageSize || cp.Rows < 1 || cp.NextPage < 0 || cp.PageRows < 0 || cp.PageRows >= size:
		return false
	case cp.PageRows > 0:
		whole := cp.Rows - cp.PageRows
		return whole >= 0 && whole%size == 0 && whole/size == cp.NextPage
	}
	return (cp.Rows-1)/size+1 == cp.NextPage
}

// rowCounter counts the rows of an export's file written to it: lines of
// JSON, or CSV records, the header first (a line break inside a quoted
// CSV cell ends no record), and notes whether the file ends where a row
// does.
type rowCounter struct {
	csv    bool
	quoted bool // inside a quoted CSV cell
	lines  int64
	last   byte
}

func (c *rowCounter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		c.last = p[len(p)-1]
	}
	if !c.csv {
		c.lines += int64(bytes.Count(p, []byte{'\n'}))
		return len(p), nil
	}
	for q := p; len(q) > 0; {
		i := bytes.IndexAny(q, "\"\n")
		if i < 0 {
			break
		}
		if q[i] == '"' {
			c.quoted = !c.quoted // a doubled quote inside a cell turns it twice
		} else if !c.quoted {
			c.lines++
		}
		q = q[i+1:]
	}
	return len(p), nil
}

// rows returns the rows counted (the CSV header not among them), and
// whether the file ends at the end of a row.
func (c *rowCounter) rows() (int64, bool) {
	n := c.lines
	if c.csv {
		n = max(n-1, 0)
	}
	return n, c.lines > 0 && !c.quoted && c.last == '\n'
}
