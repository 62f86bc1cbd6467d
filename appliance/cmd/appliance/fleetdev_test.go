package main

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/appliance/operator"
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
	// The operator's view, through the dev gateway's operator listener: every box live, with
	// the calls and USDC the ledger credits it; `appliance status` prints the same.
	snap, err := operator.Fetch(ctx, http.DefaultClient, "http://"+d.admin)
	if err != nil || snap.Fleet == nil {
		t.Fatalf("status.json: %v, fleet %+v", err, snap.Fleet)
	}
	if len(snap.Fleet.Boxes) != 3 || snap.Fleet.Gateway.Calls != 0 {
		t.Fatalf("the dashboard's fleet: %+v", snap.Fleet)
	}
	for _, b := range snap.Fleet.Boxes {
		n := perBox[b.Box]
		if !b.Live || b.Health != "ok" || len(b.Routes) == 0 || b.LastSeen.IsZero() || b.Earned.Calls != n ||
			b.Earned.Settled.Payments != n || b.Earned.Amount != uint64(n)*5000 {
			t.Errorf("the dashboard's %s: %+v; want live, %d calls settled", b.Box, b, n)
		}
	}
	var status strings.Builder
	if err := statusTo(ctx, &status, []string{"-addr", d.admin}); err != nil {
		if _, unhealthy := err.(exitCode); !unhealthy {
			t.Fatal(err)
		}
	}
	for b, n := range perBox {
		// "box-2  ok  0/8  -  0s ago  41  2  0.010000  2 0.010000  0 0.000000"
		if !regexp.MustCompile(`(?m)^` + b + ` +ok +[0-9]+/[0-9]+ .* ago +[1-9][0-9]* +` + strconv.Itoa(n) + ` +0\.0[0-9]{5} +` + strconv.Itoa(n) + ` `).MatchString(status.String()) {
			t.Errorf("appliance status does not show %d calls for %s:\n%s", n, b, status.String())
		}
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
