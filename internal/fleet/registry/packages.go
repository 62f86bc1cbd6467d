package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/peage/appliance/internal/fleet"
)

// PackagesBucket maps a proxy package's key hash to the box that sold it, so that any gateway
// of the fleet carries a buyer's tunnel to that box and asks it for the package's usage.
const PackagesBucket = "peage_fleet_proxy_packages"

// packageLife outlives a package (30 days from its sale, proxyd's default) by a day, so the
// entry never goes before the package does.
const packageLife = 31 * 24 * time.Hour

// ErrNoPackage: no box sold a package with this key.
var ErrNoPackage = errors.New("no package has this key")

// Packages is the fleet's map from package to box.
type Packages struct{ kv jetstream.KeyValue }

// OpenPackages creates (or adopts) the bucket.
func OpenPackages(ctx context.Context, js jetstream.JetStream) (*Packages, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      PackagesBucket,
		Description: "péage fleet: the box that holds each proxy package, by key hash",
		History:     1,
		TTL:         packageLife,
		Storage:     jetstream.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("fleet packages: %w", err)
	}
	return &Packages{kv: kv}, nil
}

// Put records that box holds the package whose key hashes to keyHash (hex SHA-256).
func (p *Packages) Put(ctx context.Context, keyHash, box string) error {
	if err := fleet.ValidName(box); err != nil {
		return err
	}
	if _, err := p.kv.Put(ctx, keyHash, []byte(box)); err != nil {
		return fmt.Errorf("fleet packages: %w", err)
	}
	return nil
}

// Box is the box holding the package of keyHash, or ErrNoPackage.
func (p *Packages) Box(ctx context.Context, keyHash string) (string, error) {
	e, err := p.kv.Get(ctx, keyHash)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrInvalidKey) {
		return "", ErrNoPackage
	}
	if err != nil {
		return "", fmt.Errorf("fleet packages: %w", err)
	}
	return string(e.Value()), nil
}
