package ownfile_test

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/partnerapi/partner-go/ownfile"
)

// A job writes its output whole or not at all, and keeps a small
// checkpoint beside it that the next run reads back only when it is a
// small regular file of this user's (never a link to another file or to
// /dev/zero).
func Example() {
	dir, err := os.MkdirTemp("", "export")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "report.csv")

	// The checkpoint: replaced whole at each save, through no link.
	cp, _ := json.Marshal(map[string]int{"rows": 2})
	if err := ownfile.WriteFile(out+".checkpoint", cp, 0o600); err != nil {
		log.Fatal(err)
	}
	b, err := ownfile.ReadFile(out+".checkpoint", 16<<10)
	if err != nil {
		log.Fatal(err) // a link, another user's file, or more than 16 KiB
	}
	fmt.Printf("checkpoint %s\n", b)

	// The output: written beside report.csv, which it replaces at
	// Commit; a failure before leaves report.csv as it was.
	f, err := ownfile.CreateOutput(out, true)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Abort() // removes the file written unless committed
	fmt.Fprintln(f, "id,name")
	fmt.Fprintln(f, "1,Acme")
	if err := f.Commit(); err != nil {
		log.Fatal(err)
	}
	b, _ = os.ReadFile(out)
	fmt.Print(string(b))

	// Output:
	// checkpoint {"rows":2}
	// id,name
	// 1,Acme
}
