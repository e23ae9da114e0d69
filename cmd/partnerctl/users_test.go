package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/fake/demo"
)

func TestUsersListCreateSuspend(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)

	r := c.must(t, "users", "list")
	for _, want := range []string{demo.User1, demo.UserEmail2, demo.UserEmail3} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("users list lacks %s:\n%s", want, r.stdout)
		}
	}
	r = c.must(t, "users", "list", "--filter", `userName eq "`+demo.UserEmail2+`"`, "--json")
	var users []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &users); err != nil || len(users) != 1 || users[0]["userName"] != demo.UserEmail2 {
		t.Fatalf("filtered list: %v %s", err, r.stdout)
	}

	r = c.must(t, "users", "create", "--user-name", "new@example.com", "--display-name", "New Person", "--email", "new@example.com")
	fields := strings.Fields(r.stdout)
	if len(fields) != 3 || fields[0] != "created" {
		t.Fatalf("create: %q", r.stdout)
	}
	u, ok := srv.User(fields[1])
	if !ok || u.UserName != "new@example.com" || u.DisplayName != "New Person" || len(u.Emails) != 1 || !u.IsActive() {
		t.Fatalf("created user: %+v", u)
	}
	if r := c.run(t, "users", "create", "--user-name", "NEW@example.com"); r.code != exitFail || !strings.Contains(r.stderr, "NEW@example.com") {
		t.Fatalf("duplicate create: exit %d, stderr %q", r.code, r.stderr)
	}

	c.must(t, "users", "suspend", fields[1])
	if u, _ := srv.User(fields[1]); u.IsActive() {
		t.Fatal("user not suspended")
	}
	if r := c.run(t, "users", "suspend", "usr-nobody"); r.code != exitFail {
		t.Fatalf("suspend unknown: exit %d", r.code)
	}
}

// TestUsersImportIsSafeToRerun compares the import with users read back
// whole, which the fake answers with WithSCIMFullResources (the published
// reads show no displayName or emails).
func TestUsersImportIsSafeToRerun(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData(), fake.WithSCIMFullResources())
	defer srv.Close()
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "people.csv")
	writeFile(t, in, "userName,Display Name,email,department,active\n"+
		"ann@example.com,Ann,ann@example.com,Sales,true\n"+ // new
		demo.UserEmail1+",Countess of Lovelace,,,\n"+ // changes the display name
		demo.UserEmail2+",,,,\n"+ // nothing to change
		"bob@example.com,Bob,,,maybe\n"+ // fails
		",Nobody,,,\n") // fails: no userName

	r := c.run(t, "users", "import", in)
	if r.code != exitDataFailed || !strings.Contains(r.stdout, "1 created, 1 updated, 0 written, 1 unchanged, 2 failed") ||
		!strings.Contains(r.stdout, "line 5: failed bob@example.com: active \"maybe\" is not true or false\n") ||
		!strings.Contains(r.stdout, "line 6: failed: no userName\n") {
		t.Fatalf("first import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	u, _ := srv.User(demo.User1)
	if u.DisplayName != "Countess of Lovelace" {
		t.Fatalf("updated user: %+v", u)
	}
	var ann fake.User
	for _, x := range srv.Users() {
		if x.UserName == "ann@example.com" {
			ann = x
		}
	}
	if ann.DisplayName != "Ann" || ann.Department != "Sales" || len(ann.Emails) != 1 {
		t.Fatalf("created user: %+v", ann)
	}

	// Without the failing row, a second run reads everything back equal
	// and writes nothing.
	writeFile(t, in, strings.Join(strings.Split(readFile(t, in), "\n")[:4], "\n")+"\n")
	puts := countRequests(srv, "PUT")
	r = c.must(t, "users", "import", in)
	if !strings.Contains(r.stdout, "0 created, 0 updated, 0 written, 3 unchanged, 0 failed") || countRequests(srv, "PUT") != puts {
		t.Fatalf("second import:\n%s", r.stdout)
	}
	if r := c.run(t, "users", "import", filepath.Join(t.TempDir(), "none.csv")); r.code != exitFail {
		t.Fatalf("missing file: exit %d", r.code)
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	writeFile(t, bad, "name,mail\nx,y\n")
	if r := c.run(t, "users", "import", bad); r.code != exitFail || !strings.Contains(r.stderr, "unknown column") || r.stdout != "" {
		t.Fatalf("bad header: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestUsersSuspendByUserName: suspend takes a userName as well as an id,
// and says so when neither matches.
func TestUsersSuspendByUserName(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	r := c.must(t, "users", "suspend", strings.ToUpper(demo.UserEmail2))
	var id string
	for _, u := range srv.Users() {
		if u.UserName == demo.UserEmail2 {
			id = u.ID
			if u.IsActive() {
				t.Fatalf("%s not suspended", u.UserName)
			}
		}
	}
	if r.stdout != "suspended "+id+" "+demo.UserEmail2+"\n" {
		t.Fatalf("stdout %q", r.stdout)
	}
	if r := c.run(t, "users", "suspend", "kim@example.com"); r.code != exitFail ||
		!strings.Contains(r.stderr, "suspend user kim@example.com: no user has that userName or id") {
		t.Fatalf("unknown user: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestUsersImportStopped: an import that cannot read its file to the end
// says after which line it stopped.
func TestUsersImportStopped(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "people.csv")
	writeFile(t, in, "userName,displayName\nzoe@example.com,Zoe\nyan@example.com,Yan\nbad@example.com,\"Bad\"x\nlast@example.com,Last\n")
	r := c.run(t, "users", "import", in)
	if r.code != exitFail ||
		!strings.Contains(r.stdout, "stopped after line 3: 2 created, 0 updated, 0 written, 0 unchanged, 0 failed; the rows after line 3 were not imported\n") ||
		!strings.Contains(r.stderr, "line 4") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for _, u := range srv.Users() {
		if u.UserName == "last@example.com" {
			t.Fatal("a row after the malformed line was imported")
		}
	}
}

// TestUsersImportDirectory: a directory as FILE is a usage error before
// any request, as for bulk load.
func TestUsersImportDirectory(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	dir := t.TempDir()
	if r := c.run(t, "users", "import", dir); r.code != exitUsage || !strings.Contains(r.stderr, dir+" is a directory") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Fatalf("requests were sent: %+v", reqs)
	}
}

// TestUsersImportDefaultReads runs an import twice against the fake as it
// answers by default (reads without displayName, name or emails): a row
// that sets such a member is written and counted "written", so a change of
// the display name or email alone reaches the service; a row whose members
// the reads return, read back equal, is "unchanged" and not written.
func TestUsersImportDefaultReads(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	in := filepath.Join(t.TempDir(), "people.csv")
	writeFile(t, in, "userName,displayName,givenName,familyName,email,department,active\n"+
		"ann@example.com,Ann,Ann,Example,ann@example.com,Sales,true\n"+ // new
		demo.UserEmail1+",Countess of Lovelace,Ada,Lovelace,ada@other.example.com,Research,true\n"+ // a new department
		demo.UserEmail2+",Rear Admiral Hopper,,,,,\n"+ // the display name alone
		demo.UserEmail3+",,,,turing@other.example.com,,\n"+ // the email alone
		"ann@example.com,,,,,Sales,true\n") // what the reads show, equal
	r := c.must(t, "users", "import", in)
	if !strings.Contains(r.stdout, "1 created, 1 updated, 2 written, 1 unchanged, 0 failed") ||
		!strings.Contains(r.stdout, "line 4: written "+demo.UserEmail2+" "+demo.User2+"\n") ||
		!strings.Contains(r.stdout, "line 6: unchanged ann@example.com") {
		t.Fatalf("first import:\n%s", r.stdout)
	}
	u, _ := srv.User(demo.User1)
	if u.Department != "Research" || u.DisplayName != "Countess of Lovelace" || len(u.Emails) == 0 || u.Emails[0].Value != "ada@other.example.com" {
		t.Fatalf("updated user: %+v, want the new department, display name and email", u)
	}
	if u, _ := srv.User(demo.User2); u.DisplayName != "Rear Admiral Hopper" || len(u.Emails) != 1 || u.Emails[0].Value != demo.UserEmail2 {
		t.Fatalf("user with a new display name: %+v, want it stored and the emails kept", u)
	}
	if u, _ := srv.User(demo.User3); len(u.Emails) == 0 || u.Emails[0].Value != "turing@other.example.com" || u.DisplayName != "Alan Turing" || u.IsActive() {
		t.Fatalf("user with a new email: %+v, want it stored and the rest kept", u)
	}
	puts := countRequests(srv, "PUT")
	r = c.must(t, "users", "import", in)
	if !strings.Contains(r.stdout, "0 created, 0 updated, 4 written, 1 unchanged, 0 failed") || countRequests(srv, "PUT") != puts+4 {
		t.Fatalf("second import (%d PUTs):\n%s", countRequests(srv, "PUT")-puts, r.stdout)
	}
	if u, _ := srv.User(demo.User2); u.DisplayName != "Rear Admiral Hopper" {
		t.Fatalf("rewritten user: %+v", u)
	}
}

// countRequests counts the requests with method the fake has seen.
func countRequests(srv *fake.Server, method string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Method == method {
			n++
		}
	}
	return n
}

// TestUsersListColumns: users list shows the columns the service's
// listing returns (no display name or e-mail, blank for every user);
// --columns asks for more, and names an unknown one.
func TestUsersListColumns(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	r := c.must(t, "users", "list")
	if header := strings.Fields(strings.SplitN(r.stdout, "\n", 2)[0]); strings.Join(header, " ") != "ID USERNAME ACTIVE" {
		t.Fatalf("default columns %q", header)
	}
	full := newFake(t, fake.WithDemoData(), fake.WithSCIMFullResources())
	defer full.Close()
	r = newCLI(full).must(t, "users", "list", "--columns", "username,email")
	var line string
	for l := range strings.Lines(r.stdout) {
		if strings.HasPrefix(l, demo.UserEmail2+" ") {
			line = l
		}
	}
	if !strings.HasPrefix(r.stdout, "USERNAME") || !strings.Contains(r.stdout, "EMAIL\n") || strings.Count(line, demo.UserEmail2) != 2 {
		t.Fatalf("--columns username,email:\n%s", r.stdout)
	}
	if r := c.run(t, "users", "list", "--columns", "id,phone"); r.code != exitUsage || !strings.Contains(r.stderr, `unknown column "phone"`) {
		t.Fatalf("unknown column: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestUsersGet reads one user by userName (in any case) or by id, as a
// table of the attributes the service returned and as JSON.
func TestUsersGet(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)

	r := c.must(t, "users", "get", strings.ToUpper(demo.UserEmail1))
	var rows []string
	for line := range strings.Lines(r.stdout) {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	if want := []string{"ID " + demo.User1, "USERNAME " + demo.UserEmail1, "ACTIVE true", "DEPARTMENT Engineering"}; !slices.Equal(rows, want) {
		t.Errorf("users get by userName:\n%s\nwant the rows %q", r.stdout, want)
	}
	if strings.Contains(r.stdout, "EMAIL") {
		t.Errorf("users get prints an attribute the read did not return:\n%s", r.stdout)
	}

	r = c.must(t, "users", "get", demo.User1, "--json")
	var u map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &u); err != nil || u["id"] != demo.User1 || u["userName"] != demo.UserEmail1 || u["active"] != true {
		t.Fatalf("users get --json: %v %s", err, r.stdout)
	}

	if r := c.run(t, "users", "get", "nobody@example.com"); r.code != exitFail || !strings.Contains(r.stderr, "no user has that userName or id") {
		t.Fatalf("users get of nobody: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := c.run(t, "users", "get"); r.code != exitUsage {
		t.Fatalf("users get without a user: exit %d", r.code)
	}
}

// TestUsersDeactivateIsSuspend: deactivate is another name of suspend.
func TestUsersDeactivateIsSuspend(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fake.WithDemoData())
	defer srv.Close()
	c := newCLI(srv)
	r := c.must(t, "users", "deactivate", demo.UserEmail2)
	if !strings.HasPrefix(r.stdout, "suspended ") {
		t.Fatalf("users deactivate: %q", r.stdout)
	}
	for _, u := range srv.Users() {
		if u.UserName == demo.UserEmail2 && u.IsActive() {
			t.Fatal("users deactivate left the user active")
		}
	}
	if r := c.must(t, "users", "suspend", "--help"); !strings.Contains(r.stdout, "deactivate") {
		t.Errorf("suspend's help does not name deactivate:\n%s", r.stdout)
	}
}

// TestMistypedCommandSuggests: a mistyped command is a usage error that
// names the command meant.
func TestMistypedCommandSuggests(t *testing.T) {
	t.Parallel()
	c := &cli{env: map[string]string{}}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"users", "lsit"}, `unknown command "lsit" for "partnerctl users"; did you mean "list"?`},
		{[]string{"users", "suspnd", "x"}, `did you mean "suspend"?`},
		{[]string{"user", "list"}, `unknown command "user" for "partnerctl"; did you mean "users"?`},
		{[]string{"reprots"}, `did you mean "reports"?`},
		// The nearest first: one edit from deactivate, two from reactivate.
		{[]string{"users", "deactivat", "x"}, `did you mean "deactivate" or "reactivate"?`},
		{[]string{"users", "reactivat", "x"}, `did you mean "reactivate" or "deactivate"?`},
		{[]string{"users", "suspend-user"}, `unknown command "suspend-user"`},
	} {
		r := c.run(t, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if r := c.run(t, "users", "zzzzzz"); r.code != exitUsage || strings.Contains(r.stderr, "did you mean") {
		t.Errorf("nothing near: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestEmptyArgumentIsAUsageError: an empty positional argument (an unset
// shell variable, as in users get "$USER_ID") is a usage error that names
// it, before anything is read or sent.
func TestEmptyArgumentIsAUsageError(t *testing.T) {
	t.Parallel()
	c := &cli{env: map[string]string{}}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"users", "get", ""}, "partnerctl users get: ID|USERNAME is empty"},
		{[]string{"users", "deactivate", ""}, "partnerctl users suspend: ID|USERNAME is empty"},
		{[]string{"users", "import", ""}, "partnerctl users import: FILE.csv is empty"},
		{[]string{"bulk", "load", "", "--integration", "int-crm"}, "partnerctl bulk load: FILE is empty"},
		{[]string{"bulk", "status", "", "--integration", "int-crm"}, "partnerctl bulk status: EXECUTION is empty"},
		{[]string{"events", "delete", ""}, "partnerctl events delete: ID is empty"},
		{[]string{"reports", "export", "", "-o", "out.csv"}, "partnerctl reports export: REPORT_ID is empty"},
	} {
		r := c.run(t, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, exitUsage, tc.want)
		}
	}
}
