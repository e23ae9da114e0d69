package doctor_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/partnerapi/partner-go/deployment"
	"github.com/partnerapi/partner-go/doctor"
	"github.com/partnerapi/partner-go/fake"
)

// Run against the fake finds nothing: the fake answers as the contract
// says, which is what Run holds a deployment to.
func Example() {
	srv := fake.NewServer(fake.WithDemoData())
	defer srv.Close()
	r, err := doctor.Run(context.Background(), doctor.Config{Connection: srv.Connection()})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("diverged:", r.Diverged())
	// Output: diverged: false
}

// A team's integration test runs Run against its staging deployment, in
// CI, and fails on a divergence: the tests that pass against the fake
// then say something about the deployment. The connection comes from the
// PARTNER_* variables, as every program of the module reads them.
func ExampleRun() {
	conn, err := deployment.FromEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	r, err := doctor.Run(context.Background(), doctor.Config{Connection: conn, IntegrationID: "int-crm"})
	if err != nil {
		log.Fatal(err) // errors.Is(err, doctor.ErrCredentialsRefused): the credentials
	}
	if r.Diverged() {
		log.Fatalf("the deployment answers otherwise than the fake:\n%s", r)
	}
}
