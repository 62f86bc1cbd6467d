package settle

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// maxListed bounds GET /payments.
const maxListed = 1000

// maxBody bounds a request body: a payment header is at most 8 KiB, its JSON a little more.
const maxBody = 64 << 10

// Handler serves the facilitator API:
//
//	POST /verify   /settle         standard x402 facilitator bodies (exact and batch-settlement)
//	GET  /supported                standard
//	POST /reserve  /release  /complete  /abort   hold a payment while the paid work runs
//	POST /batch/reserve  /batch/release  /batch/complete   the same for a batch-settlement channel
//	GET  /revenue                  settled revenue by UTC day and route
//	GET  /stats                    payments by status, the oldest owed, gas spent by UTC day
//	GET  /channels                 batch-settlement channels, totals, gas per paid call, claimer
//	GET  /payments?limit=N         the most recently updated payments
//	GET  /payment?payer=&nonce=    one payment's status (a voucher's nonce: channelId:maxClaimable)
//	POST /payment/receipt  /voucher/receipt   keep a delivered answer's signed receipt
//
// Payment-level failures answer 200 with isValid:false / success:false, a malformed request 400,
// a chain that cannot be read 503.
func (f *Facilitator) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /supported", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, f.Supported()) })
	mux.HandleFunc("GET /revenue", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, f.Revenue()) })
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, f.Stats()) })
	mux.HandleFunc("GET /channels", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, f.ChannelsReport()) })
	mux.HandleFunc("GET /payments", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("limit"))
		if err != nil || n <= 0 || n > maxListed {
			n = maxListed
		}
		writeJSON(w, 200, f.ledger.Recent(n))
	})
	mux.HandleFunc("POST /payment/receipt", handle(f, func(_ context.Context, req *x402.KeepReceiptRequest) (struct{}, error) {
		return struct{}{}, f.KeepReceipt(req.ID, req.Receipt)
	}))
	mux.HandleFunc("POST /voucher/receipt", handle(f, func(_ context.Context, req *x402.KeepVoucherReceiptRequest) (struct{}, error) {
		return struct{}{}, f.KeepVoucherReceipt(req)
	}))
	mux.HandleFunc("GET /payment", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		rec, ok := f.ledger.Get(ledger.ID(q.Get("payer"), q.Get("nonce")))
		if h := q.Get("identifier_hash"); h != "" {
			rec, ok = f.ledger.ByIdentifier(h)
		}
		if !ok {
			writeJSON(w, 404, errorBody{"no payment with this payer and nonce"})
			return
		}
		writeJSON(w, 200, rec.Summary())
	})
	mux.HandleFunc("POST /verify", byScheme(f, f.Verify, f.BatchVerify))
	// A transaction outlives a client that hangs up.
	mux.HandleFunc("POST /settle", byScheme(f, f.Settle, detached(f.BatchSettle)))
	mux.HandleFunc("POST /batch/reserve", handle(f, f.BatchReserve))
	mux.HandleFunc("POST /batch/release", handle(f, func(ctx context.Context, req *x402.ReleaseRequest) (struct{}, error) {
		return struct{}{}, f.BatchRelease(ctx, req.ID)
	}))
	mux.HandleFunc("POST /batch/complete", handle(f, detached(f.BatchComplete)))
	mux.HandleFunc("POST /reserve", handle(f, f.Reserve))
	mux.HandleFunc("POST /release", handle(f, func(ctx context.Context, req *x402.ReleaseRequest) (struct{}, error) {
		return struct{}{}, f.Release(ctx, req.ID)
	}))
	// The settlement outlives a client that hangs up: the money is owed either way.
	mux.HandleFunc("POST /complete", handle(f, detached(func(ctx context.Context, req *x402.CompleteRequest) (x402.SettlementResponse, error) {
		return f.Complete(x402.WithBox(ctx, req.Box), req.ID, req.Mode)
	})))
	mux.HandleFunc("POST /abort", handle(f, detached(func(ctx context.Context, req *x402.AbortRequest) (x402.SettlementResponse, error) {
		return f.Abort(ctx, req.ID)
	})))
	return mux
}

type errorBody struct {
	Error string `json:"error"`
}

func (f *Facilitator) reply(w http.ResponseWriter, v any, err error) {
	switch {
	case err == nil:
		writeJSON(w, 200, v)
	case errors.Is(err, ErrState):
		writeJSON(w, 409, errorBody{err.Error()})
	case errors.Is(err, ledger.ErrUnknown):
		writeJSON(w, 404, errorBody{err.Error()})
	case errors.Is(err, errCompleting):
		writeJSON(w, 503, errorBody{err.Error()})
	default:
		f.log.Warn("facilitator call failed", keyErr, err)
		writeJSON(w, 503, errorBody{"the chain could not be read or written; try again"})
	}
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	if err := dec.Decode(v); err != nil {
		writeJSON(w, 400, errorBody{"request body is not the expected JSON: " + err.Error()})
		return false
	}
	return true
}

// handle answers a POST whose body is a T with call's result.
func handle[T, R any](f *Facilitator, call func(context.Context, *T) (R, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req T
		if !readJSON(w, r, &req) {
			return
		}
		res, err := call(r.Context(), &req)
		f.reply(w, res, err)
	}
}

// detached runs call past a client that hangs up.
func detached[T, R any](call func(context.Context, *T) (R, error)) func(context.Context, *T) (R, error) {
	return func(ctx context.Context, req *T) (R, error) { return call(context.WithoutCancel(ctx), req) }
}

// byScheme answers a /verify or /settle body with exact's call, or batch's when its requirements
// name the batch-settlement scheme (whose payload has another shape than exact's). The body is
// decoded once; its payload and requirements are kept raw until the scheme is known.
func byScheme[E, B any](f *Facilitator, exact func(context.Context, *x402.FacilitatorRequest) (E, error),
	batch func(context.Context, *x402.BatchRequest) (B, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			X402Version         int             `json:"x402Version"`
			PaymentPayload      json.RawMessage `json:"paymentPayload"`
			PaymentRequirements json.RawMessage `json:"paymentRequirements"`
		}
		if !readJSON(w, r, &body) {
			return
		}
		var peek struct {
			Scheme string `json:"scheme"`
		}
		_ = json.Unmarshal(body.PaymentRequirements, &peek) // a malformed part is refused below
		if peek.Scheme == x402.SchemeBatchSettlement {
			req := x402.BatchRequest{X402Version: body.X402Version}
			if decodeJSON(w, body.PaymentPayload, &req.PaymentPayload) && decodeJSON(w, body.PaymentRequirements, &req.PaymentRequirements) {
				res, err := batch(r.Context(), &req)
				f.reply(w, res, err)
			}
			return
		}
		req := x402.FacilitatorRequest{X402Version: body.X402Version}
		if decodeJSON(w, body.PaymentPayload, &req.PaymentPayload) && decodeJSON(w, body.PaymentRequirements, &req.PaymentRequirements) {
			res, err := exact(r.Context(), &req)
			f.reply(w, res, err)
		}
	}
}

// decodeJSON decodes one part of a body; an absent part leaves v as it is.
func decodeJSON(w http.ResponseWriter, body []byte, v any) bool {
	if len(body) == 0 {
		return true
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeJSON(w, 400, errorBody{"request body is not the expected JSON: " + err.Error()})
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ListenUnix listens on a Unix socket, replacing a stale socket file, readable by the owner
// and group only (the API runs in the same group).
func ListenUnix(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		_ = os.Remove(path)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o660); err != nil {
		_ = l.Close()
		return nil, err
	}
	return l, nil
}

// Serve serves h on every listener until ctx ends, then shuts down gracefully. A Unix socket
// (the gate's way to this daemon) is served by socketServer, anything else by net/http.
func Serve(ctx context.Context, h http.Handler, log *slog.Logger, ls ...net.Listener) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: headerTimeout, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	sock := newSocketServer(h, log)
	errc := make(chan error, len(ls))
	for _, l := range ls {
		if isUnix(l) {
			go func() { errc <- sock.serve(context.WithoutCancel(ctx), l) }()
			continue
		}
		go func() { errc <- srv.Serve(l) }()
	}
	closeListeners := func() {
		for _, l := range ls {
			if isUnix(l) {
				_ = l.Close()
			}
		}
	}
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		closeListeners()
		err := srv.Shutdown(sctx)
		if serr := sock.shutdown(sctx); err == nil {
			err = serr
		}
		return err
	case err := <-errc:
		_ = srv.Close()
		closeListeners()
		sock.close()
		return err
	}
}
