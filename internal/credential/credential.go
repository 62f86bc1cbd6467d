// Package credential reads and creates the box's secrets. On the appliance they are files in
// /etc/peage/credentials, made on the box at first start (`appliance firstboot`), never baked
// into the image; systemd hands each unit only its own through LoadCredential=, as a file in
// $CREDENTIALS_DIRECTORY. A bare name is looked up there; a path is read as it is.
package credential

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/peage/appliance/internal/durable"
)

// Names of the credentials the units load (LoadCredential=<name>:/etc/peage/credentials/<name>).
const (
	SettleHotKey  = "settle-hot-key" // the gas-paying key of settle (hex secp256k1)
	OperatorToken = "operator-token" // the operator port's bearer token / Basic password
)

// Dir is where first start writes the credentials on the box.
const Dir = "/etc/peage/credentials"

// Path resolves name: a bare name is a file of $CREDENTIALS_DIRECTORY when systemd set one.
func Path(name string) string {
	if !strings.ContainsRune(name, os.PathSeparator) {
		if dir := os.Getenv("CREDENTIALS_DIRECTORY"); dir != "" {
			return filepath.Join(dir, name)
		}
	}
	return name
}

// Read returns the credential's content without surrounding white space; an empty file is an
// error, since an empty secret protects nothing.
func Read(name string) (string, error) {
	p := Path(name)
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("credential %s is empty", p)
	}
	return s, nil
}

// Token is 32 random bytes in hex: a bearer token or Basic password.
func Token() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Create writes content to dir/name (mode 0600, fsynced) unless the file exists. It reports
// whether it wrote: a secret made at an earlier start is never replaced.
func Create(dir, name string, content func() (string, error)) (bool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	v, err := content()
	if err != nil {
		return false, err
	}
	// Written under a temporary name and renamed, so a crash never leaves a half secret.
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(v + "\n"); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Link(tmp.Name(), p); err != nil { // link fails if another start won the race
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, err
	}
	_ = durable.SyncDir(dir)
	return true, nil
}
