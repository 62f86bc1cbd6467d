// Package payments serves /free/payment: where a payer's own payment stands in the settle
// daemon's ledger, so an optimistic receipt (which has no transaction yet) can be followed to
// its transaction.
package payments

import (
	"context"
	"errors"
	"strconv"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/settle/ledger"
)

// Source is the ledger as the settle daemon serves it (settle/client.Client).
type Source interface {
	Payment(ctx context.Context, payer, nonce string) (ledger.Summary, error)
}

// Routes holds the family's collaborator.
type Routes struct{ src Source }

func With(src Source) *Routes { return &Routes{src: src} }

// Bind attaches the handler.
func (r *Routes) Bind(c *catalog.Catalog) error { return c.Bind("free.payment", r.status, nil) }

// Status is the answer: the payment's facts, never the signed authorization.
type Status struct {
	Payer       string   `json:"payer"`
	Nonce       string   `json:"nonce"`
	Amount      string   `json:"amount"` // atomic units
	Status      string   `json:"status"` // reserved, released, queued, broadcast, settled, failed
	Meaning     string   `json:"meaning"`
	Reason      string   `json:"reason,omitempty"`
	Transaction string   `json:"transaction,omitempty"`
	Sent        []string `json:"sent_transactions,omitempty"`
	Undelivered bool     `json:"undelivered,omitempty"`
	UpdatedAt   string   `json:"updated_at"`
	SettledAt   string   `json:"settled_at,omitempty"`
}

var meanings = map[ledger.Status]string{
	ledger.Reserved:  "verified and held while the paid work runs; not charged yet",
	ledger.Released:  "not charged: the call failed and the authorization may be used again",
	ledger.Queued:    "owed for a delivered result; waiting for the settlement queue",
	ledger.Broadcast: "settlement transaction sent, waiting to be mined",
	ledger.Settled:   "settled on chain",
	ledger.Failed:    "could not be collected; nothing was transferred",
}

// httpStatus is how the settle client reports the facilitator's answer (404: unknown payment).
type httpStatus interface{ HTTPStatus() int }

func (r *Routes) status(ctx context.Context, req *catalog.Request) (any, error) {
	payer, nonce := req.Args.Str("payer"), req.Args.Str("nonce")
	s, err := r.src.Payment(ctx, payer, nonce)
	var st httpStatus
	switch {
	case errors.As(err, &st) && st.HTTPStatus() == 404:
		return nil, apierr.NotFound("no payment from %s with nonce %s is recorded here", payer, nonce)
	case err != nil:
		return nil, &apierr.Error{Code: apierr.CodeUnavailable, Message: "the payment ledger cannot be read right now", Cause: err}
	}
	out := &Status{Payer: s.Payer, Nonce: s.Nonce, Amount: strconv.FormatUint(s.Amount, 10), Status: string(s.Status), Meaning: meanings[s.Status],
		Reason: s.Reason, Transaction: s.Tx, Sent: s.TxHashes, Undelivered: s.Undelivered, UpdatedAt: s.Updated.UTC().Format(timeFormat)}
	if !s.Settled.IsZero() {
		out.SettledAt = s.Settled.UTC().Format(timeFormat)
	}
	return out, nil
}

const timeFormat = "2006-01-02T15:04:05Z"
