// Package sdnotify tells systemd how a daemon is doing (sd_notify): READY once its listeners
// are open and its dependencies usable, WATCHDOG while an internal liveness check passes, and
// STOPPING when it begins to shut down. Outside systemd (no NOTIFY_SOCKET) every call is a
// no-op, so the daemons call it unconditionally. It is the one package that imports
// go-systemd.
package sdnotify

import (
	"context"
	"log/slog"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"

	"github.com/peage/appliance/internal/obs"
)

// Ready says the daemon serves: with Type=notify the unit becomes active only now, so
// ordering (After=) and the update health gate mean "answering", not "forked".
func Ready(log *slog.Logger) { send(log, daemon.SdNotifyReady) }

// Stopping says the daemon is draining after SIGTERM, so systemd shows "deactivating" and
// waits TimeoutStopSec= rather than treating the slow exit as a hang.
func Stopping(log *slog.Logger) { send(log, daemon.SdNotifyStopping) }

// Status sets the one-line status `systemctl status` shows (e.g. what first-boot setup lacks).
func Status(log *slog.Logger, text string) { send(log, "STATUS="+text) }

func send(log *slog.Logger, state string) {
	if _, err := daemon.SdNotify(false, state); err != nil {
		log.Warn("sd_notify failed", slog.String(obs.KeyErr, err.Error()))
	}
}

// CheckTimeout bounds one liveness check: a check that takes longer counts as failed.
const CheckTimeout = 5 * time.Second

// Watchdog runs until ctx ends. When systemd's watchdog is on (WatchdogSec=, seen as
// WATCHDOG_USEC), it runs check every half period and sends WATCHDOG=1 only when check passes,
// so a daemon whose event loop or store is wedged misses its pings and is restarted; a ticker
// that pinged blindly would keep a hung process alive. Without a watchdog it returns at once.
func Watchdog(ctx context.Context, log *slog.Logger, check func(context.Context) error) {
	period, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		log.Warn("watchdog settings unreadable; not pinging", slog.String(obs.KeyErr, err.Error()))
		return
	}
	if period <= 0 {
		return
	}
	t := time.NewTicker(period / 2)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, CheckTimeout)
		err := check(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Error("liveness check failed; withholding the watchdog ping", slog.String(obs.KeyErr, err.Error()))
		} else {
			send(log, daemon.SdNotifyWatchdog)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Run is the usual sequence for a daemon whose listeners are open: READY, then the watchdog
// until ctx ends, then STOPPING. It returns once STOPPING is sent.
func Run(ctx context.Context, log *slog.Logger, check func(context.Context) error) {
	Ready(log)
	Watchdog(ctx, log, check)
	<-ctx.Done()
	Stopping(log)
}
