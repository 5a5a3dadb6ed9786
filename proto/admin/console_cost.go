package admin

import (
	"fmt"

	"github.com/floe-io/floe/internal/status"
)

// S3 Standard's list prices in us-east-1 (December 2026), which the
// console's cost estimate uses: requests by billing class and storage.
// Other regions and storage classes differ; the estimate says so.
const (
	priceWritePer1000 = 0.005 // PUT, COPY, POST, LIST
	priceReadPer1000  = 0.0004
	priceGBMonth      = 0.023
)

// costEstimate is a table's S3 cost as the console estimates it: the
// requests the nodes made for it since they started, and a month of its
// live data.
type costEstimate struct {
	Requests     string // USD
	StorageMonth string // USD per month
}

func estimateCost(t status.TableReport) costEstimate {
	r := t.ObjectRequests
	req := float64(r.Put+r.List)*priceWritePer1000/1000 + float64(r.Get)*priceReadPer1000/1000
	storage := float64(t.DataBytes) / (1 << 30) * priceGBMonth
	return costEstimate{Requests: usd(req), StorageMonth: usd(storage)}
}

func usd(v float64) string {
	if v < 1 && v > 0 {
		return fmt.Sprintf("$%.4f", v) // a quiet table's cents matter at a thousand tables
	}
	return fmt.Sprintf("$%.2f", v)
}
