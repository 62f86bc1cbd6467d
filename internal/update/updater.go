package update

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/peage/appliance/internal/obs"
)

// Updater applies verified releases to a Store through the health gate.
type Updater struct {
	Store Store
	Gate  Gate
	// Keep is how many installed versions stay in versions/ (default 3; the running one and
	// the one it replaced are always kept).
	Keep int
	// AllowBad installs a version even though it was rolled back before.
	AllowBad bool
	Log      *slog.Logger
}

// Outcome is what an update did.
type Outcome struct {
	Version string // the version asked for
	Result  Result
	Reason  string // why it was rolled back
}

// Result is the end state of one update.
type Result string

const (
	ResultNothing    Result = "nothing"     // no update pending or the version already runs
	ResultInstalled  Result = "installed"   // the new version runs and passed the gate
	ResultRolledBack Result = "rolled-back" // the new version failed the gate; the previous runs
)

// RolledBackError is returned when the new version was rolled back.
type RolledBackError struct{ Version, Reason string }

func (e *RolledBackError) Error() string {
	return fmt.Sprintf("version %s rolled back: %s", e.Version, e.Reason)
}

// Step names, logged (key "step") as each begins.
const (
	StepRecover  = "recover"
	StepInstall  = "install"
	StepRecord   = "record"
	StepFlip     = "flip"
	StepRestart  = "restart"
	StepGate     = "gate"
	StepConfirm  = "confirm"
	StepPrune    = "prune"
	StepRollback = "rollback"
)

func (u *Updater) log() *slog.Logger {
	if u.Log == nil {
		return slog.Default()
	}
	return u.Log
}

func (u *Updater) step(name, version string) {
	u.log().Info("update step", obs.KeyStep, name, obs.KeyVersion, version)
}

// Apply installs a verified release and switches to it through the health gate.
func (u *Updater) Apply(ctx context.Context, rel *Release) (Outcome, error) {
	unlock, err := u.Store.Lock()
	if err != nil {
		return Outcome{}, err
	}
	defer unlock()
	if _, err := u.recover(ctx); err != nil {
		return Outcome{}, fmt.Errorf("finishing the interrupted update first: %w", err)
	}
	v := rel.Manifest.Version
	rec, err := u.Store.Load()
	if err != nil {
		return Outcome{}, err
	}
	if slices.Contains(rec.Bad, v) && !u.AllowBad {
		return Outcome{}, reject("version %s was rolled back before (update.json); install it again only on purpose (--allow-bad)", v)
	}
	from, err := u.Store.Current()
	if err != nil {
		return Outcome{}, err
	}
	to := u.Store.VersionPath(v)
	if from == to {
		// A version name is installed once: re-applying the running one is a no-op, and a
		// different binary under the same name is refused rather than swapped under the units.
		if err := sameContent(to, &rel.Manifest); err != nil {
			return Outcome{}, reject("version %s already runs with a different binary: %v", v, err)
		}
		return Outcome{Version: v, Result: ResultNothing}, nil
	}
	base := u.Gate.Observe(ctx)
	u.step(StepInstall, v)
	if _, err := u.Store.Install(rel); err != nil {
		return Outcome{}, err
	}
	return u.switchTo(ctx, v, from, to, base)
}

// Rollback switches back to the version that ran before the current one, through the gate.
func (u *Updater) Rollback(ctx context.Context) (Outcome, error) {
	unlock, err := u.Store.Lock()
	if err != nil {
		return Outcome{}, err
	}
	defer unlock()
	if out, err := u.recover(ctx); err != nil || out.Result != ResultNothing {
		return out, err
	}
	rec, err := u.Store.Load()
	if err != nil {
		return Outcome{}, err
	}
	from, err := u.Store.Current()
	if err != nil {
		return Outcome{}, err
	}
	installed, err := u.Store.Installed()
	if err != nil {
		return Outcome{}, err
	}
	to := ""
	for _, p := range append([]string{rec.Previous}, installed...) {
		if p != "" && p != from {
			to = p
			break
		}
	}
	if to == "" {
		return Outcome{}, errors.New("no other version to roll back to")
	}
	return u.switchTo(ctx, u.Store.VersionOf(to), from, to, u.Gate.Observe(ctx))
}

// switchTo flips current from → to, restarts and gates; on failure it rolls back.
func (u *Updater) switchTo(ctx context.Context, v, from, to string, base Baseline) (Outcome, error) {
	p := Pending{Version: v, From: from, To: to, Phase: PhaseInstalled, Started: time.Now().UTC()}
	u.step(StepRecord, v)
	if err := u.savePending(&p); err != nil {
		return Outcome{}, err
	}
	u.step(StepFlip, v)
	if err := u.Store.Flip(to); err != nil {
		_ = u.savePending(nil)
		return Outcome{}, err
	}
	p.Phase = PhaseFlipped
	if err := u.savePending(&p); err != nil {
		return u.rollback(ctx, p, err.Error())
	}
	return u.restartAndGate(ctx, p, base)
}

func (u *Updater) restartAndGate(ctx context.Context, p Pending, base Baseline) (Outcome, error) {
	u.step(StepRestart, p.Version)
	if err := u.Gate.Services.Restart(ctx); err != nil {
		return u.rollback(ctx, p, "restart: "+err.Error())
	}
	u.step(StepGate, p.Version)
	if err := u.Gate.Wait(ctx, p.Version, base); err != nil {
		if ctx.Err() != nil {
			// Stopped from outside (shutdown): leave the update pending for the recovery.
			return Outcome{}, ctx.Err()
		}
		return u.rollback(ctx, p, err.Error())
	}
	u.step(StepConfirm, p.Version)
	rec, err := u.Store.Load()
	if err != nil {
		return Outcome{}, err
	}
	rec.Pending = nil
	rec.Previous = p.From
	rec.Bad = slices.DeleteFunc(rec.Bad, func(b string) bool { return b == p.Version })
	rec.Last = fmt.Sprintf("%s: %s installed", time.Now().UTC().Format(time.RFC3339), p.Version)
	if err := u.Store.Save(rec); err != nil {
		return Outcome{}, err
	}
	u.step(StepPrune, p.Version)
	keep := u.Keep
	if keep <= 0 {
		keep = 3
	}
	removed, err := u.Store.Prune(keep, p.To, p.From)
	if err != nil {
		u.log().Warn("pruning old versions", obs.KeyErr, err)
	}
	for _, r := range removed {
		u.log().Info("removed old version", obs.KeyPath, r)
	}
	u.log().Info("update installed", obs.KeyVersion, p.Version)
	return Outcome{Version: p.Version, Result: ResultInstalled}, nil
}

// rollback returns current to p.From and restarts. The version is remembered as bad.
func (u *Updater) rollback(ctx context.Context, p Pending, reason string) (Outcome, error) {
	u.step(StepRollback, p.Version)
	u.log().Warn("update failed, rolling back", obs.KeyVersion, p.Version, obs.KeyReason, reason)
	p.Phase, p.Reason = PhaseRollingBack, reason
	if err := u.savePending(&p); err != nil {
		return Outcome{}, err
	}
	return u.finishRollback(ctx, p)
}

func (u *Updater) finishRollback(ctx context.Context, p Pending) (Outcome, error) {
	if p.From == "" {
		// Nothing ran before (no `current` at all): there is nothing to go back to, so the
		// failed version stays, remembered as bad, and the update is no longer pending.
		u.log().Error("no previous version to return to", obs.KeyVersion, p.Version)
		p.Reason += " (no previous version to return to)"
	} else {
		if err := u.Store.Flip(p.From); err != nil {
			return Outcome{}, err
		}
		// The context may be the one that expired; the rollback must still restart the units.
		rctx := context.WithoutCancel(ctx)
		if err := u.Gate.Services.Restart(rctx); err != nil {
			u.log().Error("restarting the previous version", obs.KeyErr, err)
		} else if old := u.Store.VersionOf(p.From); old != "" {
			if err := u.Gate.Wait(rctx, old, Baseline{}); err != nil {
				u.log().Error("the previous version is not healthy either", obs.KeyVersion, old, obs.KeyErr, err)
			}
		}
	}
	rec, err := u.Store.Load()
	if err != nil {
		return Outcome{}, err
	}
	rec.Pending = nil
	if !slices.Contains(rec.Bad, p.Version) {
		rec.Bad = append(rec.Bad, p.Version)
	}
	rec.Last = fmt.Sprintf("%s: %s rolled back: %s", time.Now().UTC().Format(time.RFC3339), p.Version, p.Reason)
	if err := u.Store.Save(rec); err != nil {
		return Outcome{}, err
	}
	return Outcome{Version: p.Version, Result: ResultRolledBack, Reason: p.Reason},
		&RolledBackError{Version: p.Version, Reason: p.Reason}
}

func (u *Updater) savePending(p *Pending) error {
	rec, err := u.Store.Load()
	if err != nil {
		return err
	}
	rec.Pending = p
	return u.Store.Save(rec)
}

// Recover finishes an update that a killed updater or a power cut interrupted: a version
// that was flipped to is restarted and gated again (and rolled back if it fails), a rollback
// is completed, and an update that never flipped is forgotten. Run at boot by the gate unit.
func (u *Updater) Recover(ctx context.Context) (Outcome, error) {
	unlock, err := u.Store.Lock()
	if err != nil {
		return Outcome{}, err
	}
	defer unlock()
	return u.recover(ctx)
}

func (u *Updater) recover(ctx context.Context) (Outcome, error) {
	if err := u.Store.CleanTemps(); err != nil {
		return Outcome{}, err
	}
	rec, err := u.Store.Load()
	if err != nil || rec.Pending == nil {
		return Outcome{Result: ResultNothing}, err
	}
	p := *rec.Pending
	cur, err := u.Store.Current()
	if err != nil {
		return Outcome{}, err
	}
	u.step(StepRecover, p.Version)
	u.log().Warn("finishing an interrupted update", obs.KeyVersion, p.Version, obs.KeyPhase, p.Phase, obs.KeyCurrent, cur)
	switch {
	case p.Phase == PhaseRollingBack:
		return u.finishRollback(ctx, p)
	case cur == p.To:
		// Flipped (whether or not the record said so): prove it or roll it back. The units
		// are restarted so the gate judges the binary current names.
		p.Phase = PhaseFlipped
		if err := u.savePending(&p); err != nil {
			return Outcome{}, err
		}
		return u.restartAndGate(ctx, p, Baseline{})
	case cur == p.From && p.Phase == PhaseInstalled:
		// Killed before the flip: the old version never stopped running.
		rec.Pending = nil
		return Outcome{Version: p.Version, Result: ResultNothing}, u.Store.Save(rec)
	default:
		// current was changed by hand meanwhile: trust it, forget the update.
		u.log().Warn("current names neither side of the interrupted update; leaving it", obs.KeyCurrent, cur)
		rec.Pending = nil
		return Outcome{Version: p.Version, Result: ResultNothing}, u.Store.Save(rec)
	}
}
