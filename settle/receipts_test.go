package settle_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/pay"
	"github.com/peage/appliance/settle/x402"
)

func testReceiptKeys(t *testing.T, base string) *receipt.Keyring {
	t.Helper()
	text, err := receipt.NewKeyText()
	if err != nil {
		t.Fatal(err)
	}
	kr, err := receipt.ParseKeyring(text, base, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// formatHeader sends X-Offer-Receipt-Format on every request of a paying client.
type formatHeader struct{ format string }

func (f formatHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(paywall.HeaderOfferFormat, f.format)
	return http.DefaultTransport.RoundTrip(r)
}

// paidCall pays for one call through the Go client and returns its answer.
func (w *world) paidCall(t *testing.T, method, path, format string, params map[string]string) *pay.Result {
	t.Helper()
	c := &pay.Client{Key: w.key, HTTP: &http.Client{Transport: formatHeader{format}}}
	res, err := c.Do(context.Background(), pay.Request{Method: method, URL: w.base + path, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 {
		t.Fatalf("paid call: %d %s", res.Status, res.Body)
	}
	return res
}

func evidence(res *pay.Result) receipt.Evidence {
	return receipt.Evidence{PaymentResponse: res.Header.Get(x402.HeaderPaymentResponse), Body: res.Body, ContentType: res.Header.Get("Content-Type")}
}

// Every paid answer carries the extension's receipt and the delivery statement, which the
// verifier accepts against the published keys: GET and POST, optimistic (pending) and
// synchronous (settled), EIP-712 and JWS.
func TestPaidAnswersCarryVerifiableReceipts(t *testing.T) {
	cases := []struct {
		name, mode, method, format, want string
	}{
		{"optimistic GET eip712", x402.ModeOptimistic, "GET", "", receipt.Pending},
		{"optimistic POST jws", x402.ModeOptimistic, "POST", "jws", receipt.Pending},
		{"sync GET jws", x402.ModeSync, "GET", "jws", receipt.Settled},
		{"sync POST eip712", x402.ModeSync, "POST", "eip712", receipt.Settled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, paywall.Policy{Settlement: c.mode, OptimisticMaxPrice: 100_000})
			res := w.paidCall(t, c.method, "/v1/test/echo", c.format, map[string]string{"q": "proof"})
			ev := evidence(res)
			ev.ResourceURL = w.base + "/v1/test/echo"
			v, err := w.receipts.Published().Verify(ev, time.Now())
			if err != nil {
				t.Fatalf("our own receipt does not verify: %v", err)
			}
			wantFormat := receipt.FormatEIP712
			if c.format == "jws" {
				wantFormat = receipt.FormatJWS
			}
			s := v.Statement
			switch {
			case v.Format != wantFormat:
				t.Errorf("receipt format %s, want %s", v.Format, wantFormat)
			case s.Settlement != c.want:
				t.Errorf("statement says %s, want %s", s.Settlement, c.want)
			case c.want == receipt.Settled && (s.Transaction == "" || v.Receipt.Transaction != res.Receipt.Transaction):
				t.Errorf("settled receipt names transaction %q, statement %q, payment response %q", v.Receipt.Transaction, s.Transaction, res.Receipt.Transaction)
			case !strings.EqualFold(v.Receipt.Payer, w.dev.Payer) || s.Amount != "10000" || s.Request.Method != c.method || s.Request.Path != "/v1/test/echo":
				t.Errorf("receipt %+v statement %+v", v.Receipt, s)
			case s.Nonce == "" || s.Request.ParamsSHA256 == "":
				t.Errorf("statement without nonce or params digest: %+v", s)
			}
		})
	}
}

// A failed call is not charged and carries no receipt.
func TestFailedCallCarriesNoReceipt(t *testing.T) {
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 100_000})
	a := w.get(t, "/v1/test/fail", nil, map[string]string{x402.HeaderPaymentSignature: w.header(t, w.key, "/v1/test/fail", price, nil, nil)})
	if a.status != 502 || a.receipt != nil || a.header.Get(x402.HeaderPaymentResponse) != "" {
		t.Fatalf("failed call: %d receipt %+v", a.status, a.receipt)
	}
}

// Forgeries are refused by the verifier, each with what fails.
func TestForgedReceiptsRefused(t *testing.T) {
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 100_000})
	pub := w.receipts.Published()
	a := w.paidCall(t, "GET", "/v1/test/echo", "", map[string]string{"q": "first"})
	b := w.paidCall(t, "GET", "/v1/test/echo", "jws", map[string]string{"q": "second"})
	bStmt := mustVerify(t, pub, evidence(b)).Statement

	other := testReceiptKeys(t, w.base).Published()
	rotated, err := receipt.Rotate(keyText(t, w), time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Hour)
	rotatedKeys, err := receipt.ParseKeyring(rotated, w.base, time.Now())
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		ev   func() receipt.Evidence
		pub  *receipt.Published
		at   time.Time
		want string
	}{
		{"body changed by one byte", func() receipt.Evidence {
			ev := evidence(a)
			ev.Body = append([]byte(nil), ev.Body...)
			ev.Body[len(ev.Body)-2] ^= 1
			return ev
		}, pub, time.Now(), "body is not the one delivered"},
		{"another request's receipt", func() receipt.Evidence {
			ev := evidence(a)
			ev.Body = b.Body
			return ev
		}, pub, time.Now(), "body is not the one delivered"},
		{"another request's receipt with its own body, checked against the request made", func() receipt.Evidence {
			ev := evidence(a)
			ev.Request = &receipt.StatementRequest{Method: "GET", Path: "/v1/test/echo", ParamsSHA256: bStmt.Request.ParamsSHA256}
			return ev
		}, pub, time.Now(), "request parameters are not the ones answered"},
		{"replayed on another resource", func() receipt.Evidence {
			ev := evidence(a)
			ev.ResourceURL = w.base + "/v1/test/other"
			return ev
		}, pub, time.Now(), "receipt is for " + w.base + "/v1/test/echo"},
		{"payer changed in the EIP-712 receipt", func() receipt.Evidence {
			ev := evidence(a)
			ev.PaymentResponse = editResponse(t, ev.PaymentResponse, func(m map[string]any) {
				m["extensions"].(map[string]any)[receipt.Extension].(map[string]any)["info"].(map[string]any)["receipt"].(map[string]any)["payload"].(map[string]any)["payer"] = "0x000000000000000000000000000000000000bEEF"
			})
			return ev
		}, pub, time.Now(), "is not a published key"},
		{"statement of another receipt", func() receipt.Evidence {
			ev := evidence(a)
			stmt := extension(t, evidence(b).PaymentResponse, receipt.DeliveryExtension)
			ev.PaymentResponse = editResponse(t, ev.PaymentResponse, func(m map[string]any) {
				m["extensions"].(map[string]any)[receipt.DeliveryExtension] = stmt
			})
			ev.Body = b.Body
			return ev
		}, pub, time.Now(), "delivery statement belongs to another receipt"},
		{"key not published (EIP-712)", func() receipt.Evidence { return evidence(a) }, other, time.Now(), "is not a published key"},
		{"key not published (JWS)", func() receipt.Evidence { return evidence(b) }, other, time.Now(), "is not a published key"},
		{"key rotated out", func() receipt.Evidence { return evidence(b) }, rotatedKeys.Published(), later, "was rotated out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.pub.Verify(c.ev(), c.at)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("verify: %v, want an error naming %q", err, c.want)
			}
		})
	}
	// The rotation's overlap: the old key still verifies before its date.
	if _, err := rotatedKeys.Published().Verify(evidence(b), time.Now()); err != nil {
		t.Fatalf("rotated-out key within its overlap: %v", err)
	}
}

// A 402's offers are signed over its accepts entries; a price changed in an offer breaks it.
func TestOffersSignedAndPriceForgeryRefused(t *testing.T) {
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 100_000})
	a := w.get(t, "/v1/test/echo", map[string]string{"q": "x"}, map[string]string{paywall.HeaderOfferFormat: "both"})
	pr, err := x402.DecodeRequired(a.header.Get(x402.HeaderPaymentRequired))
	if err != nil {
		t.Fatal(err)
	}
	var ext struct {
		Info struct {
			Offers []receipt.SignedOffer `json:"offers"`
		} `json:"info"`
	}
	raw, _ := json.Marshal(pr.Extensions[receipt.Extension])
	if err := json.Unmarshal(raw, &ext); err != nil || len(ext.Info.Offers) != 2*len(pr.Accepts) {
		t.Fatalf("offers %s for %d accepts (%v)", raw, len(pr.Accepts), err)
	}
	pub := w.receipts.Published()
	for _, o := range ext.Info.Offers {
		p, err := pub.VerifyOffer(o, time.Now())
		if err != nil {
			t.Fatalf("offer %s: %v", o.Format, err)
		}
		acc := pr.Accepts[o.AcceptIndex]
		if d := receipt.MatchOffer(p, pr.Resource.URL, receipt.OfferTerms{Scheme: acc.Scheme, Network: acc.Network, Asset: acc.Asset, PayTo: acc.PayTo, Amount: acc.Amount}); d != "" {
			t.Fatalf("offer %s does not match its accepts entry: %s", o.Format, d)
		}
		if p.ValidUntil < time.Now().Unix()+int64(acc.MaxTimeoutSeconds) {
			t.Fatalf("offer valid until %d does not cover the %d s timeout", p.ValidUntil, acc.MaxTimeoutSeconds)
		}
		forged := o
		switch o.Format {
		case receipt.FormatEIP712:
			pl := *o.Payload
			pl.Amount = "1"
			forged.Payload = &pl
		case receipt.FormatJWS:
			parts := strings.Split(o.Signature, ".")
			body, _ := base64.RawURLEncoding.DecodeString(parts[1])
			body = []byte(strings.Replace(string(body), `"amount":"10000"`, `"amount":"1"`, 1))
			parts[1] = base64.RawURLEncoding.EncodeToString(body)
			forged.Signature = strings.Join(parts, ".")
		}
		if _, err := pub.VerifyOffer(forged, time.Now()); err == nil {
			t.Fatalf("offer %s with its price changed verifies", o.Format)
		}
	}
}

func mustVerify(t *testing.T, pub *receipt.Published, ev receipt.Evidence) *receipt.Verified {
	t.Helper()
	v, err := pub.Verify(ev, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// keyText recovers the world's keyring credential: the test made it, so it re-reads it.
func keyText(t *testing.T, w *world) string {
	t.Helper()
	return w.receipts.CredentialText()
}

func editResponse(t *testing.T, header string, edit func(map[string]any)) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	enc, err := x402.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

func extension(t *testing.T, header, name string) any {
	t.Helper()
	var got any
	editResponse(t, header, func(m map[string]any) { got = m["extensions"].(map[string]any)[name] })
	return got
}

// The reference code of the extension (@x402/extensions 2.27, through node) extracts and
// verifies the box's offers in both formats (JWS through its did:web document), and the
// receipts of calls the reference client paid, each matched to its offer; the Go verifier
// accepts the same answers with their bodies.
func TestOfferReceiptInteropWithReferenceCode(t *testing.T) {
	testenv.NeedsNode(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; run ops/setup.sh")
	}
	if _, err := os.Stat(filepath.Join("npm", "node_modules", "@x402", "extensions", "package.json")); err != nil {
		t.Fatal("@x402/extensions is not installed in settle/npm; run ops/setup.d/x402.sh")
	}
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeSync})
	key, err := os.ReadFile(w.dev.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join("npm", "offer-receipt.mjs"), w.base+"/v1/test/echo?q=interop", strings.TrimSpace(string(key)), w.dev.Asset, "100000").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
	}
	var got struct {
		Offers []struct {
			Format        string               `json:"format"`
			Signer        string               `json:"signer"`
			Payload       receipt.OfferPayload `json:"payload"`
			MatchesAccept bool                 `json:"matchesAccept"`
		} `json:"offers"`
		Receipts []struct {
			Format, ReceiptFormat, Signer, Body, ContentType, PaymentResponse string
			Status                                                            int
			Found, MatchesOffer                                               bool
			Payload                                                           receipt.ReceiptPayload
		} `json:"receipts"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node output %s: %v", out, err)
	}
	addr := w.receipts.Current.Address
	formats := map[string]int{}
	for _, o := range got.Offers {
		formats[o.Format]++
		if !o.MatchesAccept || (o.Format == receipt.FormatEIP712 && o.Signer != addr) || o.Payload.Amount != "10000" {
			t.Errorf("offer as the reference code reads it: %+v (our signer %s)", o, addr)
		}
	}
	if formats[receipt.FormatEIP712] == 0 || formats[receipt.FormatJWS] == 0 {
		t.Fatalf("offers by format: %v", formats)
	}
	if len(got.Receipts) != 2 {
		t.Fatalf("receipts: %s", out)
	}
	for _, r := range got.Receipts {
		if r.Status != 200 || !r.Found || r.ReceiptFormat != r.Format || !r.MatchesOffer || r.Payload.Transaction == "" ||
			(r.Format == receipt.FormatEIP712 && r.Signer != addr) {
			t.Errorf("receipt as the reference code reads it: %+v", r)
			continue
		}
		ev := receipt.Evidence{PaymentResponse: r.PaymentResponse, Body: []byte(r.Body), ContentType: r.ContentType, ResourceURL: w.base + "/v1/test/echo"}
		if _, err := w.receipts.Published().Verify(ev, time.Now()); err != nil {
			t.Errorf("%s receipt the reference code accepted: %v", r.Format, err)
		}
	}
}

// A batch-settlement deposit and the vouchers after it each carry a receipt that verifies,
// whose statement names the voucher (channel and cumulative amount) and says the charge is
// pending until the channel is claimed. The ledger keeps each voucher with its receipt:
// /free/receipt serves it again by payer and voucher, and the ledger's listing (appliance
// ledger) shows it kept.
func TestBatchVouchersCarryReceipts(t *testing.T) {
	hw := newHeldWorld(t)
	pc := hw.channel(t, hw.ch.Payer, "/v1/test/echo", 5)
	for _, c := range []struct {
		name string
		req  *x402.BatchRequest
		max  string
	}{
		{"deposit", payload(t)(pc.Deposit(50*price, price, 1)), "10000"},
		{"voucher", payload(t)(pc.Voucher(2 * price)), "20000"},
	} {
		a := hw.batchCall(t, "/v1/test/echo", c.req)
		if a.status != 200 {
			t.Fatalf("%s: %d %s", c.name, a.status, a.body)
		}
		v, err := hw.receipts.Published().Verify(receipt.Evidence{PaymentResponse: a.header.Get(x402.HeaderPaymentResponse), Body: []byte(a.body),
			ContentType: a.header.Get("Content-Type"), ResourceURL: hw.base + "/v1/test/echo"}, time.Now())
		if err != nil {
			t.Fatalf("%s receipt: %v", c.name, err)
		}
		s := v.Statement
		if s.Scheme != x402.SchemeBatchSettlement || s.Nonce != pc.ID.Hex()+":"+c.max || s.Amount != "10000" || !strings.EqualFold(v.Receipt.Payer, hw.ch.PayerAddress().Hex()) {
			t.Fatalf("%s statement %+v receipt %+v", c.name, s, v.Receipt)
		}

		kept := hw.keptReceipt(t, map[string]string{"payer": v.Receipt.Payer, "nonce": s.Nonce})
		if kept["status"] != string(ledger.Voucher) || kept["settlement"] != s.Settlement || kept["transaction"] != any(s.Transaction) && s.Transaction != "" {
			t.Fatalf("%s kept %v", c.name, kept)
		}
		again, err := hw.receipts.Published().Verify(receipt.Evidence{PaymentResponse: kept["payment_response"].(string), Body: []byte(a.body),
			ResourceURL: hw.base + "/v1/test/echo"}, time.Now())
		if err != nil || again.Statement != s {
			t.Fatalf("%s kept receipt: %v %+v", c.name, err, again)
		}
		listed := false
		for _, p := range hw.f.Ledger().Recent(10) {
			listed = listed || (p.Status == ledger.Voucher && strings.EqualFold(p.Nonce, s.Nonce) && len(p.Receipt) > 0 && p.Amount == 10000)
		}
		if !listed {
			t.Fatalf("%s: the ledger does not list the voucher with its receipt: %+v", c.name, hw.f.Ledger().Recent(10))
		}
	}
	// The ledger records only a voucher committed on a channel of that payer.
	for _, forged := range []x402.KeepVoucherReceiptRequest{
		{Payer: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", Nonce: pc.ID.Hex() + ":20000"},
		{Payer: hw.ch.PayerAddress().Hex(), Nonce: pc.ID.Hex() + ":90000"},
		{Payer: hw.ch.PayerAddress().Hex(), Nonce: "0x" + strings.Repeat("ab", 32) + ":10000"},
	} {
		forged.Amount, forged.Receipt = "10000", json.RawMessage(`{}`)
		if err := hw.f.KeepVoucherReceipt(&forged); err == nil {
			t.Errorf("voucher %s of %s recorded", forged.Nonce, forged.Payer)
		}
	}
	// Another payer's address does not read the voucher's receipt.
	if r := hw.get(t, "/free/receipt", map[string]string{"payer": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "nonce": pc.ID.Hex() + ":20000"}, nil); r.status != 404 {
		t.Fatalf("voucher receipt under another payer: %d %s", r.status, r.body)
	}
}

// keptReceipt polls /free/receipt until the receipt kept just after the answer is there.
func (w *world) keptReceipt(t *testing.T, q map[string]string) map[string]any {
	t.Helper()
	for {
		r := w.get(t, "/free/receipt", q, nil)
		switch r.status {
		case 200:
			var m map[string]any
			if err := json.Unmarshal([]byte(r.body), &m); err != nil {
				t.Fatal(err)
			}
			return m
		case 404:
			time.Sleep(10 * time.Millisecond)
		default:
			t.Fatalf("/free/receipt %v: %d %s", q, r.status, r.body)
		}
	}
}

// An answer delivered before settlement has its receipt kept in the ledger with the payment:
// /free/receipt serves it by payer and nonce (pending), and once the queue has settled the
// payment, by payment identifier, re-signed with the transaction; the statement still binds
// the body first delivered. Bad input is a 400 naming the parameter.
func TestKeptReceiptFetchedAndSettledLater(t *testing.T) {
	w := newWorld(t, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: 100_000})
	const pid = "receipt-kept-identifier-0001"
	a := w.get(t, "/v1/test/echo", map[string]string{"q": "kept"}, map[string]string{
		x402.HeaderPaymentSignature: withID(t, w.header(t, w.key, "/v1/test/echo", price, nil, nil), pid)})
	if a.status != 200 {
		t.Fatalf("paid call: %d %s", a.status, a.body)
	}
	first := mustVerify(t, w.receipts.Published(), receipt.Evidence{PaymentResponse: a.header.Get(x402.HeaderPaymentResponse), Body: []byte(a.body)})
	if first.Statement.Settlement != receipt.Pending {
		t.Fatalf("optimistic answer's statement: %+v", first.Statement)
	}
	fetch := func(q map[string]string) (answer, map[string]any) {
		r := w.get(t, "/free/receipt", q, nil)
		var m map[string]any
		_ = json.Unmarshal([]byte(r.body), &m)
		return r, m
	}
	byNonce := map[string]string{"payer": first.Receipt.Payer, "nonce": first.Statement.Nonce}
	var kept map[string]any
	for r := (answer{}); r.status != 200; { // the receipt is kept just after the answer
		if r, kept = fetch(byNonce); r.status != 200 && r.status != 404 {
			t.Fatalf("/free/receipt: %d %s", r.status, r.body)
		}
		if r.status == 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if kept["settlement"] == receipt.Pending {
		if _, err := w.receipts.Published().Verify(receipt.Evidence{PaymentResponse: kept["payment_response"].(string), Body: []byte(a.body)}, time.Now()); err != nil {
			t.Fatalf("kept pending receipt: %v", err)
		}
	}
	for len(w.dev.Facilitator.Ledger().List(ledger.Settled)) != 1 {
		time.Sleep(20 * time.Millisecond)
	}
	tx := w.dev.Facilitator.Ledger().List(ledger.Settled)[0].Tx
	r, settled := fetch(map[string]string{"payment_identifier": pid})
	if r.status != 200 || settled["settlement"] != receipt.Settled || settled["resigned"] != true || settled["transaction"] != tx {
		t.Fatalf("settled receipt: %d %s (transaction %s)", r.status, r.body, tx)
	}
	v, err := w.receipts.Published().Verify(receipt.Evidence{PaymentResponse: settled["payment_response"].(string), Body: []byte(a.body),
		ResourceURL: w.base + "/v1/test/echo"}, time.Now())
	if err != nil || v.Receipt.Transaction != tx || v.Statement.Transaction != tx || v.Statement.Request != first.Statement.Request {
		t.Fatalf("re-signed receipt: %v %+v", err, v)
	}
	for _, c := range []struct {
		q      map[string]string
		status int
		param  string
	}{
		{map[string]string{"nonce": first.Statement.Nonce}, 400, `"param":"payer"`},
		{map[string]string{"payer": first.Receipt.Payer, "nonce": first.Statement.Nonce, "payment_identifier": pid}, 400, `"param":"payment_identifier"`},
		{map[string]string{"payment_identifier": "receipt-never-used-identifier"}, 404, "no payment"},
	} {
		if r, _ := fetch(c.q); r.status != c.status || !strings.Contains(r.body, c.param) {
			t.Errorf("%v: %d %s, want %d with %s", c.q, r.status, r.body, c.status, c.param)
		}
	}
}
