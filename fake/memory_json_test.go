package fake

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/partnerapi/partner-go/fake/demo"
)

// longKeyRecord is a JSON record of the demo opportunity integration whose
// member named by a key of keyLen bytes holds members m0 ... m<n-1>, from
// first on: flattened, each member's dotted name repeats the key.
func longKeyRecord(key string, keyLen, first, n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"sales_details":{"crm_opportunity_id":%q},%q:{`, key, strings.Repeat("k", keyLen))
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"m%d":0`, first+i)
	}
	b.WriteString("}}")
	return b.Bytes()
}

func jsonArray(records ...[]byte) []byte {
	return append(append([]byte("["), bytes.Join(records, []byte(","))...), ']')
}

// jsonRows is a JSON body of n valid opportunities as they are read, of
// the same fields as csvRows's: keys K-1 ... K-n.
type jsonRows struct {
	n, i int
	buf  bytes.Buffer
}

func (j *jsonRows) Read(p []byte) (int, error) {
	for j.buf.Len() < len(p) && j.i <= j.n {
		switch {
		case j.i == 0:
			j.buf.WriteByte('[')
		case j.i > 1:
			j.buf.WriteByte(',')
		}
		if j.i > 0 {
			fmt.Fprintf(&j.buf, `{"sales_details":{"crm_opportunity_id":"K-%d"},"name":"Deal %d"}`, j.i, j.i)
		}
		if j.i == j.n {
			j.buf.WriteByte(']')
		}
		j.i++
	}
	if j.buf.Len() == 0 {
		return 0, io.EOF
	}
	return j.buf.Read(p)
}

// TestMemoryModelJSON sends JSON records whose nested members flatten to
// far more than they weigh, each kind of body that carries them (the
// request's body, an attached file, an uploaded one), and an ordinary
// large JSON load. One record of 372 KB (a 16 KiB key over 40,000
// members) flattened to 640 MB of dotted names; loads whose records each
// stayed within the caps grew one object until each change flattened
// gigabytes.
func TestMemoryModelJSON(t *testing.T) {
	skipUnderRace(t)
	e := newMemEnv(t)
	defer e.f.Close()
	e.f.SetURL("http://127.0.0.1:1")
	jsonLoad := loadPath("data_format", "JSON")
	poc := jsonArray(longKeyRecord("J-1", 16<<10, 0, 40_000))
	tooLong := fmt.Sprintf("JSON record 1 (byte 1) holds more than %d bytes of field names and values", maxRecordBytes)
	e.measure(fmt.Sprintf("JSON record of %d KB, 16 KiB key over 40,000 members", len(poc)>>10), 0, func() {
		e.want(e.send("POST", jsonLoad, "application/json", bytes.NewReader(poc)), 400, tooLong)
	})
	e.measure("the same record as an attached file", 0, func() {
		body, ctype := multipartFile("a.json", poc)
		e.want(e.send("POST", jsonLoad, ctype, body), 400, tooLong)
	})
	e.measure("the same record as an uploaded file", int64(len(poc)), func() {
		s := e.send("GET", "/bulk/v1/bulkload/"+demo.OpportunityIntegration+"/upload_url?file_name=a.json", "", nil)
		up, token := "/upload/"+between(string(s.head), "/upload/", `"`), between(string(s.head), `"upload_token":"`, `"`)
		e.want(e.send("POST", up, "application/json", bytes.NewReader(poc)), 200, "")
		e.want(e.send("POST", loadPath("data_format", "JSON", "file_token", token), "", nil), 400, tooLong)
	})
	// Members nested 9,000 deep under 3-byte names: 70 KB, whose leaf's
	// name is 36 KB, but flattening it holds every level's prefix at
	// once (162 MB); and 40,000 empty members under a 16 KiB key, whose
	// prefixes flatten builds though they hold no leaf.
	deep := jsonArray([]byte(`{"sales_details":{"crm_opportunity_id":"J-1"},` +
		strings.Repeat(`"abc":{`, 9_000) + `"x":0` + strings.Repeat("}", 9_001)))
	e.measure(fmt.Sprintf("JSON record of %d KB, members 9,000 deep", len(deep)>>10), 0, func() {
		e.want(e.send("POST", jsonLoad, "application/json", bytes.NewReader(deep)), 400, tooLong)
	})
	var empty bytes.Buffer
	fmt.Fprintf(&empty, `{"sales_details":{"crm_opportunity_id":"J-1"},%q:{"m0":{}`, strings.Repeat("k", 16<<10))
	for i := 1; i < 40_000; i++ {
		fmt.Fprintf(&empty, `,"m%d":{}`, i)
	}
	empty.WriteString("}}")
	e.measure(fmt.Sprintf("JSON record of %d KB, 40,000 empty members", empty.Len()>>10), 0, func() {
		e.want(e.send("POST", jsonLoad, "application/json", bytes.NewReader(jsonArray(empty.Bytes()))), 400, tooLong)
	})
	wide := jsonArray(longKeyRecord("J-1", 1, 0, 50_000))
	e.measure(fmt.Sprintf("JSON record of %d KB, 50,000 members", len(wide)>>10), 0, func() {
		e.want(e.send("POST", jsonLoad, "application/json", bytes.NewReader(wide)), 400,
			fmt.Sprintf("JSON record 1 (byte 1) has more than %d fields", maxRecordFields))
	})
	// 48 records of one key, each of 60 members under a 16 KiB key
	// (983 KB flattened, within the caps): the first makes the object,
	// the others would grow it past them and fail.
	var grow [][]byte
	for i := range 48 {
		grow = append(grow, longKeyRecord("J-1", 16<<10, 60*i, 60))
	}
	growing := jsonArray(grow...)
	e.measure(fmt.Sprintf("JSON load of %d KB growing one object", len(growing)>>10), 2<<20, func() {
		e.want(e.send("POST", jsonLoad, "application/json", bytes.NewReader(growing)), 200, "execution_id")
	})
	if st := e.f.BulkExecutions()[0]; st.InputCount != 48 || st.SuccessCount != 1 || st.ErrorCount != 47 {
		t.Errorf("execution %+v, want the first row written and 47 refused", st)
	}
	if ex := e.f.bulk.executions[e.f.BulkExecutions()[0].ID]; len(ex.errors) == 0 || !strings.Contains(ex.errors[0].Message, "the object would hold more than 1048576 bytes") {
		t.Errorf("row errors %.300v, want the object's cap named", ex.errors)
	}

	f := newMemEnv(t)
	defer f.f.Close()
	const n = memoryRows / 2
	legit := oppObjectsCost(n, 0)
	f.measure(fmt.Sprintf("JSON load of %d valid records", n), legit, func() {
		f.want(f.send("POST", jsonLoad, "application/json", &jsonRows{n: n}), 200, "execution_id")
	})
	if got := len(f.f.Objects("opportunity")); got < n {
		t.Errorf("%d opportunities after the load, want at least %d", got, n)
	}
}

// manyMembers is a JSON object of the members head, then n members
// "m0": 0 ... of 9 bytes or so each.
func manyMembers(head string, n int) []byte {
	var b bytes.Buffer
	b.WriteString("{" + head)
	for i := range n {
		fmt.Fprintf(&b, `,"m%d":0`, i)
	}
	b.WriteString("}")
	return b.Bytes()
}

// TestMemoryModelRouteBodies sends the largest bodies of the service's
// JSON routes and of the token endpoint, made of the smallest members
// (each costs the decoder far more than its bytes).
func TestMemoryModelRouteBodies(t *testing.T) {
	skipUnderRace(t)
	e := newMemEnv(t)
	defer e.f.Close()
	scim := manyMembers(`"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"mem@example.com"`, 340_000)
	e.measure(fmt.Sprintf("SCIM user of %d KB, 340,000 members", len(scim)>>10), 0, func() {
		e.want(e.send("POST", "/api/scim/v2/Users", "application/scim+json", bytes.NewReader(scim)), 400,
			"the user carries more than 64 members the fake does not model")
	})
	var emails bytes.Buffer
	emails.WriteString(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"mem@example.com","emails":[{"value":"0"}`)
	for i := range 200_000 {
		fmt.Fprintf(&emails, `,{"value":"%d"}`, i+1)
	}
	emails.WriteString("]}")
	e.measure(fmt.Sprintf("SCIM user of %d KB, 200,000 emails", emails.Len()>>10), 0, func() {
		e.want(e.send("POST", "/api/scim/v2/Users", "application/scim+json", &emails), 400, "the fake keeps at most 100")
	})
	token := manyMembers(`"grant_type":"client_credentials"`, 6_500)
	e.measure(fmt.Sprintf("token request of %d KB, 6,500 members", len(token)>>10), 0, func() {
		e.want(e.send("POST", "/oauth/token", "application/json", bytes.NewReader(token)), 400, "")
	})
}
