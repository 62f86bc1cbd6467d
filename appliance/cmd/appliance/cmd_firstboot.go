package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/peage/appliance/internal/credential"
	"github.com/peage/appliance/internal/durable"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/settle"
)

func init() {
	register("firstboot", "make the box's secrets on the box (operator token, settle's hot key, the receipt keys) and record the payout address; idempotent", runFirstboot)
}

// setupEnv is the environment file every unit reads (EnvironmentFile=-), where firstboot
// records what the operator sets: the payout address as PEAGE_PAYMENT_PAY_TO.
const setupEnv = "/etc/peage/setup.env"

func runFirstboot(_ context.Context, args []string) error {
	return firstbootTo(os.Stdout, args)
}

// firstbootTo is `appliance firstboot`, run by peage-firstboot.service before the daemons at
// every boot: it creates each secret that does not exist yet (never replacing one, never
// printing one) and, with --pay-to, records the payout address.
func firstbootTo(out io.Writer, args []string) error {
	fset := flag.NewFlagSet("firstboot", flag.ContinueOnError)
	dir := fset.String("credentials", credential.Dir, "directory of the box's secrets (the units load them with LoadCredential=)")
	env := fset.String("setup-env", setupEnv, "environment file the units read, where the payout address is recorded")
	payTo := fset.String("pay-to", "", "payout `ADDRESS` (0x…, an address only: the payout key never lives on the box)")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if *payTo != "" {
		if err := settle.CheckPayTo(*payTo); err != nil {
			return fmt.Errorf("--pay-to: %w", err)
		}
	}
	made, err := credential.Create(*dir, credential.OperatorToken, credential.Token)
	if err != nil {
		return fmt.Errorf("operator token: %w", err)
	}
	say(out, made, "operator token", filepath.Join(*dir, credential.OperatorToken))
	var hotAddr string
	made, err = credential.Create(*dir, credential.SettleHotKey, func() (string, error) {
		k, addr, err := settle.NewHotKey()
		hotAddr = addr
		return k, err
	})
	if err != nil {
		return fmt.Errorf("settle hot key: %w", err)
	}
	say(out, made, "settle hot key", filepath.Join(*dir, credential.SettleHotKey))
	if hotAddr == "" {
		if hotAddr, err = settle.KeyAddress(filepath.Join(*dir, credential.SettleHotKey)); err != nil {
			return fmt.Errorf("settle hot key: %w", err)
		}
	}
	made, err = credential.Create(*dir, receipt.CredentialName, receipt.NewKeyText)
	if err != nil {
		return fmt.Errorf("receipt keys: %w", err)
	}
	say(out, made, "receipt keys (offers and receipts)", filepath.Join(*dir, receipt.CredentialName))
	fmt.Fprintf(out, "settle pays gas from %s: fund it with a little ETH on the payment network\n", hotAddr)
	fmt.Fprintf(out, "to offer batch-settlement too, set payment.receiver_authorizer = %q (the same key signs the claims)\n", hotAddr)
	if *payTo != "" {
		if err := setEnvLine(*env, "PEAGE_PAYMENT_PAY_TO", *payTo); err != nil {
			return fmt.Errorf("recording the payout address: %w", err)
		}
		fmt.Fprintf(out, "payout address %s recorded in %s; restart the daemons: systemctl restart peage.target\n", *payTo, *env)
	}
	return nil
}

func say(out io.Writer, made bool, what, path string) {
	if made {
		fmt.Fprintf(out, "%s created: %s\n", what, path)
	} else {
		fmt.Fprintf(out, "%s kept: %s\n", what, path)
	}
}

// setEnvLine sets KEY=value in an environment file, keeping its other lines; written to a
// temporary file and renamed (durable.WriteFile), so the units never read half of it.
func setEnvLine(path, key, value string) error {
	var lines []string
	f, err := os.Open(path)
	switch {
	case err == nil:
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if !strings.HasPrefix(sc.Text(), key+"=") {
				lines = append(lines, sc.Text())
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	lines = append(lines, key+"="+value)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return durable.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644, "."+filepath.Base(path)+".*")
}
