package paywall

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/settle/x402"
)

// paid is what a paid call's receipt and delivery statement say about its payment.
type paid struct {
	scheme, network, amount, payer, transaction, nonce string
}

// ReceiptKeeper is a facilitator that stores a delivered payment's signed receipt with it
// (settle/client.Client: in the settle daemon's ledger).
type ReceiptKeeper interface {
	KeepReceipt(ctx context.Context, id string, receipt json.RawMessage) error
}

// keepReceipt hands a delivered payment's signed extensions to the ledger, after the answer:
// the buyer has them already, the copy is for fetching them again.
func (g *X402) keepReceipt(ctx context.Context, id string, ext map[string]any) {
	k, ok := g.f.(ReceiptKeeper)
	if !ok || ext == nil {
		return
	}
	b, err := json.Marshal(ext)
	if err != nil {
		return
	}
	go func() {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := k.KeepReceipt(kctx, id, b); err != nil {
			g.log.Warn("receipt not kept in the ledger", keyPayment, id, keyErr, err)
		}
	}()
}

// VoucherReceiptKeeper is a facilitator that records a delivered batch-settlement voucher
// with its signed receipt (settle/client.Client), its ledger's channels keeping no record per
// voucher.
type VoucherReceiptKeeper interface {
	KeepVoucherReceipt(ctx context.Context, req x402.KeepVoucherReceiptRequest) error
}

// keepVoucherReceipt hands a delivered voucher's signed extensions to the ledger, after the
// answer, as keepReceipt does a payment's.
func (g *X402) keepVoucherReceipt(ctx context.Context, k VoucherReceiptKeeper, req x402.KeepVoucherReceiptRequest, ext map[string]any) {
	if ext == nil || req.Nonce == "" {
		return
	}
	b, err := json.Marshal(ext)
	if err != nil {
		return
	}
	req.Receipt = b
	go func() {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := k.KeepVoucherReceipt(kctx, req); err != nil {
			g.log.Warn("voucher receipt not kept in the ledger", keyPayment, req.Nonce, keyErr, err)
		}
	}()
}

type signedReceipt struct {
	ext map[string]any
	err error
}

// signAhead signs the receipt of p in the background; the channel holds its result.
func (g *X402) signAhead(call *Call, p paid, out any) <-chan signedReceipt {
	c := make(chan signedReceipt, 1)
	go func() {
		ext, err := g.receiptExtensions(call, p, out)
		c <- signedReceipt{ext, err}
	}()
	return c
}

// settledExtensions are the receipt's extensions of a call settled as final: the ones signed
// ahead (early, nil when none was) if the settlement confirmed every fact they state, else
// signed now.
func (g *X402) settledExtensions(call *Call, early <-chan signedReceipt, ahead, final paid, out any) (map[string]any, error) {
	if early != nil && final == ahead {
		r := <-early
		return r.ext, r.err
	}
	return g.receiptExtensions(call, final, out)
}

// receiptExtensions signs the receipt of a delivered paid call (extension offer-receipt) and
// the delivery statement binding it to the request and to out, the body delivered; nil when
// the gate has no receipt keys.
func (g *X402) receiptExtensions(call *Call, p paid, out any) (map[string]any, error) {
	if g.receipts == nil {
		return nil, nil
	}
	raw, ok := out.(*catalog.Raw)
	if !ok {
		return nil, fmt.Errorf("receipt of %s: the result is %T, not an encoded body", call.Entry.ID, out)
	}
	format := ParseOfferFormat(call.Request.HeaderValue(HeaderOfferFormat))
	issuedAt := g.now().Unix()
	signed, err := g.receipts.Receipt(format.receiptFormat(), receipt.ReceiptPayload{Network: p.network,
		ResourceURL: call.ResourceURL, Payer: p.payer, IssuedAt: issuedAt, Transaction: p.transaction})
	if err != nil {
		return nil, err
	}
	settlement := receipt.Settled
	if p.transaction == "" {
		settlement = receipt.Pending
	}
	status := raw.Status
	if status == 0 {
		status = 200
	}
	method, path := call.Request.Method, call.Request.Path
	if path == "" {
		path = call.Entry.Path
	}
	stmt, err := g.receipts.Statement(signed, receipt.Statement{
		ResourceURL: call.ResourceURL, Network: p.network, Scheme: p.scheme, Amount: p.amount, Payer: p.payer,
		Nonce: p.nonce, Settlement: settlement, Transaction: p.transaction, IssuedAt: issuedAt,
		Request: receipt.StatementRequest{Method: method, Path: path, ParamsSHA256: receipt.SHA256Hex([]byte(call.Key))},
		Response: receipt.StatementResponse{Status: status, ContentType: raw.ContentType, Length: len(raw.Body),
			SHA256: receipt.SHA256Hex(raw.Body)},
		Subject: subject(call.Entry, raw),
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{
		receipt.Extension:         map[string]any{"info": map[string]any{"receipt": signed}},
		receipt.DeliveryExtension: map[string]any{"info": map[string]any{"statement": stmt}},
	}, nil
}

// subject names what a result with a lasting side effect handed out: a proxy package is bound
// by its key's SHA-256 (the key itself stays secret) and its terms, an inbox or a page by its
// id; nil for other results.
func subject(e *catalog.Entry, raw *catalog.Raw) *receipt.Subject {
	if raw.OnRevoke == nil {
		return nil
	}
	var body map[string]any
	if json.Unmarshal(raw.Body, &body) != nil {
		return &receipt.Subject{Kind: e.ID}
	}
	if key, ok := body["key"].(string); ok && key != "" {
		var terms []string
		for _, f := range []string{"tier", "gb", "valid_days", "expires_at"} {
			if v, ok := body[f]; ok {
				terms = append(terms, fmt.Sprintf("%s=%v", f, v))
			}
		}
		return &receipt.Subject{Kind: "proxy-package", KeySHA256: receipt.SHA256Hex([]byte(key)), Terms: strings.Join(terms, " ")}
	}
	id, _ := body["id"].(string)
	return &receipt.Subject{Kind: e.ID, ID: id}
}
