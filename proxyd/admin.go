package proxyd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/proxyd/client"
)

var _ client.Service = (*Server)(nil)

// AdminHandler is the admin API the api daemon sells through (see proxyd/client). It is only
// ever served on a Unix socket whose file mode keeps other local users out.
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /sell", func(w http.ResponseWriter, r *http.Request) {
		var in client.SellRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&in); err != nil {
			writeAdminErr(w, &client.Error{Code: client.CodeBadRequest, Message: "body must be {\"gb\":N}"})
			return
		}
		sale, err := s.Sell(r.Context(), in.GB)
		writeAdmin(w, sale, err)
	})
	mux.HandleFunc("POST /revoke", func(w http.ResponseWriter, r *http.Request) {
		var in client.RevokeRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&in); err != nil || in.Key == "" {
			writeAdminErr(w, &client.Error{Code: client.CodeBadRequest, Message: "body must be {\"key\":\"...\"}"})
			return
		}
		writeAdmin(w, struct{}{}, s.Revoke(r.Context(), in.Key))
	})
	mux.HandleFunc("GET /usage", func(w http.ResponseWriter, r *http.Request) {
		u, err := s.Usage(r.Context(), r.Header.Get(client.KeyHeader))
		writeAdmin(w, u, err)
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		st, err := s.Status(r.Context())
		writeAdmin(w, st, err)
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		writeAdmin(w, s.Stats(), nil)
	})
	return mux
}

func writeAdmin(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeAdminErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeAdminErr(w http.ResponseWriter, err error) {
	var ce *client.Error
	if !errors.As(err, &ce) {
		ce = &client.Error{Code: client.CodeInternal, Message: err.Error()}
	}
	status := http.StatusInternalServerError
	switch ce.Code {
	case client.CodeBadRequest:
		status = http.StatusBadRequest
	case client.CodeUnknownKey:
		status = http.StatusNotFound
	case client.CodeExitDown, client.CodeUnavailable:
		status = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": ce})
}

// ListenAdmin creates the admin socket (mode 0660, stale file replaced).
func ListenAdmin(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, err
	}
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("proxyd: admin socket: %w", err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return ln, nil
}

// ServeAdmin serves the admin API on ln until ctx ends.
func (s *Server) ServeAdmin(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.AdminHandler(),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	return serveUntil(ctx, hs, ln)
}

// Run serves the proxy and the admin socket until ctx ends or a listener fails; then it
// closes every tunnel and writes every meter. ready, when not nil, is called once both
// listeners are open.
func (s *Server) Run(ctx context.Context, ready func()) error {
	_, wait, err := s.Start(ctx)
	if err != nil {
		return err
	}
	if ready != nil {
		ready()
	}
	return wait()
}

// Start listens on Config.Listen (and on Config.AdminSocket when set) and serves in the
// background until ctx ends; wait returns once both stopped and every meter is written. The
// listener is bound before Start returns, so a sale right after it can check the exit.
func (s *Server) Start(ctx context.Context) (addr string, wait func() error, err error) {
	ln, err := Listen(ctx, s.cfg.Listen)
	if err != nil {
		return "", nil, fmt.Errorf("proxyd: listen: %w", err)
	}
	var aln net.Listener
	if s.cfg.AdminSocket != "" {
		if aln, err = ListenAdmin(s.cfg.AdminSocket); err != nil {
			_ = ln.Close()
			return "", nil, err
		}
	}
	s.bindProbe(ln)
	// Either listener failing stops the other.
	ctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 2)
	n := 1
	go func() { errc <- s.Serve(ctx, ln); cancel() }()
	if aln != nil {
		n++
		go func() { errc <- s.ServeAdmin(ctx, aln); cancel() }()
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "proxyd listening", slog.String(obs.KeyAddr, ln.Addr().String()), slog.String(obs.KeyAdminSocket, s.cfg.AdminSocket))
	return ln.Addr().String(), func() error {
		var errs []error
		for i := 0; i < n; i++ {
			errs = append(errs, <-errc)
		}
		cancel()
		return errors.Join(append(errs, s.Close())...)
	}, nil
}
