package client

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/settle/x402"
)

// Standard lets the gate use a facilitator that speaks only the standard x402 API (/verify,
// /settle), such as a hosted one. It keeps reservations in this process's memory: a payment is
// verified before the work and settled (synchronously, whatever the mode) after it, so a
// result is never delivered before its payment is on chain. Without the settle daemon's
// durable ledger, a crash of the API between work and settlement loses that payment, and
// optimistic settlement is not offered; the local daemon is the default for that.
type Standard struct {
	C   *Client
	Now func() time.Time

	mu          sync.Mutex
	held        map[string]*held  // payer:nonce → reservation
	identifiers map[string]string // payment identifier hash → payer:nonce
}

type held struct {
	req         x402.FacilitatorRequest
	key         string
	identifier  string
	payload     string
	payer       string
	validBefore int64
	done        *x402.SettlementResponse
}

func (s *Standard) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Reserve verifies through /verify and holds the nonce here. As with the settle daemon,
// nothing in the payload is trusted before verification, and a replay needs the payment
// identifier with the same payload and request.
func (s *Standard) Reserve(ctx context.Context, req *x402.ReserveRequest) (x402.ReserveResponse, error) {
	s.mu.Lock()
	if s.held == nil {
		s.held, s.identifiers = map[string]*held{}, map[string]string{}
	}
	s.expire()
	if id, ok := s.identifiers[req.IdentifierHash]; ok && req.IdentifierHash != "" {
		h := s.held[id]
		if h.payload == req.PayloadHash && h.key == req.Key && pending(h.done) {
			// The retry of a call whose settlement was broadcast but not confirmed: ask again
			// (the facilitator reconciles against the broadcast transaction, never sends a
			// second one) and answer what it says now.
			s.mu.Unlock()
			res, err := s.C.Settle(ctx, &h.req)
			if err != nil {
				return x402.ReserveResponse{}, err
			}
			s.mu.Lock()
			h.done = &res
		}
		res := s.identified(h, id, req)
		s.mu.Unlock()
		return res, nil
	}
	s.mu.Unlock()
	a := req.PaymentPayload.Payload.Authorization
	vb, err := strconv.ParseInt(a.ValidBefore, 10, 64)
	if err == nil && vb < s.now().Add(time.Duration(req.WorkSeconds)*time.Second).Unix() {
		return x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{InvalidReason: x402.ReasonValidBefore}}, nil
	}
	v, err := s.C.Verify(ctx, &req.FacilitatorRequest)
	if err != nil || !v.IsValid {
		return x402.ReserveResponse{VerifyResponse: v}, err
	}
	id := strings.ToLower(a.From) + ":" + strings.ToLower(a.Nonce)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.held[id]; taken { // a concurrent copy verified at the same time
		return x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{InvalidReason: x402.ReasonNonceUsed, Payer: v.Payer}}, nil
	}
	if other, ok := s.identifiers[req.IdentifierHash]; ok && req.IdentifierHash != "" {
		return s.identified(s.held[other], other, req), nil
	}
	s.held[id] = &held{req: req.FacilitatorRequest, key: req.Key, identifier: req.IdentifierHash, payload: req.PayloadHash,
		payer: v.Payer, validBefore: vb}
	if req.IdentifierHash != "" {
		s.identifiers[req.IdentifierHash] = id
	}
	return x402.ReserveResponse{VerifyResponse: v, ID: id}, nil
}

// identified answers a payment identifier already held. Called with s.mu held.
func (s *Standard) identified(h *held, id string, req *x402.ReserveRequest) x402.ReserveResponse {
	res := x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{Payer: h.payer}}
	switch {
	case h.payload != req.PayloadHash || h.key != req.Key:
		res.Conflict, res.InvalidReason = true, x402.ReasonIdentifierConflict
	case h.done == nil:
		res.Conflict, res.InvalidReason = true, x402.ReasonInProgress
	case !h.done.Success && !pending(h.done):
		res.InvalidReason = h.done.ErrorReason
	default:
		done := *h.done
		res.Replay, res.ID = &done, id
	}
	return res
}

// expire forgets reservations whose authorization has expired: they can be neither settled
// nor replayed. Called with s.mu held.
func (s *Standard) expire() {
	now := s.now().Unix()
	for k, h := range s.held {
		if h.validBefore < now {
			delete(s.held, k)
			if s.identifiers[h.identifier] == k {
				delete(s.identifiers, h.identifier)
			}
		}
	}
}

func (s *Standard) drop(id string) {
	s.mu.Lock()
	if h, ok := s.held[id]; ok {
		delete(s.held, id)
		if s.identifiers[h.identifier] == id {
			delete(s.identifiers, h.identifier)
		}
	}
	s.mu.Unlock()
}

// Release forgets the reservation.
func (s *Standard) Release(_ context.Context, id string) error {
	s.drop(id)
	return nil
}

// Complete settles through /settle and remembers the outcome for replays. A failed settlement
// frees the nonce: the authorization was not used on chain.
func (s *Standard) Complete(ctx context.Context, id, _ string) (x402.SettlementResponse, error) {
	s.mu.Lock()
	h, ok := s.held[id]
	s.mu.Unlock()
	if !ok {
		return x402.SettlementResponse{}, &Error{Status: 404, Message: "no reservation " + id}
	}
	res, err := s.C.Settle(ctx, &h.req)
	if err == nil && pending(&res) {
		// A broadcast whose receipt the facilitator has not seen yet: ask once more with the
		// same request, as the official resource servers do (settleWithPendingRetry); the
		// facilitator reconciles it against the transaction already sent.
		res, err = s.C.Settle(ctx, &h.req)
	}
	if err != nil {
		return res, err
	}
	s.mu.Lock()
	h.done = &res
	s.mu.Unlock()
	return res, nil
}

// pending reports whether a settlement outcome is x402's settlement_pending: a transaction was
// broadcast and its receipt is not yet seen. It is neither a success (nothing is delivered on
// it) nor a failure (the nonce may still be spent: the payment is never offered again).
func pending(r *x402.SettlementResponse) bool {
	return r != nil && !r.Success && r.ErrorReason == x402.ReasonSettlementPending && r.Transaction != ""
}

// Abort forgets a reservation whose result was not delivered. The remote facilitator has no
// notion of it: a settlement it made stays made, and the remote's own records are the truth.
func (s *Standard) Abort(_ context.Context, id string) (x402.SettlementResponse, error) {
	s.mu.Lock()
	h, ok := s.held[id]
	s.mu.Unlock()
	if ok && h.done != nil {
		return *h.done, nil
	}
	s.drop(id)
	return x402.SettlementResponse{ErrorReason: x402.ReasonSettlementPending}, nil
}
