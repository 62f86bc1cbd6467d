package update

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Services is the service manager that runs the binary `current` names: systemd on the box
// (Systemd), a process supervisor in tests.
type Services interface {
	// Restart stops the running units and starts them again from `current`; it returns once
	// the manager has started them (or failed to).
	Restart(ctx context.Context) error
	// Check is nil when every unit is active and none has restarted since the last Restart.
	// An error wrapping ErrUnitFailed means the version cannot become healthy (a unit failed
	// or crash-loops); any other error means "not yet".
	Check(ctx context.Context) error
}

// ErrUnitFailed marks a unit that failed or restarted on its own since the last Restart.
var ErrUnitFailed = errors.New("unit failed")

// Health reads the appliance's own health report.
type Health interface {
	Check(ctx context.Context) (Report, error)
}

// Report is what /healthz answers.
type Report struct {
	Status  string `json:"status"`  // "ok" or "degraded"
	Version string `json:"version"` // version.String(): "v1.2.3" or "v1.2.3 (abcdef012345)"
}

// Runs tells whether the report comes from version v.
func (r Report) Runs(v string) bool {
	return r.Version == v || strings.HasPrefix(r.Version, v+" (")
}

// HTTPHealth asks the operator listener's /healthz.
type HTTPHealth struct {
	URL    string // e.g. http://127.0.0.1:8403/healthz
	Client *http.Client
}

// Check answers the report of a /healthz that answered 200 (ok) or 503 (degraded) with its
// JSON body; anything else is an error.
func (h HTTPHealth) Check(ctx context.Context) (Report, error) {
	c := h.Client
	if c == nil {
		c = &http.Client{Timeout: 5 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL, nil)
	if err != nil {
		return Report{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return Report{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return Report{}, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		return Report{}, fmt.Errorf("%s answered %d", h.URL, resp.StatusCode)
	}
	var r Report
	if err := json.Unmarshal(body, &r); err != nil || r.Status == "" {
		return Report{}, fmt.Errorf("%s answered %d without a health report", h.URL, resp.StatusCode)
	}
	return r, nil
}

// Gate decides whether a version that was just started is healthy.
type Gate struct {
	Services Services
	Health   Health
	// Bound is how long the new version has to become healthy (default 3 minutes: the
	// browser pool warms up before the API reports READY).
	Bound time.Duration
	// Hold is how long it must stay healthy without interruption (default 20 s), so a version
	// that answers once and then crashes is caught.
	Hold time.Duration
	// Interval between checks (default 1 s).
	Interval time.Duration
}

func (g Gate) withDefaults() Gate {
	if g.Bound <= 0 {
		g.Bound = 3 * time.Minute
	}
	if g.Hold <= 0 {
		g.Hold = 20 * time.Second
	}
	if g.Interval <= 0 {
		g.Interval = time.Second
	}
	return g
}

// Baseline is the health of the version being replaced. An update may not make things worse:
// when the old version reported "ok" the new one must too; when it did not (a box not yet
// configured answers "degraded"), the new one must answer with its own version.
type Baseline struct{ WasOK bool }

// Observe reads the baseline before an update; an unreachable health endpoint counts as not ok.
func (g Gate) Observe(ctx context.Context) Baseline {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := g.Health.Check(ctx)
	return Baseline{WasOK: err == nil && r.Status == "ok"}
}

// Wait returns nil once version v has been healthy for Hold, or the reason it is not within
// Bound. A failed or restarting unit ends the wait at once.
func (g Gate) Wait(ctx context.Context, v string, base Baseline) error {
	g = g.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, g.Bound)
	defer cancel()
	tick := time.NewTicker(g.Interval)
	defer tick.Stop()
	var healthySince time.Time
	reason := "no check ran"
	for {
		err := g.probe(ctx, v, base)
		switch {
		case errors.Is(err, ErrUnitFailed):
			return err
		case err != nil:
			healthySince, reason = time.Time{}, err.Error()
		case healthySince.IsZero():
			healthySince = time.Now()
		}
		if !healthySince.IsZero() && time.Since(healthySince) >= g.Hold {
			return nil
		}
		select {
		case <-ctx.Done():
			if !healthySince.IsZero() {
				reason = fmt.Sprintf("healthy for only %s of the %s hold", time.Since(healthySince).Round(time.Second), g.Hold)
			}
			return fmt.Errorf("version %s not healthy within %s: %s", v, g.Bound, reason)
		case <-tick.C:
		}
	}
}

func (g Gate) probe(ctx context.Context, v string, base Baseline) error {
	if err := g.Services.Check(ctx); err != nil {
		return err
	}
	r, err := g.Health.Check(ctx)
	if err != nil {
		return err
	}
	if !r.Runs(v) {
		return fmt.Errorf("health endpoint reports version %q", r.Version)
	}
	if base.WasOK && r.Status != "ok" {
		return fmt.Errorf("health endpoint reports %q where the previous version reported ok", r.Status)
	}
	// A unit may have crashed between the two reads: check again so a report never passes
	// over a restart.
	return g.Services.Check(ctx)
}
