package events_test

import (
	"os"
	"testing"

	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/internal/contract"
)

// contractCheck holds the fake of each Example to the service's contract,
// api/openapi.yaml: TestMain fails the run on a violation.
var contractCheck = fake.WithMiddleware(contract.ExampleCheck())

func TestMain(m *testing.M) { os.Exit(contract.Main(m)) }
