package fakeadmin_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partnerapi/partner-go/fake"
)

// curlCall is one curl line of the README's "Fake server" section.
type curlCall struct {
	line        int
	method, url string
	body        string
	contentType string // what curl sends with the body
}

// readmeCurls returns the curl lines of the README's "Fake server" section,
// with $F replaced by base+"/_fake" and -d @FILE read from dir.
func readmeCurls(t *testing.T, base, dir string) []curlCall {
	t.Helper()
	md, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(md), "\n")
	start := slices.Index(lines, "## Fake server")
	if start < 0 {
		t.Fatal(`README.md has no "## Fake server" section`)
	}
	var calls []curlCall
	for i := start + 1; i < len(lines) && !strings.HasPrefix(lines[i], "## "); i++ {
		if !strings.HasPrefix(lines[i], "curl ") {
			continue
		}
		words, err := shellWords(lines[i])
		if err != nil {
			t.Fatalf("README.md:%d: %v", i+1, err)
		}
		calls = append(calls, parseCurl(t, words, i+1, base, dir))
	}
	return calls
}

// parseCurl reads the words of one curl line.
func parseCurl(t *testing.T, words []string, line int, base, dir string) curlCall {
	t.Helper()
	c := curlCall{line: line}
	for j := 1; j < len(words); j++ {
		switch w := words[j]; {
		case w == "-X" && j+1 < len(words):
			j++
			c.method = words[j]
		case (w == "-d" || w == "--json") && j+1 < len(words):
			j++
			c.body = words[j]
			c.contentType = "application/x-www-form-urlencoded" // what curl -d sends
			if w == "--json" {
				c.contentType = "application/json"
			}
			if name, ok := strings.CutPrefix(c.body, "@"); ok {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatalf("README.md:%d: %v", c.line, err)
				}
				c.body = string(b)
			}
		case strings.HasPrefix(w, "-"):
			t.Fatalf("README.md:%d: curl option %s is not understood by this test", c.line, w)
		default:
			c.url = strings.ReplaceAll(w, "$F", base+"/_fake")
		}
	}
	if c.method == "" {
		c.method = "GET"
		if c.body != "" {
			c.method = "POST"
		}
	}
	return c
}

// shellWords splits a shell command line into words: single and double
// quotes group, and a # outside quotes starts a comment.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '#' && !inWord:
			return words, nil
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, io.ErrUnexpectedEOF
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// TestReadmeFakeServerCurls makes the requests of the README's curl
// examples, in order, against an admin API served as cmd/partnerfake
// serves it (demo data, -manual-clock): each must succeed, and every
// admin route must have an example, so the README cannot drift from the
// admin API.
func TestReadmeFakeServerCurls(t *testing.T) {
	t.Parallel()
	_, base := adminServer(t, func() *fake.Fake {
		return fake.New(fake.WithDemoData(), fake.WithClock(fake.NewManualClock(time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC))))
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.json"), []byte(testSeed), 0o600); err != nil {
		t.Fatal(err)
	}
	calls := readmeCurls(t, base, dir)
	if len(calls) == 0 {
		t.Fatal("no curl line in the README's Fake server section")
	}
	for _, c := range calls {
		if !strings.HasPrefix(c.url, base+"/_fake/") {
			t.Errorf("README.md:%d: %s is not an admin URL", c.line, c.url)
			continue
		}
		var hdr []string
		if c.contentType != "" {
			hdr = []string{"Content-Type", c.contentType}
		}
		st, body := call(t, c.method, c.url, c.body, hdr...)
		if st/100 != 2 {
			t.Errorf("README.md:%d: %s %s: %d %s", c.line, c.method, c.url, st, body)
		}
	}

	// Every route of the OpenAPI document (which matches the served
	// routes: TestAdminOpenAPIMatchesRoutes) has an example.
	_, doc := call(t, "GET", base+"/_fake/openapi.json", "")
	var api struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal([]byte(doc), &api); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\\\{[a-z]+\\\}`)
	for p, ops := range api.Paths {
		re := regexp.MustCompile("^" + param.ReplaceAllString(regexp.QuoteMeta(p), "[^/]+") + "$")
		for m := range ops {
			m = strings.ToUpper(m)
			found := slices.ContainsFunc(calls, func(c curlCall) bool {
				u := strings.TrimPrefix(c.url, base)
				u, _, _ = strings.Cut(u, "?")
				return c.method == m && re.MatchString(u)
			})
			if !found {
				t.Errorf("README.md's Fake server section has no curl example of %s %s", m, p)
			}
		}
	}
}
