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
//	GET  /payment?payer=&nonce=    one payment's status
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
	mux.HandleFunc("GET /payment", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		rec, ok := f.ledger.Get(ledger.ID(q.Get("payer"), q.Get("nonce")))
		if !ok {
			writeJSON(w, 404, errorBody{"no payment with this payer and nonce"})
			return
		}
		writeJSON(w, 200, rec.Summary())
	})
	mux.HandleFunc("POST /verify", func(w http.ResponseWriter, r *http.Request) {
		body, batch, ok := readScheme(w, r)
		if !ok {
			return
		}
		if batch {
			var req x402.BatchRequest
			if decodeJSON(w, body, &req) {
				res, err := f.BatchVerify(r.Context(), &req)
				f.reply(w, res, err)
			}
			return
		}
		var req x402.FacilitatorRequest
		if decodeJSON(w, body, &req) {
			res, err := f.Verify(r.Context(), &req)
			f.reply(w, res, err)
		}
	})
	mux.HandleFunc("POST /settle", func(w http.ResponseWriter, r *http.Request) {
		body, batch, ok := readScheme(w, r)
		if !ok {
			return
		}
		if batch {
			var req x402.BatchRequest
			if decodeJSON(w, body, &req) {
				// A transaction outlives a client that hangs up.
				res, err := f.BatchSettle(context.WithoutCancel(r.Context()), &req)
				f.reply(w, res, err)
			}
			return
		}
		var req x402.FacilitatorRequest
		if decodeJSON(w, body, &req) {
			res, err := f.Settle(r.Context(), &req)
			f.reply(w, res, err)
		}
	})
	mux.HandleFunc("POST /batch/reserve", func(w http.ResponseWriter, r *http.Request) {
		var req x402.BatchRequest
		if !readJSON(w, r, &req) {
			return
		}
		res, err := f.BatchReserve(r.Context(), &req)
		f.reply(w, res, err)
	})
	mux.HandleFunc("POST /batch/release", func(w http.ResponseWriter, r *http.Request) {
		var req x402.ReleaseRequest
		if !readJSON(w, r, &req) {
			return
		}
		f.reply(w, struct{}{}, f.BatchRelease(r.Context(), req.ID))
	})
	mux.HandleFunc("POST /batch/complete", func(w http.ResponseWriter, r *http.Request) {
		var req x402.BatchCompleteRequest
		if !readJSON(w, r, &req) {
			return
		}
		res, err := f.BatchComplete(context.WithoutCancel(r.Context()), &req)
		f.reply(w, res, err)
	})
	mux.HandleFunc("POST /reserve", func(w http.ResponseWriter, r *http.Request) {
		var req x402.ReserveRequest
		if !readJSON(w, r, &req) {
			return
		}
		res, err := f.Reserve(r.Context(), &req)
		f.reply(w, res, err)
	})
	mux.HandleFunc("POST /release", func(w http.ResponseWriter, r *http.Request) {
		var req x402.ReleaseRequest
		if !readJSON(w, r, &req) {
			return
		}
		f.reply(w, struct{}{}, f.Release(r.Context(), req.ID))
	})
	mux.HandleFunc("POST /complete", func(w http.ResponseWriter, r *http.Request) {
		var req x402.CompleteRequest
		if !readJSON(w, r, &req) {
			return
		}
		// The settlement outlives a client that hangs up: the money is owed either way.
		res, err := f.Complete(context.WithoutCancel(r.Context()), req.ID, req.Mode)
		f.reply(w, res, err)
	})
	mux.HandleFunc("POST /abort", func(w http.ResponseWriter, r *http.Request) {
		var req x402.AbortRequest
		if !readJSON(w, r, &req) {
			return
		}
		res, err := f.Abort(context.WithoutCancel(r.Context()), req.ID)
		f.reply(w, res, err)
	})
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

// readScheme reads a /verify or /settle body and tells whether it is for the batch-settlement
// scheme (its requirements name it), whose payload has another shape than exact's.
func readScheme(w http.ResponseWriter, r *http.Request) ([]byte, bool, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		writeJSON(w, 400, errorBody{"request body could not be read: " + err.Error()})
		return nil, false, false
	}
	var peek struct {
		PaymentRequirements struct {
			Scheme string `json:"scheme"`
		} `json:"paymentRequirements"`
	}
	_ = json.Unmarshal(body, &peek) // a malformed body is refused by the decode that follows
	return body, peek.PaymentRequirements.Scheme == x402.SchemeBatchSettlement, true
}

func decodeJSON(w http.ResponseWriter, body []byte, v any) bool {
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

// Serve serves h on every listener until ctx ends, then shuts down gracefully.
func Serve(ctx context.Context, h http.Handler, log *slog.Logger, ls ...net.Listener) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	errc := make(chan error, len(ls))
	for _, l := range ls {
		go func() { errc <- srv.Serve(l) }()
	}
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	case err := <-errc:
		_ = srv.Close()
		return err
	}
}
