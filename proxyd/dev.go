package proxyd

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/peage/appliance/internal/egress"
)

// StartDev runs proxyd in process for `appliance dev`: its own state (journal "proxyd") in
// stateDir, the proxy on cfg.Listen (set it to loopback), the admin socket in stateDir, and,
// so that a sale works offline, a loopback IP-echo as the exit check's endpoint (it answers
// country FR and ASN AS0 "dev loopback exit"). Sales then travel the production path:
// listener, probe key, egress policy, dialer. allow adds exact HOST:PORT targets that pages
// and tunnels may reach although local (--allow-egress): each passes both the egress policy
// and the port rule, for that host only. learned is the process's set of learned public
// addresses (the API's policies share it).
// stop ends everything and writes every meter.
func StartDev(ctx context.Context, cfg Config, stateDir string, allow []string, learned *egress.Learned, log *slog.Logger) (*Server, func() error, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	echoLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	echo := &http.Server{Handler: DevEchoHandler("FR", "AS0", "dev loopback exit"), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = echo.Serve(echoLn) }()
	ea := echoLn.Addr().String()
	cfg.EchoURLs = []string{"http://" + ea + "/json"}
	cfg.ExpectedCountry, cfg.ExpectedASNs = "FR", nil
	// An allowed HOST:PORT passes the port rule too, so the echo's exact address is all that
	// opens; its port stays closed on every other host.
	cfg.AllowEgress = append(append(cfg.AllowEgress, allow...), ea)
	if cfg.AdminSocket == "" || cfg.AdminSocket == DefaultConfig().AdminSocket {
		cfg.AdminSocket = filepath.Join(stateDir, "proxyd.sock")
	}
	if cfg.PublicHost == "" {
		cfg.PublicHost, _, _ = net.SplitHostPort(cfg.Listen)
	}
	st, err := OpenStateStore(stateDir, log)
	if err != nil {
		_ = echo.Close()
		return nil, nil, err
	}
	s, err := New(ctx, cfg, Options{Store: st, Logger: log, Learned: learned})
	if err != nil {
		_ = echo.Close()
		_ = st.Close()
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	_, wait, err := s.Start(ctx)
	if err != nil {
		cancel()
		_ = s.Close()
		_ = echo.Close()
		_ = st.Close()
		return nil, nil, err
	}
	return s, func() error {
		cancel()
		return errors.Join(wait(), echo.Close(), st.Close())
	}, nil
}
