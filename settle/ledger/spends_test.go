package ledger

import (
	"testing"
	"time"

	"github.com/peage/appliance/internal/journal"
)

// TestSpendsInFlight: a transaction journaled at its broadcast is in flight (not counted) until
// its receipt, which keeps what the broadcast said it moves; a mined record is final (a second
// receipt or a late drop changes nothing); a dropped one is never counted; all of it survives a
// restart.
func TestSpendsInFlight(t *testing.T) {
	dir := t.TempDir()
	open := func() *Spends {
		s, err := OpenSpends(dir, journal.SyncAlways, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	at := time.Unix(1_700_000_000, 0).UTC()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Broadcast(Spend{Tx: "0xAA", Kind: SpendDeposit, Nonce: 7, Raw: "0x01", Amount: "500", Channel: "0xc", At: at, Wei: "0"}))
	must(s.Broadcast(Spend{Tx: "0xBB", Kind: SpendSweep, Nonce: 8, Raw: "0x02", Amount: "900", At: at, Wei: "0"}))
	must(s.Broadcast(Spend{Tx: "0xCC", Kind: SpendSweep, Nonce: 8, Raw: "0x03", Amount: "900", At: at, Wei: "0"})) // its replacement
	if fl := s.InFlight(); len(fl) != 3 || fl[0].Tx != "0xaa" || fl[0].Nonce != 7 {
		t.Fatalf("in flight: %+v", fl)
	}
	if g := s.ByKind()[SpendDeposit]; g.Transactions != 0 {
		t.Fatalf("a transaction in flight is counted: %+v", g)
	}
	must(s.Record(Spend{Tx: "0xaa", Kind: SpendDeposit, Gas: 100, Wei: "1000", At: at}))
	must(s.Record(Spend{Tx: "0xaa", Kind: SpendDeposit, Gas: 100, Wei: "1000", At: at})) // seen twice
	must(s.Drop("0xaa"))                                                                 // too late: mined is final
	must(s.Record(Spend{Tx: "0xcc", Kind: SpendSweep, Gas: 50, Wei: "500", At: at}))
	must(s.Drop("0xbb"))
	must(s.Close())

	s = open()
	defer s.Close()
	if fl := s.InFlight(); len(fl) != 0 {
		t.Fatalf("in flight after restart: %+v", fl)
	}
	dep, _ := s.Get("0xAA")
	if dep.Status != TxMined || dep.Amount != "500" || dep.Channel != "0xc" || dep.Nonce != 7 || dep.Raw != "" || dep.Gas != 100 {
		t.Fatalf("mined deposit: %+v", dep)
	}
	if sp, _ := s.Get("0xbb"); sp.Status != TxDropped || sp.Raw != "" {
		t.Fatalf("dropped sweep: %+v", sp)
	}
	by := s.ByKind()
	if by[SpendDeposit].Transactions != 1 || by[SpendDeposit].Gas != 100 || by[SpendSweep].Transactions != 1 || by[SpendSweep].Wei != "500" {
		t.Fatalf("by kind: %+v", by)
	}
	if err := s.Drop("0xdd"); err == nil {
		t.Fatal("dropping an unknown transaction succeeded")
	}
}
