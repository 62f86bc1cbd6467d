package chain

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/upstream/blockscout"
	"github.com/peage/appliance/api/upstream/chainrpc"
	"github.com/peage/appliance/api/upstream/sourcify"
	"github.com/peage/appliance/internal/obs"
)

// New builds the family from the [chain] section. Without [chain] rpc the chain routes stay
// listed, unavailable (503); abi needs only Sourcify.
func New(d family.Deps) (*Routes, error) {
	cfg, err := family.Section[chainrpc.Config](d.Config, "chain")
	if err != nil {
		return nil, err
	}
	client, clientErr := chainrpc.New(cfg)
	if clientErr != nil {
		warn(d, "no chain endpoint; the chain routes are unavailable", clientErr)
	}
	sc, err := d.Pool.Client(sourcify.Name)
	if err != nil {
		return nil, err
	}
	p := Parts{Client: client, ClientErr: clientErr, Sourcify: sourcify.New(sc), LogsMaxBlocks: cfg.LogsMaxBlocks, Now: d.Now}
	if cfg.Indexer {
		ix, err := d.Pool.Client(blockscout.Name)
		if err != nil {
			return nil, err
		}
		p.Indexer = blockscout.New(ix)
	}
	// ENS reads Ethereum mainnet (chain.ens_rpc); without it /v1/chain/ens stays unavailable.
	ens, ensErr := chainrpc.NewENS(cfg)
	p.ENS = ENSDeps{Client: ens, ClientErr: ensErr, Registry: cfg.ENSRegistry, BasenamesRegistry: cfg.BasenamesRegistry}
	if errors.Is(ensErr, chainrpc.ErrNoENS) {
		p.ENS.ClientErr = nil // the route's own reason says which key to set
	} else if ensErr != nil {
		warn(d, "ENS endpoint unusable; /v1/chain/ens is unavailable", ensErr)
	}
	if d.Egress != nil { // EIP-3668 gateways are chosen by resolver owners: through the guard
		p.ENS.Gateway = &http.Client{Transport: d.Egress.Transport(), Timeout: 5 * time.Second}
	}
	return With(p), nil
}

func warn(d family.Deps, msg string, err error) {
	if d.Log != nil {
		d.Log.Warn(msg, slog.String(obs.KeyErr, err.Error()))
	}
}
