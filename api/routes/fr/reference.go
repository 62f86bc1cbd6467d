package fr

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/compute/plm"
	"github.com/peage/appliance/api/compute/prixm2"
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/upstream/geoapi"
)

// Reference is the recorded sale price per m² of a postal code's commune, shared with the
// families that compare asking prices with it (api/family).
type Reference = family.Reference

// ReferenceReady: the reference needs DVF and the commune directory.
func (r *Routes) ReferenceReady() error { return r.dvf.Ready() }

// DVFReference is the sale price per m² of typ (appartement or maison) in the commune of cp.
// In Paris, Lyon and Marseille the postal code names the arrondissement (75018 → 75118);
// elsewhere the commune directory lists the communes of cp and city picks one (the first
// otherwise). A commune DVF does not cover, or without any sale of typ, is a 404.
func (r *Routes) DVFReference(ctx context.Context, cp, city, typ string) (*Reference, error) {
	p, srcs, err := r.placeOfPostcode(ctx, cp, city)
	if err != nil {
		return nil, err
	}
	if notCovered(p.Insee) {
		return nil, apierr.NotFound("DVF does not cover %s (%s): Alsace-Moselle (57, 67, 68) and Mayotte keep their land registry apart", p.Commune, p.Insee)
	}
	s, got, err := r.estimateSample(ctx, p, dvfType(typ), true)
	if err != nil {
		return nil, err
	}
	e := s.echantillon(p, got)
	if got.Stats.N == 0 {
		return nil, noSale(p, typ, e.Periode)
	}
	return &Reference{Insee: p.Insee, Commune: p.Commune, Type: typ, PrixM2: prixM2Of(got.Stats), Echantillon: e,
		MethodVersion: prixm2.Version, Sources: append(srcs, s.sources...)}, nil
}

// plmPostcode maps a postal code of Paris, Lyon or Marseille to its arrondissement:
// 75001-75020 → 75101-75120 (75116 → 75116 too), 69001-69009 → 69381-69389, 13001-13016 →
// 13201-13216. ok is false for any other postal code (or what is not five characters).
func plmPostcode(cp string) (insee, name string, ok bool) {
	if len(cp) != 5 {
		return "", "", false
	}
	n, err := strconv.Atoi(cp[2:])
	if err != nil {
		return "", "", false
	}
	nth := func(n int) string {
		if n == 1 {
			return "1er"
		}
		return fmt.Sprintf("%de", n)
	}
	switch {
	case strings.HasPrefix(cp, "75") && n >= 1 && n <= 20:
		return fmt.Sprint(75100 + n), "Paris " + nth(n), true
	case cp == "75116":
		return "75116", "Paris 16e", true
	case strings.HasPrefix(cp, "69") && n >= 1 && n <= 9:
		return fmt.Sprint(69380 + n), "Lyon " + nth(n), true
	case strings.HasPrefix(cp, "13") && n >= 1 && n <= 16:
		return fmt.Sprint(13200 + n), "Marseille " + nth(n), true
	}
	return "", "", false
}

func (r *Routes) placeOfPostcode(ctx context.Context, cp, city string) (ImmoPlace, []Source, error) {
	if insee, name, ok := plmPostcode(cp); ok && plm.Commune(insee) != insee {
		return ImmoPlace{Insee: insee, Commune: name, Postcode: cp}, nil, nil
	}
	communes, err := r.geo.ByPostalCode(ctx, cp)
	src := r.source(geoapi.Name, err)
	if err != nil {
		return ImmoPlace{}, []Source{src}, err
	}
	if len(communes) == 0 {
		return ImmoPlace{}, []Source{src}, apierr.NotFound("no commune has the postal code %s", cp)
	}
	pick := communes[0]
	for _, c := range communes {
		if city != "" && strings.EqualFold(c.Nom, strings.TrimSpace(city)) {
			pick = c
		}
	}
	return ImmoPlace{Insee: pick.Code, Commune: pick.Nom, Postcode: cp}, []Source{src}, nil
}
