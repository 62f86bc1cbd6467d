package proxyd

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/internal/obs"
)

// RunDaemon is `appliance proxyd`: it opens proxyd's own state (name "proxyd") in stateDir
// unless cfg.StateDir overrides it, raises the descriptor limit (two per tunnel, plus splice
// pipes while bytes move), tunes the scheduler (TuneScheduler), and serves the proxy and the admin socket until ctx ends. pol is
// the egress policy of the tunnels (nil: built from cfg). ready, when not nil, is called once
// both listeners are open (the unit's sd_notify READY).
func RunDaemon(ctx context.Context, cfg Config, stateDir string, pol *egress.Policy, log *slog.Logger, ready func()) error {
	if cfg.StateDir != "" {
		stateDir = cfg.StateDir
	}
	if stateDir == "" {
		return fmt.Errorf("proxyd: no state directory")
	}
	if n, err := RaiseFileLimit(); err != nil {
		log.LogAttrs(ctx, slog.LevelWarn, "proxyd cannot raise the descriptor limit", slog.String(obs.KeyErr, err.Error()))
	} else {
		log.LogAttrs(ctx, slog.LevelInfo, "proxyd descriptor limit", slog.Uint64(obs.KeyNofile, n))
	}
	st, err := OpenStateStore(filepath.Clean(stateDir), log)
	if err != nil {
		return err
	}
	defer st.Close()
	sch := TuneScheduler(st)
	log.LogAttrs(ctx, slog.LevelInfo, "proxyd scheduler", slog.Int(obs.KeyProcs, sch.Procs), slog.String(obs.KeyWhy, sch.Why), slog.Bool(obs.KeyMonitorAwake, sch.MonitorAwake))
	if !sch.MonitorAwake {
		log.LogAttrs(ctx, slog.LevelWarn, "proxyd runs without GODEBUG="+MonitorGODEBUG+" (its unit sets it): each tunnel set-up costs more CPU")
	}
	s, err := New(ctx, cfg, Options{Store: st, Logger: log, Egress: pol})
	if err != nil {
		return err
	}
	return s.Run(ctx, ready)
}
