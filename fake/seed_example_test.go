package fake_test

import (
	"fmt"
	"strings"

	"github.com/partnerapi/partner-go/fake"
)

// A seed file describes the data a fake starts with; cmd/partnerfake
// loads one with -seed.
func ExampleParseSeed() {
	seed, err := fake.ParseSeed(strings.NewReader(`{
	  "users": [{"user_name": "ada@example.com", "display_name": "Ada"}],
	  "reports": [{"id": 7, "name": "Pipeline",
	               "columns": [{"id": "0", "name": "Partner"}, {"id": "1", "name": "Amount", "type": "NUMBER"}],
	               "rows": [["P1", 1200], ["P2", 300]]}]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	f := fake.New()
	defer f.Close()
	if err := f.ApplySeed(seed); err != nil {
		fmt.Println(err)
		return
	}
	v, _ := f.ReportVersion(7)
	fmt.Println(f.Users()[0].UserName, v > 0)
	// Output: ada@example.com true
}
