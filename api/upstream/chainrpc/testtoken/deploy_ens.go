package testtoken

import (
	"context"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// ENS is a registry and a public resolver deployed together.
type ENS struct {
	Registry common.Address
	Resolver common.Address
}

// ENS deploys a registry owned by the deployer and a public resolver.
func (d Deployer) ENS(ctx context.Context) (ENS, error) {
	reg, err := d.deploy(ctx, TestENSRegistryMetaData.Bin, nil)
	if err != nil {
		return ENS{}, err
	}
	res, err := d.deploy(ctx, TestPublicResolverMetaData.Bin, nil)
	return ENS{Registry: reg, Resolver: res}, err
}

// OffchainResolver deploys an EIP-3668 resolver whose gateway is url.
func (d Deployer) OffchainResolver(ctx context.Context, url string) (common.Address, error) {
	return d.deploy(ctx, TestOffchainResolverMetaData.Bin, NewTestOffchainResolver().PackConstructor(url))
}

// Register creates name label by label from the root (the deployer owning each node) and
// points its resolver at resolver; it returns the name's node.
func (d Deployer) Register(ctx context.Context, e ENS, name string, resolver common.Address) (common.Hash, error) {
	reg := NewTestENSRegistry().Instance(d.B, e.Registry)
	labels := strings.Split(name, ".")
	var node common.Hash
	for i := len(labels) - 1; i >= 0; i-- {
		label := crypto.Keccak256Hash([]byte(labels[i]))
		if _, err := d.send(ctx, reg, "setSubnodeOwner", node, label, crypto.PubkeyToAddress(d.Key.PublicKey)); err != nil {
			return node, err
		}
		node = crypto.Keccak256Hash(node[:], label[:])
	}
	_, err := d.send(ctx, reg, "setResolver", node, resolver)
	return node, err
}

// SetAddr, SetText and SetName write the public resolver's records of node.
func (d Deployer) SetAddr(ctx context.Context, e ENS, node common.Hash, a common.Address) error {
	_, err := d.send(ctx, NewTestPublicResolver().Instance(d.B, e.Resolver), "setAddr", node, a)
	return err
}

func (d Deployer) SetText(ctx context.Context, e ENS, node common.Hash, key, value string) error {
	_, err := d.send(ctx, NewTestPublicResolver().Instance(d.B, e.Resolver), "setText", node, key, value)
	return err
}

// SetReverse registers <hex of a>.<suffix> (addr.reverse on Ethereum, 80002105.reverse for
// Base's legacy registrar) with the public resolver and sets its name record to name, as a
// reverse registrar does for a's owner.
func (d Deployer) SetReverse(ctx context.Context, e ENS, a common.Address, suffix, name string) error {
	node, err := d.Register(ctx, e, strings.ToLower(a.Hex()[2:])+"."+suffix, e.Resolver)
	if err != nil {
		return err
	}
	_, err = d.send(ctx, NewTestPublicResolver().Instance(d.B, e.Resolver), "setName", node, name)
	return err
}

func (d Deployer) send(ctx context.Context, c *bind.BoundContract, method string, args ...any) (common.Hash, error) {
	tx, err := c.Transact(d.opts(ctx), method, args...)
	if err != nil {
		return common.Hash{}, err
	}
	return d.wait(ctx, tx)
}
