package reports_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	partner "github.com/partnerapi/partner-go"
	"github.com/partnerapi/partner-go/fake"
	"github.com/partnerapi/partner-go/reports"
)

// exampleClient starts a fake with a small report and returns a client.
// The fake's views are ready at once (fake.WithViewDelay(0)).
func exampleClient() (*fake.Server, *partner.Client, int64) {
	srv := fake.NewServer(fake.WithViewDelay(0))
	id := srv.AddReport(fake.Report{
		Name: "Deals",
		Columns: []fake.Column{
			{ID: "deal", Name: "Deal"},
			{ID: "stage", Name: "Stage"},
			{ID: "amount", Name: "Amount", Type: "CURRENCY"},
		},
		Rows: [][]any{
			{"Renewal", "won", 12000},
			{"Expansion", "open", 5400.5},
			{"Pilot", "won", 800},
		},
		Charts: []fake.Chart{{ID: 1, Name: "Deals by stage", GroupBy: "stage"}},
	})
	c, err := partner.New(partner.WithConnection(srv.Connection()))
	if err != nil {
		log.Fatal(err)
	}
	return srv, c, id
}

func ExampleService_List() {
	srv, c, _ := exampleClient()
	defer srv.Close()
	for r, err := range c.Reports.List(context.Background(), reports.ListParams{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.ID, r.Name, r.Status)
	}
	// Output: 1 Deals PUBLISHED
}

func ExampleService_Data() {
	srv, c, id := exampleClient()
	defer srv.Close()
	md, err := c.Reports.Metadata(context.Background(), id)
	if err != nil {
		log.Fatal(err)
	}
	stage, err := md.ColumnID("Stage") // columns are named by position: "1"
	if err != nil {
		log.Fatal(err)
	}
	won := reports.And(reports.Text(stage).EqualTo("won"))
	for row, err := range c.Reports.Data(context.Background(), id, reports.DataParams{Filters: &won}) {
		if err != nil {
			log.Fatal(err)
		}
		var cells []string
		for name, v := range row.All() {
			cells = append(cells, fmt.Sprintf("%s=%v", name, v))
		}
		fmt.Println(strings.Join(cells, " "))
	}
	// Output:
	// Deal=Renewal Stage=won Amount=12000
	// Deal=Pilot Stage=won Amount=800
}

func ExampleService_ExportCSV() {
	srv, c, id := exampleClient()
	defer srv.Close()
	n, err := c.Reports.ExportCSV(context.Background(), id, os.Stdout, reports.ExportOptions{
		Wait: reports.WaitOptions{Interval: 50 * time.Millisecond},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "rows")
	// Output:
	// Deal,Stage,Amount
	// Renewal,won,12000
	// Expansion,open,5400.5
	// Pilot,won,800
	// 3 rows
}

func ExampleService_Export() {
	srv, c, id := exampleClient()
	defer srv.Close()
	ctx := context.Background()
	var total float64
	for row, err := range c.Reports.Export(ctx, id, reports.ExportOptions{
		Wait: reports.WaitOptions{Interval: 50 * time.Millisecond},
	}) {
		if err != nil {
			log.Fatal(err)
		}
		v, _ := row.Get("Amount")
		var amount float64
		fmt.Sscan(v.(fmt.Stringer).String(), &amount)
		total += amount
	}
	fmt.Println("total", total)
	// Output: total 18200.5
}

func ExampleService_WaitView() {
	srv, c, id := exampleClient()
	defer srv.Close()
	ctx := context.Background()
	viewID, err := c.Reports.PrepareExport(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	status, err := c.Reports.WaitView(ctx, viewID, reports.WaitOptions{Interval: 50 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(status.Status)
	// Output: SUCCESS
}

func ExampleService_ChartData() {
	srv, c, id := exampleClient()
	defer srv.Close()
	data, err := c.Reports.ChartData(context.Background(), id, reports.ChartDataParams{ChartIDs: []int64{1}})
	if err != nil {
		log.Fatal(err)
	}
	for _, ch := range data.Charts {
		for _, r := range ch.Results {
			fmt.Println(ch.Name+":", r.Text("Stage"), r.Text("count"))
		}
	}
	// Output:
	// Deals by stage: open 1
	// Deals by stage: won 2
}

// Read what is known of a report's charts: their ids, names and
// versions (the whole answer stays in Raw).
func ExampleService_ChartMetadata() {
	srv, c, id := exampleClient()
	defer srv.Close()
	meta, err := c.Reports.ChartMetadata(context.Background(), id, reports.ChartMetadataParams{ChartIDs: []int64{1}})
	if err != nil {
		log.Fatal(err)
	}
	charts, err := meta.Charts()
	if err != nil {
		log.Fatal(err)
	}
	for _, ch := range charts {
		fmt.Println(ch.ID, ch.Name)
	}
	// Output: 1 Deals by stage
}

func ExampleAnd() {
	f := reports.And(
		reports.Text("1").In("won", "open"),
		reports.Or(
			reports.Currency("2").AtLeast("1000"),
			reports.Date("3").Between("2026-01-01", "2026-03-31"),
		),
	)
	fmt.Println(f.Validate())
	// Output: <nil>
}

func ExampleMetadata_ColumnID() {
	srv, c, id := exampleClient()
	defer srv.Close()
	md, err := c.Reports.Metadata(context.Background(), id)
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"Deal", "Stage", "Amount"} {
		colID, err := md.ColumnID(name)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: colId %q\n", name, colID)
	}
	// Output:
	// Deal: colId "0"
	// Stage: colId "1"
	// Amount: colId "2"
}

func ExampleService_ViewMetadata() {
	srv, c, id := exampleClient()
	defer srv.Close()
	ctx := context.Background()
	viewID, err := c.Reports.PrepareExport(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	v, err := c.Reports.ViewMetadata(ctx, viewID)
	if err != nil {
		log.Fatal(err)
	}
	// The deployed service documents no shape: Raw holds the whole answer.
	fmt.Println(v.ReportID == id, v.RowCount, len(v.Raw) > 0)
	// Output: true 3 true
}
