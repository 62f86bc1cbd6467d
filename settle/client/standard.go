package client

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/settle/x402"
)

// Standard lets the gate use a facilitator that speaks only the standard x402 API (/verify,
// /settle), such as a hosted one. It keeps reservations in this process's memory: a payment is
// verified before the work and settled (synchronously, whatever the mode) after it. Without the
// settle daemon's durable ledger, a crash of the API between work and settlement loses that
// payment, and optimistic settlement is not offered; the local daemon is the default for that.
type Standard struct {
	C   *Client
	Now func() time.Time

	mu   sync.Mutex
	held map[string]*held
}

type held struct {
	req         x402.FacilitatorRequest
	key         string
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

// Reserve verifies through /verify and holds the nonce here.
func (s *Standard) Reserve(ctx context.Context, req *x402.ReserveRequest) (x402.ReserveResponse, error) {
	a := req.PaymentPayload.Payload.Authorization
	id := strings.ToLower(a.From) + ":" + strings.ToLower(a.Nonce)
	s.mu.Lock()
	if s.held == nil {
		s.held = map[string]*held{}
	}
	now := s.now().Unix()
	for k, h := range s.held { // an expired authorization can be neither settled nor replayed
		if h.validBefore < now {
			delete(s.held, k)
		}
	}
	if h, ok := s.held[id]; ok {
		res := x402.ReserveResponse{VerifyResponse: x402.VerifyResponse{InvalidReason: x402.ReasonNonceUsed, Payer: h.payer}}
		if h.done != nil && h.done.Success && h.key == req.Key {
			done := *h.done
			res.Replay, res.ID = &done, id
		}
		s.mu.Unlock()
		return res, nil
	}
	vb := int64(0)
	if n, ok := parseInt(a.ValidBefore); ok {
		vb = n
	}
	h := &held{req: req.FacilitatorRequest, key: req.Key, validBefore: vb}
	s.held[id] = h // claimed before the slow verification, so a concurrent copy is refused
	s.mu.Unlock()
	v, err := s.C.Verify(ctx, &req.FacilitatorRequest)
	if err != nil || !v.IsValid {
		s.drop(id)
		return x402.ReserveResponse{VerifyResponse: v}, err
	}
	s.mu.Lock()
	h.payer = v.Payer
	s.mu.Unlock()
	return x402.ReserveResponse{VerifyResponse: v, ID: id}, nil
}

func (s *Standard) drop(id string) {
	s.mu.Lock()
	delete(s.held, id)
	s.mu.Unlock()
}

// Release forgets the reservation.
func (s *Standard) Release(_ context.Context, id string) error {
	s.drop(id)
	return nil
}

// Complete settles through /settle and remembers the outcome for replays.
func (s *Standard) Complete(ctx context.Context, id, _ string) (x402.SettlementResponse, error) {
	s.mu.Lock()
	h, ok := s.held[id]
	s.mu.Unlock()
	if !ok {
		return x402.SettlementResponse{}, &Error{Status: 404, Message: "no reservation " + id}
	}
	res, err := s.C.Settle(ctx, &h.req)
	if err != nil {
		return res, err
	}
	s.mu.Lock()
	h.done = &res
	s.mu.Unlock()
	return res, nil
}

func parseInt(s string) (int64, bool) {
	var n int64
	if s == "" || len(s) > 18 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
