package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/peage/appliance/internal/sdnotify"
)

// notifier tells systemd about one daemon: start it with the daemon's context and liveness
// check, call ready once the listeners are open (READY=1, then WATCHDOG=1 while live passes),
// and defer stop, which waits until STOPPING=1 is sent.
type notifier struct {
	ctx    context.Context
	cancel context.CancelFunc
	log    *slog.Logger
	live   func(context.Context) error
	wg     sync.WaitGroup
	once   sync.Once
}

func newNotifier(ctx context.Context, log *slog.Logger, live func(context.Context) error) *notifier {
	ctx, cancel := context.WithCancel(ctx)
	return &notifier{ctx: ctx, cancel: cancel, log: log, live: live}
}

func (n *notifier) ready() {
	n.once.Do(func() {
		n.wg.Add(1)
		go func() { defer n.wg.Done(); sdnotify.Run(n.ctx, n.log, n.live) }()
	})
}

// stop ends the watchdog (the daemon returned, whether on SIGTERM or an error).
func (n *notifier) stop() {
	n.cancel()
	n.wg.Wait()
}
