package update

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// Systemd restarts the appliance through systemctl and reads its units' state.
type Systemd struct {
	Target string   // restarted as a whole: its units are PartOf= it (peage.target)
	Units  []string // checked one by one (peage-api.service, ...)
	// Systemctl is the program to run (default "systemctl").
	Systemctl string

	mu       sync.Mutex
	restarts map[string]int // NRestarts of each unit right after the last Restart
}

// DefaultUnits are the appliance's daemons.
var DefaultUnits = []string{"peage-api.service", "peage-settle.service", "peage-proxyd.service"}

func (s *Systemd) systemctl(ctx context.Context, args ...string) ([]byte, error) {
	bin := s.Systemctl
	if bin == "" {
		bin = "systemctl"
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("systemctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Restart restarts the target (systemctl waits for Type=notify units to report READY) and
// remembers each unit's restart counter, so that Check sees restarts made after it.
func (s *Systemd) Restart(ctx context.Context) error {
	if _, err := s.systemctl(ctx, "restart", s.Target); err != nil {
		return err
	}
	states, err := s.show(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restarts = map[string]int{}
	for _, st := range states {
		s.restarts[st.ID] = st.NRestarts
	}
	return nil
}

// Check reads ActiveState and NRestarts of every unit.
func (s *Systemd) Check(ctx context.Context) error {
	states, err := s.show(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	base := s.restarts
	s.mu.Unlock()
	return judgeUnits(states, base)
}

func (s *Systemd) show(ctx context.Context) ([]unitState, error) {
	args := append([]string{"show", "--property=Id,ActiveState,SubState,NRestarts,Result", "--"}, s.Units...)
	out, err := s.systemctl(ctx, args...)
	if err != nil {
		return nil, err
	}
	states := parseShow(out)
	if len(states) != len(s.Units) {
		return nil, fmt.Errorf("systemctl show answered %d units for %d asked", len(states), len(s.Units))
	}
	return states, nil
}

// unitState is one unit's block of `systemctl show`.
type unitState struct {
	ID, ActiveState, SubState, Result string
	NRestarts                         int
}

// parseShow reads `systemctl show` output: KEY=VALUE lines, one block per unit, blocks
// separated by an empty line.
func parseShow(out []byte) []unitState {
	var states []unitState
	for _, block := range strings.Split(strings.TrimSpace(string(out)), "\n\n") {
		if strings.TrimSpace(block) == "" {
			continue
		}
		var st unitState
		for _, line := range strings.Split(block, "\n") {
			k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
			switch k {
			case "Id":
				st.ID = v
			case "ActiveState":
				st.ActiveState = v
			case "SubState":
				st.SubState = v
			case "Result":
				st.Result = v
			case "NRestarts":
				st.NRestarts, _ = strconv.Atoi(v)
			}
		}
		states = append(states, st)
	}
	return states
}

// judgeUnits: a failed unit or one restarted since base is ErrUnitFailed; one not yet active
// is "not yet".
func judgeUnits(states []unitState, base map[string]int) error {
	for _, st := range states {
		if st.ActiveState == "failed" {
			return fmt.Errorf("%w: %s is failed (%s)", ErrUnitFailed, st.ID, st.Result)
		}
		if b, ok := base[st.ID]; ok && st.NRestarts > b {
			return fmt.Errorf("%w: %s restarted %d times since the update", ErrUnitFailed, st.ID, st.NRestarts-b)
		}
	}
	for _, st := range states {
		if st.ActiveState != "active" {
			return fmt.Errorf("%s is %s/%s", st.ID, st.ActiveState, st.SubState)
		}
	}
	return nil
}
