package hub

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/obs"
)

// A CA rotation keeps every box linked: the next CA is first trusted by every box (StageCA:
// the bundle handed out becomes current + next, and each box receives it on its CA subject),
// then the hub's certificate is issued from it (SwitchCA), then the old CA is dropped from the
// bundle (RetireCA). Links up keep their sessions at each step; a box's next handshake verifies
// the hub with the bundle it holds then.
const (
	nextCAFile    = "fleet-ca-next.pem"
	nextCAKeyFile = "fleet-ca-next-key.pem"
	trustFile     = "fleet-ca-trust.pem" // the bundle boxes trust, when it is not the CA alone
)

// ErrNoStagedCA: SwitchCA before StageCA.
var ErrNoStagedCA = errors.New("fleet hub: no next CA staged (stage one first)")

// BoxesBehindError: SwitchCA while some enrolled boxes have not said they trust the next CA;
// they would be refused at their next handshake.
type BoxesBehindError struct{ Boxes []string }

func (e *BoxesBehindError) Error() string {
	return "fleet hub: boxes not trusting the next CA yet: " + strings.Join(e.Boxes, ", ")
}

// CAStatus is where a rotation stands.
type CAStatus struct {
	Signing string   `json:"signing"`        // pin of the CA the hub's certificate comes from
	Next    string   `json:"next,omitempty"` // pin of the staged CA
	Trusted []string `json:"trusted"`        // pins of the bundle handed to boxes
	// Boxes are the pins each enrolled box last said it trusts (none: not heard from).
	Boxes map[string][]string `json:"boxes"`
}

func (h *Hub) trustPEM() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.caPEM
}

// loadTrust reads the bundle boxes trust (the signing CA alone when no rotation is under way).
func (h *Hub) loadTrust(caPEM []byte) error {
	h.caPEM = caPEM
	data, err := os.ReadFile(filepath.Join(h.cfg.StateDir, trustFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fleet hub: %w", err)
	}
	if _, err := fleet.CABundle(data); err != nil {
		return fmt.Errorf("fleet hub: %s: %w", trustFile, err)
	}
	h.caPEM = data
	return nil
}

// setTrust hands out bundle from now on (enrolment, and every box whose heartbeat says it
// trusts another).
func (h *Hub) setTrust(bundle []byte) error {
	if err := writeFile(h.cfg.StateDir, trustFile, bundle); err != nil {
		return fmt.Errorf("fleet hub: %w", err)
	}
	h.mu.Lock()
	h.caPEM = bundle
	h.mu.Unlock()
	return nil
}

// StageCA makes the next CA (or keeps the one staged) and has every box trust it beside the
// current one.
func (h *Hub) StageCA() error {
	if h.srv == nil {
		return ErrExternal
	}
	nextPEM, _, _, err := loadOrMakeCA(h.cfg.StateDir, nextCAFile, nextCAKeyFile)
	if err != nil {
		return fmt.Errorf("fleet hub: next CA: %w", err)
	}
	signing := pemOf(h.certs.signer().Raw)
	return h.setTrust(append(signing, nextPEM...))
}

// SwitchCA makes the staged CA the signing one and serves a certificate from it. Unless
// force, every enrolled box must have said it trusts the staged CA; a box left behind is
// refused at its next handshake and joins again with a new token.
func (h *Hub) SwitchCA(force bool) error {
	if h.srv == nil {
		return ErrExternal
	}
	_, errCert := os.Stat(filepath.Join(h.cfg.StateDir, nextCAFile))
	if errors.Is(errCert, os.ErrNotExist) {
		return ErrNoStagedCA
	}
	nextPEM, next, nextKey, err := loadOrMakeCA(h.cfg.StateDir, nextCAFile, nextCAKeyFile)
	if err != nil {
		return fmt.Errorf("fleet hub: next CA: %w", err)
	}
	if behind := h.behind(fleet.CAPin(next)); len(behind) > 0 && !force {
		return &BoxesBehindError{Boxes: behind}
	}
	keyPEM, err := os.ReadFile(filepath.Join(h.cfg.StateDir, nextCAKeyFile))
	if err != nil {
		return err
	}
	// The key first: a crash between the two leaves a pair that does not load, which start
	// reports, rather than a certificate signed by a key the hub no longer has.
	if err := writeFile(h.cfg.StateDir, caKeyFile, keyPEM); err != nil {
		return err
	}
	if err := writeFile(h.cfg.StateDir, caFile, nextPEM); err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(h.cfg.StateDir, nextCAFile))
	_ = os.Remove(filepath.Join(h.cfg.StateDir, nextCAKeyFile))
	h.certs.mu.Lock()
	h.certs.ca, h.certs.caKey = next, nextKey
	h.certs.mu.Unlock()
	if _, err := h.certs.renew(h.now()); err != nil {
		return err
	}
	h.log.Info("fleet CA switched", slog.String(obs.KeyDetail, fleet.CAPin(next)))
	return nil
}

// RetireCA drops every CA but the signing one from the bundle boxes trust.
func (h *Hub) RetireCA() error {
	if h.srv == nil {
		return ErrExternal
	}
	if _, err := os.Stat(filepath.Join(h.cfg.StateDir, nextCAFile)); err == nil {
		return errors.New("fleet hub: a next CA is staged: switch to it first")
	}
	return h.setTrust(pemOf(h.certs.signer().Raw))
}

// CA tells where a rotation stands.
func (h *Hub) CA() CAStatus {
	st := CAStatus{Signing: h.caPin(), Boxes: map[string][]string{}}
	if data, err := os.ReadFile(filepath.Join(h.cfg.StateDir, nextCAFile)); err == nil {
		if cas, err := fleet.CABundle(data); err == nil {
			st.Next = fleet.CAPin(cas[0])
		}
	}
	if cas, err := fleet.CABundle(h.trustPEM()); err == nil {
		st.Trusted = fleet.CAPins(cas)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for box := range h.boxes {
		st.Boxes[box] = h.caPins[box]
	}
	return st
}

func pemOf(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}) }

// behind lists the enrolled boxes whose last heartbeat did not list pin.
func (h *Hub) behind(pin string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for box := range h.boxes {
		if !slices.Contains(h.caPins[box], pin) {
			out = append(out, box)
		}
	}
	slices.Sort(out)
	return out
}

// watchHeartbeats learns which CAs each box trusts, and hands a box the bundle when it trusts
// another: a box offline while a CA was staged gets it as soon as it is back.
func (h *Hub) watchHeartbeats() error {
	_, err := h.conn.Subscribe(fleet.HeartbeatSubjects, func(m *nats.Msg) {
		box := fleet.BoxOfHeartbeat(m.Subject)
		var rec fleet.Record
		if box == "" || json.Unmarshal(m.Data, &rec) != nil || rec.Box != box {
			return
		}
		bundle := h.trustPEM()
		cas, err := fleet.CABundle(bundle)
		if err != nil {
			return
		}
		h.mu.Lock()
		if _, ok := h.boxes[box]; !ok {
			h.mu.Unlock()
			return
		}
		h.caPins[box] = rec.CAPins
		// A box that reports no CA cannot take a bundle (it predates rotation); one that did
		// not take it is asked again at most every pushEvery, not at every heartbeat.
		push := len(rec.CAPins) > 0 && !slices.Equal(rec.CAPins, fleet.CAPins(cas)) &&
			time.Since(h.pushed[box]) >= pushEvery
		if push {
			h.pushed[box] = time.Now()
		}
		h.mu.Unlock()
		if push {
			go h.pushCA(box, bundle)
		}
	})
	return err
}

// pushEvery spaces the hand-overs of the bundle to one box.
const pushEvery = 2 * time.Second

// pushCA hands box the bundle; its next heartbeat says whether it took it.
func (h *Hub) pushCA(box string, bundle []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), pushEvery)
	defer cancel()
	reply, err := h.conn.RequestWithContext(ctx, fleet.CASubject(box), bundle)
	if err != nil || string(reply.Data) != "ok" {
		detail := ""
		if err != nil {
			detail = err.Error()
		} else {
			detail = string(reply.Data)
		}
		h.log.Warn("fleet CA bundle not taken", slog.String(obs.KeyDetail, box), slog.String(obs.KeyErr, detail))
	}
}
