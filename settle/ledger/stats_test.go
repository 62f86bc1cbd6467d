package ledger

import (
	"math"
	"reflect"
	"testing"
	"time"
)

// TestStats sums payments by status and the gas of mined transactions by the UTC day of
// their outcome.
func TestStats(t *testing.T) {
	day1 := time.Date(2026, 11, 20, 23, 59, 0, 0, time.UTC)
	type step struct {
		at     time.Time
		id     string
		amount uint64
		status Status // after the reservation; Reserved leaves it as is
		gasWei string
	}
	cases := []struct {
		name  string
		steps []step
		want  Stats
	}{
		{"empty", nil, Stats{ByStatus: map[Status]StatusFigures{}, GasWei: "0", GasByDay: []GasDay{}}},
		{"queue, outcomes and gas over two days", []step{
			{day1, "a", 1000, Settled, "21000000000000"},
			{day1, "b", 2000, Queued, ""},
			{day1.Add(2 * time.Minute), "c", 3000, Broadcast, ""},
			{day1.Add(3 * time.Minute), "d", 4000, Failed, "30000000000000"},
			{day1.Add(4 * time.Minute), "e", 5000, Settled, "18446744073709551616"}, // past uint64
			{day1.Add(5 * time.Minute), "f", 6000, Reserved, ""},
		}, Stats{
			ByStatus: map[Status]StatusFigures{
				Settled: {2, 6000}, Queued: {1, 2000}, Broadcast: {1, 3000}, Failed: {1, 4000}, Reserved: {1, 6000},
			},
			OldestOwed: day1,
			GasWei:     "18446795073709551616",
			GasByDay: []GasDay{
				{Day: "2026-11-20", Transactions: 1, Wei: "21000000000000"},
				{Day: "2026-11-21", Transactions: 2, Wei: "18446774073709551616"},
			},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var clock time.Time
			l := open(t, t.TempDir(), func() time.Time { return clock })
			defer l.Close()
			for _, s := range c.steps {
				clock = s.at
				if _, err := l.Reserve(Record{ID: s.id, Payer: "0xA", Route: "r", Amount: s.amount}, math.MaxUint64); err != nil {
					t.Fatal(err)
				}
				if s.status == Reserved {
					continue
				}
				if _, err := l.Update(s.id, func(r *Record) error { r.Status, r.GasWei = s.status, s.gasWei; return nil }); err != nil {
					t.Fatal(err)
				}
			}
			if got := l.Stats(); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("stats\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}
