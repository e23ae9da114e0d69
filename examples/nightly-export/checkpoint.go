package main

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"

	"github.com/partnerapi/partner-go/ownfile"
	"github.com/partnerapi/partner-go/reports"
)

// The program's two files beside FILE, both written and read through
// package ownfile, so that a link planted at their names (in a directory
// others can write to) is replaced, never followed:
//
//   - FILE.partial, the rows so far: created anew, exclusively, for a new
//     export; opened again only when it is a regular file of this user's.
//   - FILE.checkpoint, where the export stands (state): replaced whole at
//     each save; read back only when it is a small regular file of this
//     user's, and used only when it describes the partial file exactly
//     (its length, SHA-256 and rows) at a position the export can reach.

// maxCheckpointSize bounds the checkpoint file a run reads (one is some
// 200 bytes): a bigger one is not this program's.
const maxCheckpointSize = 16 << 10

// state is the content of the checkpoint file.
type state struct {
	ReportID   int64              `json:"report_id"`
	Bytes      int64              `json:"bytes"`  // of the partial file: the header and the rows before Checkpoint
	SHA256     string             `json:"sha256"` // of those bytes, in hex
	Checkpoint reports.Checkpoint `json:"checkpoint"`
}

// readState reads the checkpoint file name of an export of report id: a
// small regular file of this user's (not a link), holding a checkpoint of
// that report at a position an export reaches. An error wraps
// fs.ErrNotExist when there is none.
func readState(name string, id int64) (state, error) {
	var st state
	b, err := ownfile.ReadFile(name, maxCheckpointSize)
	if errors.Is(err, fs.ErrNotExist) {
		return st, err
	}
	if err == nil && json.Unmarshal(b, &st) != nil {
		err = fmt.Errorf("%s is not a checkpoint", name)
	}
	if err != nil {
		return st, fmt.Errorf("%w: remove it to start over", err)
	}
	if st.ReportID != id {
		return st, fmt.Errorf("%s is a checkpoint of report %d, not %d: remove it, or export to another -out", name, st.ReportID, id)
	}
	if !reachable(st) {
		cp := st.Checkpoint
		return st, fmt.Errorf("%s is not a checkpoint this program wrote (bytes %d, view %d, page size %d, next page %d, page rows %d, rows %d): remove it to start over",
			name, st.Bytes, cp.ViewID, cp.PageSize, cp.NextPage, cp.PageRows, cp.Rows)
	}
	return st, nil
}

// reachable reports whether st is a position an export reaches: after
// some rows, each page before NextPage full (rows = pages × page size +
// the rows of the page under way), or all of them but the last, short
// one, after which NextPage is the page past it.
func reachable(st state) bool {
	cp := st.Checkpoint
	switch {
	case st.Bytes <= 0 || len(st.SHA256) != 2*sha256.Size || cp.ViewID <= 0 || cp.Rows <= 0 ||
		cp.PageSize <= 0 || cp.PageSize > reports.MaxPageSize || cp.PageRows < 0 || cp.PageRows >= cp.PageSize:
		return false
	case cp.NextPage < 0 || cp.NextPage > cp.Rows/cp.PageSize+1: // also keeps the products below in range
		return false
	}
	full := cp.NextPage*cp.PageSize + cp.PageRows
	return cp.Rows == full || cp.PageRows == 0 && cp.Rows < full && cp.Rows > full-cp.PageSize
}

// partialFile is the partial file being written: what is written to it
// is counted and hashed, for the checkpoint.
type partialFile struct {
	*os.File
	n   int64     // bytes in the file
	sum hash.Hash // of those bytes
}

func (f *partialFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.sum.Write(p[:n])
	f.n += int64(n)
	return n, err
}

// openPartial opens the partial file name: a new one (ownfile.Create
// replaces whatever entry is at name), or, to go on from st, the one of
// the stopped export, a regular file of this user's whose first st.Bytes
// bytes are those st describes (their SHA-256, a header and st's rows),
// cut to them.
func openPartial(name string, st *state) (*partialFile, error) {
	if st == nil {
		f, err := ownfile.Create(name)
		if err != nil {
			return nil, err
		}
		return &partialFile{File: f, sum: sha256.New()}, nil
	}
	f, err := ownfile.Open(name, os.O_RDWR)
	if err != nil {
		return nil, fmt.Errorf("%w: remove the checkpoint to start over", err)
	}
	pf := &partialFile{File: f, n: st.Bytes, sum: sha256.New()}
	err = pf.check(st)
	if err == nil {
		err = f.Truncate(st.Bytes)
	}
	if err == nil {
		_, err = f.Seek(st.Bytes, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return pf, nil
}

// check reads the first st.Bytes bytes of f, from its start, into f.sum
// and says how they differ from what st describes.
func (f *partialFile) check(st *state) error {
	const startOver = "remove the checkpoint to start over"
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < st.Bytes {
		return fmt.Errorf("%s is shorter than its checkpoint says (%d bytes, not %d): %s", f.Name(), fi.Size(), st.Bytes, startOver)
	}
	r := io.TeeReader(io.LimitReader(f.File, st.Bytes), f.sum)
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	var records int64
	for ; ; records++ {
		if _, err = cr.Read(); err != nil {
			break
		}
	}
	if _, cerr := io.Copy(io.Discard, r); cerr != nil {
		return cerr
	}
	if hex.EncodeToString(f.sum.Sum(nil)) != st.SHA256 {
		return fmt.Errorf("%s is not the file its checkpoint describes (its SHA-256 differs): %s", f.Name(), startOver)
	}
	if !errors.Is(err, io.EOF) || records != st.Checkpoint.Rows+1 {
		return fmt.Errorf("%s does not hold a header and the %d rows its checkpoint counts: %s", f.Name(), st.Checkpoint.Rows, startOver)
	}
	return nil
}

// save keeps cp, with the length and hash of f's bytes (the rows before
// cp, made durable first), in the checkpoint file name: replaced whole
// (ownfile.WriteFile: written to a new file beside it, then renamed over
// it), so that a crash leaves the old checkpoint or the new one, never
// half of one.
func (f *partialFile) save(name string, id int64, cp reports.Checkpoint) error {
	if err := f.Sync(); err != nil {
		return err
	}
	b, err := json.Marshal(state{ReportID: id, Bytes: f.n, SHA256: hex.EncodeToString(f.sum.Sum(nil)), Checkpoint: cp})
	if err != nil {
		return err
	}
	return ownfile.WriteFile(name, b, 0o644)
}
