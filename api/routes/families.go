// Package routes lists the route families, as CoreDNS's plugin.cfg lists its plugins: every
// family the appliance serves, in the order they are bound. Each is built the same way, by
// its New(family.Deps), and binds its own entries of the catalog.
package routes

import (
	"fmt"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/routes/annonces"
	"github.com/peage/appliance/api/routes/chain"
	"github.com/peage/appliance/api/routes/crypto"
	"github.com/peage/appliance/api/routes/directions"
	"github.com/peage/appliance/api/routes/domain"
	"github.com/peage/appliance/api/routes/fr"
	"github.com/peage/appliance/api/routes/infra"
	"github.com/peage/appliance/api/routes/llm"
	"github.com/peage/appliance/api/routes/maps"
	"github.com/peage/appliance/api/routes/marketplace"
	"github.com/peage/appliance/api/routes/mica"
	"github.com/peage/appliance/api/routes/payments"
	"github.com/peage/appliance/api/routes/preflight"
	proxyroutes "github.com/peage/appliance/api/routes/proxy"
	"github.com/peage/appliance/api/routes/readiness"
	receiptroutes "github.com/peage/appliance/api/routes/receipt"
	"github.com/peage/appliance/api/routes/sms"
	"github.com/peage/appliance/api/routes/social"
	"github.com/peage/appliance/api/routes/transcribe"
	"github.com/peage/appliance/api/routes/uk"
	"github.com/peage/appliance/api/routes/us"
	"github.com/peage/appliance/api/routes/util"
	"github.com/peage/appliance/api/routes/vin"
	"github.com/peage/appliance/api/routes/web"
	"github.com/peage/appliance/api/routes/websearch"
	"github.com/peage/appliance/api/routes/wiki"
)

// Families are the route families in the order they are bound.
var Families = []family.Family{
	family.Of("infra", infra.New),
	family.Of("util", util.New),
	family.Of("readiness", readiness.New),
	family.Of("domain", domain.New),
	family.Of("chain", chain.New),
	family.Of("fr", fr.New),
	family.Of("uk", uk.New),
	family.Of("us", us.New),
	family.Of("directions", directions.New),
	family.Of("vin", vin.New),
	family.Of("wiki", wiki.New),
	family.Of("mica", mica.New),
	family.Of("preflight", preflight.New),
	family.Of("crypto", crypto.New),
	family.Of("websearch", websearch.New),
	family.Of("social", social.New),
	family.Of("sms", sms.New),
	family.Of("transcribe", transcribe.New),
	family.Of("payments", payments.New),
	family.Of("receipt", receiptroutes.New),
	family.Of("proxy", proxyroutes.New),
	family.Of("web", web.New),
	family.Of("marketplace", marketplace.New),
	family.Of("annonces", annonces.New),
	family.Of("maps", maps.New),
	family.Of("llm", llm.New),
}

// Bind joins the egress policy's check of literal addresses to the public_url format (so a
// loopback, private or metadata address is a 400 before any 402), then builds every family
// from d and binds it to c. It returns the families built, by name; a family whose
// collaborator is missing is left out and its routes stay listed, answering 503. The first
// failure stops the start, naming the family.
func Bind(c *catalog.Catalog, d family.Deps) (map[string]family.Binder, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Egress != nil {
		if err := c.AlsoCheck("public_url", d.Egress.CheckURL); err != nil {
			return nil, err
		}
	}
	built := map[string]family.Binder{}
	for _, f := range Families {
		b, err := f.New(d)
		if err == nil && b != nil {
			err = b.Bind(c)
		}
		if err != nil {
			return nil, fmt.Errorf("route family %s: %w", f.Name, err)
		}
		if b != nil {
			built[f.Name] = b
			d = offered(d, b)
		}
	}
	return built, nil
}

// offered adds to d what family b offers the families listed after it, so that they share it
// without importing b: the web family reads pages for the model routes, the fr family gives
// DVF's reference to the listings.
func offered(d family.Deps, b family.Binder) family.Deps {
	if p, ok := b.(family.PageReader); ok {
		d.Pages = p
	}
	if r, ok := b.(family.References); ok {
		d.References = r
	}
	return d
}
