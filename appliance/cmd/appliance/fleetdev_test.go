package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/settle"
	settleclient "github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/pay"
)

// TestDevFleet runs `appliance dev --boxes 3`: a gateway (embedded hub, the embedded chain,
// test USDC) and three boxes on loopback. Paid calls through the gateway settle, each names
// the box that served it in X-Peage-Box, the calls spread over the three boxes, the ledger
// records each payment with its box, and `appliance ledger` shows calls and revenue per box.
func TestDevFleet(t *testing.T) {
	d := startDev(t, "--boxes", "3")
	ctx := context.Background()
	base := "http://" + d.api
	key, err := settle.LoadKey(filepath.Join(d.state, "dev-payer.key"))
	if err != nil {
		t.Fatal(err)
	}
	buyer := &pay.Client{Key: key}
	sirens := []string{"542065479", "552120222", "732829320", "380129866", "442306122", "410218044"}
	servedBy := map[string]string{} // siren -> box
	perBox := map[string]int{}
	for _, siren := range sirens {
		res, err := buyer.Do(ctx, pay.Request{URL: base + "/v1/fr/tva", Params: map[string]string{"siren": siren}})
		if err != nil || res.Status != 200 || res.Receipt == nil || !res.Receipt.Success {
			t.Fatalf("paid call through the gateway: %v %+v", err, res)
		}
		if !strings.Contains(string(res.Body), siren[:3]) {
			t.Errorf("answer for %s: %s", siren, res.Body)
		}
		b := res.Header.Get(relay.HeaderBox)
		if !strings.HasPrefix(b, "box-") {
			t.Fatalf("answer for %s names box %q", siren, b)
		}
		servedBy[siren] = b
		perBox[b]++
	}
	if len(perBox) != 3 {
		t.Errorf("calls served by %v, want spread over box-1, box-2 and box-3", perBox)
	}

	c, err := settleclient.New("unix:" + filepath.Join(d.state, "settle.sock"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for { // the optimistic queue settles shortly after the answers
		pays, err := c.Payments(ctx, len(sirens))
		if err != nil || len(pays) != len(sirens) {
			t.Fatalf("payments: %v %+v", err, pays)
		}
		settled := 0
		boxes := map[string]int{}
		for _, p := range pays {
			if p.Status == ledger.Settled {
				settled++
			}
			boxes[p.Box]++
		}
		if settled == len(sirens) {
			if len(boxes) != len(perBox) {
				t.Fatalf("the ledger's boxes %v, the answers' %v", boxes, perBox)
			}
			for b, n := range perBox {
				if boxes[b] != n {
					t.Fatalf("the ledger's boxes %v, the answers' %v", boxes, perBox)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d payments settled", settled, len(sirens))
		}
		time.Sleep(20 * time.Millisecond)
	}
	var out strings.Builder
	if err := ledgerTo(ctx, &out, []string{"-state-dir", d.state}); err != nil {
		t.Fatal(err)
	}
	for b, n := range perBox {
		// a line of the per-box table: "box-2  2      0.010000"
		if !regexp.MustCompile(`(?m)^` + b + ` +` + strconv.Itoa(n) + ` +[0-9]+\.[0-9]{6}$`).MatchString(out.String()) {
			t.Errorf("appliance ledger does not show %d calls for %s:\n%s", n, b, out.String())
		}
	}
}
