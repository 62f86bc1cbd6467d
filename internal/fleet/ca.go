package fleet

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"slices"
)

// CASubject is where the hub hands one box the bundle of fleet CAs to trust, during a CA
// rotation. '$' is in no route name, so no route shares it; the box's permissions already let
// it receive its own subjects, and no box may publish there.
func CASubject(box string) string { return boxPrefix + box + ".$ca" }

// CABundle reads a PEM bundle of fleet CA certificates.
func CABundle(bundle []byte) ([]*x509.Certificate, error) {
	var cas []*x509.Certificate
	for rest := bundle; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		if !c.IsCA {
			return nil, errors.New("CA bundle: a certificate that is no CA")
		}
		cas = append(cas, c)
	}
	if len(cas) == 0 {
		return nil, errors.New("CA bundle: no certificate")
	}
	return cas, nil
}

// CAPins are the sorted pins of a bundle's CAs, what a box reports it trusts (Record.CAPins).
func CAPins(cas []*x509.Certificate) []string {
	pins := make([]string, 0, len(cas))
	for _, c := range cas {
		pins = append(pins, CAPin(c))
	}
	slices.Sort(pins)
	return slices.Compact(pins)
}
