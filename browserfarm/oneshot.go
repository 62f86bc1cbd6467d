package browserfarm

import (
	"context"
	"log/slog"
	"time"

	"github.com/peage/appliance/internal/egress"
)

// OneShot runs one task on a browser launched for it alone and killed afterwards: no pool,
// no warm tab. It is the baseline the benchmark compares the farm with, and a way for
// operators to check an installation without starting the farm.
func OneShot(ctx context.Context, cfg Config, policy *egress.Policy, t Task) (*Result, error) {
	cfg = cfg.withDefaults()
	f := &Farm{cfg: cfg, policy: policy, log: slog.New(slog.DiscardHandler)}
	if err := f.checkTarget(ctx, t.URL); err != nil {
		return nil, err
	}
	p, err := newFilterProxy(policy, f.log)
	if err != nil {
		return nil, err
	}
	defer p.close()
	in, err := launch(ctx, cfg, p.addr(), cfg.LaunchTimeout)
	if err != nil {
		return nil, err
	}
	defer func() {
		in.kill()
		in.waitGone(5 * time.Second)
	}()
	tb, err := f.newTab(in)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	return f.execute(&slot{proxy: p}, tb, &job{ctx: ctx, task: t, queued: start})
}
