package fr

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/fold"
	"github.com/peage/appliance/api/compute/holidays"
	"github.com/peage/appliance/api/compute/plm"
	"github.com/peage/appliance/api/upstream/ademe"
	"github.com/peage/appliance/api/upstream/dvf"
	"github.com/peage/appliance/api/upstream/tabular"
)

func parseDay(s string) (time.Time, error) { return time.Parse(time.DateOnly, s) }

// JoursFeries is the answer of /v1/fr/jours-feries.
type JoursFeries struct {
	Annee int64          `json:"annee"`
	Zone  string         `json:"zone"`
	Jours []holidays.Day `json:"jours"`
}

func (r *Routes) joursFeries(_ context.Context, req *catalog.Request) (any, error) {
	zone, err := holidays.Slug(req.Args.Str("zone"))
	if err != nil {
		return nil, apierr.BadParam("zone", "zone must be one of %s", strings.Join(holidays.Zones, ", "))
	}
	y := req.Args.Int("annee")
	days, err := holidays.For(int(y), zone)
	if err != nil {
		return nil, err
	}
	return JoursFeries{Annee: y, Zone: zone, Jours: days}, nil
}

// Vacances is the answer of /v1/fr/vacances-scolaires.
type Vacances struct {
	Zone          string    `json:"zone"`
	AnneeScolaire string    `json:"annee_scolaire"`
	Vacances      []Periode `json:"vacances"`
}

// Periode is one holiday period; fin is the last day off (classes resume the day after).
type Periode struct {
	Description string `json:"description"`
	Dates       Dates  `json:"dates"`
	Population  string `json:"population,omitempty"`
}

// Dates are the first and last day off, Paris dates. Fin is null when the calendar publishes
// only the start ("Début des Vacances d'Été" of a year whose summer end is not yet set).
type Dates struct {
	Debut string  `json:"debut"`
	Fin   *string `json:"fin"`
}

// zoneName maps "A", "zone a", "Corse" to the dataset's spelling.
func zoneName(z string) string {
	f := strings.TrimSpace(fold.String(z))
	f = strings.TrimPrefix(f, "zone ")
	switch f {
	case "a", "b", "c":
		return "Zone " + strings.ToUpper(f)
	}
	return strings.TrimSpace(z)
}

// schoolYear is the school year running on d (it starts on 1 September).
func schoolYear(d time.Time) string {
	y := d.Year()
	if d.Month() < time.September {
		y--
	}
	return strconv.Itoa(y) + "-" + strconv.Itoa(y+1)
}

func (r *Routes) vacances(ctx context.Context, req *catalog.Request) (any, error) {
	zone := zoneName(req.Args.Str("zone"))
	annee := req.Args.Str("annee")
	if annee == "" {
		annee = schoolYear(r.parisDate())
	}
	p, err := r.education.Calendrier(ctx, zone, annee)
	if err != nil {
		return nil, err
	}
	paris, _ := time.LoadLocation("Europe/Paris")
	out := Vacances{Zone: zone, AnneeScolaire: annee, Vacances: []Periode{}}
	seen := map[string]bool{}
	for _, row := range p.Results {
		if row.Population == "Enseignants" {
			continue // teachers' days, not a holiday for pupils
		}
		start, e1 := time.Parse(time.RFC3339, row.StartDate)
		end, e2 := time.Parse(time.RFC3339, row.EndDate)
		if e1 != nil || e2 != nil {
			continue
		}
		// The timestamps are UTC instants of Paris midnights; end is the morning classes resume.
		// The calendar writes end = start for a one-day bridge (that day, not a period ending
		// before it starts) and for the start of a summer whose end is not yet set (no end).
		d := Dates{Debut: start.In(paris).Format(time.DateOnly)}
		switch {
		case end.After(start):
			d.Fin = strPtr(end.In(paris).AddDate(0, 0, -1).Format(time.DateOnly))
		case !strings.HasPrefix(row.Description, "Début"):
			d.Fin = strPtr(d.Debut)
		}
		key := row.Description + d.Debut
		if d.Fin != nil {
			key += *d.Fin
		}
		if seen[key] { // one row per académie
			continue
		}
		seen[key] = true
		pop := ""
		if row.Population != "-" {
			pop = row.Population
		}
		out.Vacances = append(out.Vacances, Periode{Description: row.Description, Dates: d, Population: pop})
	}
	// Every zone has holidays every school year: none means a zone (or year) the calendar
	// does not know, which is not an answer to charge for.
	if len(out.Vacances) == 0 {
		return nil, apierr.NotFound("the school calendar has no holidays for zone %q in %s (zones: Zone A, Zone B, Zone C, Corse, or an overseas académie as the calendar names it)", zone, annee)
	}
	return out, nil
}

// Risques is the answer of /v1/fr/georisques: the risks Géorisques' report on the commune
// marks present ("Connaître les risques près de chez moi").
type Risques struct {
	Insee   string   `json:"insee"`
	Commune string   `json:"commune"`
	Risques []Risque `json:"risques"`
	Rapport *string  `json:"rapport_url"` // the report's page on georisques.gouv.fr
}

// Risque is one present risk: Code is the report's key (inondation, seisme, icpe…), Statut
// its status text for the commune when Géorisques gives one ("Risque Existant").
type Risque struct {
	Code    string  `json:"code"`
	Libelle string  `json:"libelle"`
	Famille string  `json:"famille"` // naturel or technologique
	Statut  *string `json:"statut"`
}

func (r *Routes) georisques(ctx context.Context, req *catalog.Request) (any, error) {
	insee := req.Args.Str("insee")
	rep, err := r.risques.Report(ctx, insee)
	if err != nil {
		return nil, err
	}
	if rep.Empty() {
		return nil, apierr.NotFound("Géorisques knows no commune %s", insee)
	}
	out := Risques{Insee: insee, Commune: rep.Commune.Libelle, Risques: []Risque{}, Rapport: strPtr(rep.URL)}
	for _, p := range rep.Present() {
		out.Risques = append(out.Risques, Risque{Code: p.Key, Libelle: p.Label(), Famille: p.Famille, Statut: strPtr(p.StatutCommune)})
	}
	return out, nil
}

// Carburants is the answer of /v1/fr/carburants.
type Carburants struct {
	CP       string    `json:"cp"`
	Stations []Station `json:"stations"`
}

// Station is one fuel station; prices are euros per litre, null when not sold.
type Station struct {
	ID         int64    `json:"id"`
	Nom        string   `json:"nom"`
	Adresse    string   `json:"adresse"`
	Ville      string   `json:"ville"`
	Autoroute  bool     `json:"autoroute"`
	Lat        *float64 `json:"lat"`
	Lon        *float64 `json:"lon"`
	Prix       Prix     `json:"prix"`
	MiseAJour  *string  `json:"maj"` // newest price update
	Automate24 bool     `json:"automate_24_24"`
	Services   []string `json:"services"`
}

// Prix per fuel, keyed as the spec writes them (gazole, SP95, SP98, E85, GPL; E10 alike).
type Prix struct {
	Gazole *float64 `json:"gazole"`
	SP95   *float64 `json:"SP95"`
	SP98   *float64 `json:"SP98"`
	E10    *float64 `json:"E10"`
	E85    *float64 `json:"E85"`
	GPL    *float64 `json:"GPL"`
}

func (r *Routes) carburants(ctx context.Context, req *catalog.Request) (any, error) {
	cp := req.Args.Str("cp")
	p, err := r.economie.Carburants(ctx, cp)
	if err != nil {
		return nil, err
	}
	out := Carburants{CP: cp, Stations: []Station{}}
	for _, s := range p.Results {
		st := Station{ID: s.ID, Nom: strings.TrimSpace(s.Adresse + ", " + s.Ville), Adresse: s.Adresse, Ville: s.Ville, Autoroute: s.Pop == "A",
			Prix:       Prix{Gazole: s.GazolePrix.Ptr(), SP95: s.SP95Prix.Ptr(), SP98: s.SP98Prix.Ptr(), E10: s.E10Prix.Ptr(), E85: s.E85Prix.Ptr(), GPL: s.GPLcPrix.Ptr()},
			Automate24: s.Automate == "Oui", Services: nonNil(s.Services)}
		if s.Geom != nil {
			st.Lat, st.Lon = &s.Geom.Lat, &s.Geom.Lon
		}
		st.MiseAJour = strPtr(slices.Max([]string{s.GazoleMaj, s.SP95Maj, s.SP98Maj, s.E10Maj, s.E85Maj, s.GPLcMaj}))
		out.Stations = append(out.Stations, st)
	}
	// Cheapest diesel first, stations without diesel last.
	slices.SortStableFunc(out.Stations, func(a, b Station) int { return cmpPrice(a.Prix.Gazole, b.Prix.Gazole) })
	return out, nil
}

func cmpPrice(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}

// DPEs is the answer of /v1/fr/dpe.
type DPEs struct {
	Insee       *string        `json:"insee"`
	CP          *string        `json:"cp"`
	Total       int            `json:"total"`
	Repartition map[string]int `json:"repartition"` // labels among the results shown
	Results     []Diagnostic   `json:"results"`
}

// Diagnostic is one DPE.
type Diagnostic struct {
	Numero            string   `json:"numero"`
	Date              string   `json:"date"`
	Adresse           string   `json:"adresse"`
	EtiquetteDPE      string   `json:"etiquette_dpe"`
	EtiquetteGES      string   `json:"etiquette_ges"`
	ConsoM2           *float64 `json:"conso_kwhep_m2"`
	GESM2             *float64 `json:"ges_kgco2_m2"`
	Surface           *float64 `json:"surface_m2"`
	Type              string   `json:"type"`
	AnneeConstruction *int     `json:"annee_construction"`
}

func (r *Routes) dpe(ctx context.Context, req *catalog.Request) (any, error) {
	insee, cp := req.Args.Str("insee"), req.Args.Str("cp")
	q := ademe.DPEQuery{CP: cp, Size: 50}
	if insee != "" {
		// BAN-derived codes: Paris, Lyon and Marseille rows carry arrondissement codes.
		q.INSEE = plm.Arrondissements(insee)
		if q.INSEE == nil {
			q.INSEE = []string{insee}
		}
	}
	l, err := r.ademe.DPE(ctx, q)
	if err != nil {
		return nil, err
	}
	out := DPEs{Insee: strPtr(insee), CP: strPtr(cp), Total: l.Total, Repartition: map[string]int{}, Results: []Diagnostic{}}
	for _, d := range l.Results {
		out.Repartition[d.EtiquetteDPE]++
		out.Results = append(out.Results, Diagnostic{Numero: d.NumeroDPE, Date: d.Date, Adresse: d.Adresse, EtiquetteDPE: d.EtiquetteDPE,
			EtiquetteGES: d.EtiquetteGES, ConsoM2: d.ConsoM2, GESM2: d.GESM2, Surface: d.Surface, Type: d.TypeBatiment, AnneeConstruction: d.AnneeConstruction})
	}
	return out, nil
}

// Ecoles is the answer of /v1/fr/ecoles.
type Ecoles struct {
	Total   int     `json:"total"`
	Results []Ecole `json:"results"`
}

// Ecole is one establishment of the education directory.
type Ecole struct {
	UAI                  string   `json:"uai"`
	Nom                  string   `json:"nom"`
	Type                 string   `json:"type"`
	Nature               string   `json:"nature"`
	Ville                string   `json:"ville"`
	Status               string   `json:"status"` // Public or Privé
	Address              string   `json:"address"`
	CP                   string   `json:"cp"`
	Phone                *string  `json:"phone"`
	Mail                 *string  `json:"mail"`
	Web                  *string  `json:"web"`
	Lat                  *float64 `json:"lat"`
	Lon                  *float64 `json:"lon"`
	Eleves               *int     `json:"eleves"`
	EducationPrioritaire *string  `json:"education_prioritaire"`
}

func (r *Routes) ecoles(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.education.Annuaire(ctx, req.Args.Str("q"), req.Args.Str("cp"), 100)
	if err != nil {
		return nil, err
	}
	out := Ecoles{Total: p.TotalCount, Results: []Ecole{}}
	seen := map[string]bool{}
	for _, e := range p.Results {
		if seen[e.UAI] { // one school can be listed under two names
			continue
		}
		seen[e.UAI] = true
		out.Results = append(out.Results, Ecole{UAI: e.UAI, Nom: e.Nom, Type: e.Type, Nature: e.Nature, Ville: e.NomCommune, Status: e.Statut,
			Address: e.Adresse, CP: e.CodePostal, Phone: strPtr(e.Telephone), Mail: strPtr(e.Mail), Web: strPtr(e.Web),
			Lat: e.Latitude, Lon: e.Longitude, Eleves: e.NombreDEleves, EducationPrioritaire: strPtr(e.EducationPrioritaire)})
	}
	return out, nil
}

// Ventes is the answer of /v1/fr/valeurs-foncieres.
type Ventes struct {
	Insee     string     `json:"insee"`
	Annee     int        `json:"annee"`
	Total     int        `json:"total"`
	Mutations []Mutation `json:"mutations"`
	Note      string     `json:"note"`
}

// Mutation is one sale, its price counted once whatever the number of lines it spans.
type Mutation struct {
	ID             string   `json:"id"`
	Date           string   `json:"date"`
	Nature         string   `json:"nature"`
	ValeurFonciere *float64 `json:"valeur_fonciere"` // euros
	SurfaceBatiM2  int      `json:"surface_bati_m2"`
	Pieces         int      `json:"pieces"`
	SurfaceTerrain int      `json:"surface_terrain_m2"`
	Type           string   `json:"type"`
	Adresse        string   `json:"adresse"`
	Parcelles      []string `json:"parcelles"`
	Lat            *float64 `json:"lat"`
	Lon            *float64 `json:"lon"`
}

// maxMutations bounds the answer; total still counts every sale.
const maxMutations = 500

func (r *Routes) valeursFoncieres(ctx context.Context, req *catalog.Request) (any, error) {
	insee := req.Args.Str("insee")
	year, _ := strconv.Atoi(req.Args.Str("annee"))
	if d := insee[:2]; d == "57" || d == "67" || d == "68" || strings.HasPrefix(insee, "976") {
		return nil, apierr.NotFound("DVF does not cover Alsace-Moselle (57, 67, 68) nor Mayotte: their land registry is kept apart")
	}
	ms, err := r.dvf.Mutations(ctx, year, insee)
	if errors.Is(err, dvf.ErrNoFile) {
		return nil, apierr.NotFound("DVF publishes no file for commune %s in %d: the year is not published yet (files come out each spring and autumn)", insee, year)
	}
	if err != nil {
		return nil, err
	}
	out := Ventes{Insee: insee, Annee: year, Total: len(ms), Mutations: []Mutation{},
		Note: "one entry per sale (id_mutation); valeur_fonciere is the price of the whole sale"}
	for _, m := range ms[:min(len(ms), maxMutations)] {
		out.Mutations = append(out.Mutations, Mutation{ID: m.ID, Date: m.Date, Nature: m.Nature, ValeurFonciere: m.Valeur, SurfaceBatiM2: m.SurfaceBati,
			Pieces: m.Pieces, SurfaceTerrain: m.SurfaceTerrain, Type: m.Type, Adresse: m.Adresse, Parcelles: nonNil(m.Parcelles), Lat: m.Lat, Lon: m.Lon})
	}
	return out, nil
}

// wmo describes the WMO weather codes in French.
var wmo = map[int]string{
	0: "Ciel dégagé", 1: "Principalement dégagé", 2: "Partiellement nuageux", 3: "Couvert", 45: "Brouillard", 48: "Brouillard givrant",
	51: "Bruine faible", 53: "Bruine modérée", 55: "Bruine dense", 56: "Bruine verglaçante faible", 57: "Bruine verglaçante dense",
	61: "Pluie faible", 63: "Pluie modérée", 65: "Pluie forte", 66: "Pluie verglaçante faible", 67: "Pluie verglaçante forte",
	71: "Chute de neige faible", 73: "Chute de neige modérée", 75: "Chute de neige forte", 77: "Grains de neige",
	80: "Averses de pluie faibles", 81: "Averses de pluie modérées", 82: "Averses de pluie violentes",
	85: "Averses de neige faibles", 86: "Averses de neige fortes", 95: "Orage faible ou modéré",
	96: "Orage avec grêle faible", 99: "Orage avec grêle forte",
}

func describe(code *int) string {
	if code == nil {
		return "Conditions inconnues"
	}
	if d, ok := wmo[*code]; ok {
		return d
	}
	return "Conditions inconnues"
}

// Meteo is the answer of /v1/fr/meteo.
type Meteo struct {
	Lat        float64     `json:"lat"`
	Lon        float64     `json:"lon"`
	Actuel     Actuel      `json:"actuel"`
	Previsions []Prevision `json:"previsions"`
	Source     string      `json:"source"`
}

// Actuel are the current conditions.
type Actuel struct {
	Heure       string   `json:"heure"`
	Temperature *float64 `json:"temperature"` // °C
	VentKmh     *float64 `json:"vent_kmh"`
	Code        *int     `json:"code"`
	Description string   `json:"description"`
}

// Prevision is one day.
type Prevision struct {
	Date        string   `json:"date"`
	Tmax        *float64 `json:"tmax"`
	Tmin        *float64 `json:"tmin"`
	PluieMM     *float64 `json:"pluie_mm"`
	Code        *int     `json:"code"`
	Description string   `json:"description"`
}

func at[T any](s []*T, i int) *T {
	if i < len(s) {
		return s[i]
	}
	return nil
}

func (r *Routes) meteoFR(ctx context.Context, req *catalog.Request) (any, error) {
	days := int(req.Args.Int("jours"))
	if days == 0 {
		days = 3
	}
	f, err := r.meteo.Forecast(ctx, req.Args.Float("lat"), req.Args.Float("lon"), days)
	if err != nil {
		return nil, err
	}
	out := Meteo{Lat: f.Latitude, Lon: f.Longitude, Source: "Open-Meteo (CC BY 4.0)",
		Actuel:     Actuel{Heure: f.Current.Time, Temperature: f.Current.Temperature2m, VentKmh: f.Current.WindSpeed10m, Code: f.Current.WeatherCode, Description: describe(f.Current.WeatherCode)},
		Previsions: []Prevision{}}
	for i, d := range f.Daily.Time {
		c := at(f.Daily.WeatherCode, i)
		out.Previsions = append(out.Previsions, Prevision{Date: d, Tmax: at(f.Daily.Temperature2mMax, i), Tmin: at(f.Daily.Temperature2mMin, i),
			PluieMM: at(f.Daily.PrecipitationSum, i), Code: c, Description: describe(c)})
	}
	return out, nil
}

// Weather is the answer of /v1/weather, in Open-Meteo's own field names.
type Weather struct {
	Location WeatherPlace   `json:"location"`
	Current  WeatherCurrent `json:"current"`
	Daily    WeatherDaily   `json:"daily"`
	Source   string         `json:"source"`
}

// WeatherPlace is where the forecast is for.
type WeatherPlace struct {
	Name    *string `json:"name"`
	Country *string `json:"country_code"`
	Lat     float64 `json:"lat"`
	Lon     float64 `json:"lon"`
}

// WeatherCurrent are the current conditions.
type WeatherCurrent struct {
	Time          string   `json:"time"`
	Temperature2m *float64 `json:"temperature_2m"`
	WindSpeed10m  *float64 `json:"wind_speed_10m"`
	WeatherCode   *int     `json:"weather_code"`
}

// WeatherDaily is the 3-day forecast, as parallel arrays.
type WeatherDaily struct {
	Time             []string   `json:"time"`
	Temperature2mMax []*float64 `json:"temperature_2m_max"`
	Temperature2mMin []*float64 `json:"temperature_2m_min"`
	WeatherCode      []*int     `json:"weather_code"`
}

func (r *Routes) weather(ctx context.Context, req *catalog.Request) (any, error) {
	var loc WeatherPlace
	switch {
	case req.Args.Has("lat"): // the catalog makes lat and lon come together
		loc.Lat, loc.Lon = req.Args.Float("lat"), req.Args.Float("lon")
	default:
		city := req.Args.Str("city")
		p, err := r.meteo.Geocode(ctx, city)
		if err != nil {
			return nil, err
		}
		if p == nil {
			return nil, apierr.NotFound("no place named %q", city)
		}
		loc = WeatherPlace{Name: strPtr(p.Name), Country: strPtr(p.CountryCode), Lat: p.Latitude, Lon: p.Longitude}
	}
	f, err := r.meteo.Forecast(ctx, loc.Lat, loc.Lon, 3)
	if err != nil {
		return nil, err
	}
	return Weather{Location: loc, Source: "Open-Meteo (CC BY 4.0)",
		Current: WeatherCurrent{Time: f.Current.Time, Temperature2m: f.Current.Temperature2m, WindSpeed10m: f.Current.WindSpeed10m, WeatherCode: f.Current.WeatherCode},
		Daily:   WeatherDaily{Time: nonNil(f.Daily.Time), Temperature2mMax: f.Daily.Temperature2mMax, Temperature2mMin: f.Daily.Temperature2mMin, WeatherCode: f.Daily.WeatherCode}}, nil
}

// Transport is the answer of /v1/fr/transport.
type Transport struct {
	Query    string    `json:"query"`
	Total    int       `json:"total"`
	Datasets []Dataset `json:"datasets"`
}

// Dataset is one catalogue entry.
type Dataset struct {
	ID         string  `json:"id"`
	Titre      string  `json:"titre"`
	Type       string  `json:"type"`
	Territoire *string `json:"territoire"`
	Editeur    *string `json:"editeur"`
	PageURL    string  `json:"page_url"`
	Feeds      []Feed  `json:"feeds"`
}

// Feed is one resource.
type Feed struct {
	Format      string  `json:"format"`
	URL         string  `json:"url"`
	ValiditeFin *string `json:"validite_fin"`
}

// maxDatasets bounds the answer.
const maxDatasets = 50

func (r *Routes) transportDatasets(ctx context.Context, req *catalog.Request) (any, error) {
	q := req.Args.Str("q")
	all, err := r.transport.Datasets(ctx)
	if err != nil {
		return nil, err
	}
	out := Transport{Query: q, Datasets: []Dataset{}}
	for _, d := range all {
		var pub string
		area := d.AreaNames()
		if d.Publisher != nil {
			pub = d.Publisher.Name
		}
		text := d.Title + " " + area + " " + pub
		for _, res := range d.Resources {
			text += " " + res.Format
		}
		if !fold.Contains(text, q) {
			continue
		}
		out.Total++
		if len(out.Datasets) == maxDatasets {
			continue
		}
		ds := Dataset{ID: d.ID, Titre: d.Title, Type: d.Type, Territoire: strPtr(area), Editeur: strPtr(pub), PageURL: d.PageURL, Feeds: []Feed{}}
		for _, res := range d.Resources {
			ds.Feeds = append(ds.Feeds, Feed{Format: res.Format, URL: res.URL, ValiditeFin: strPtr(res.EndCalendarValidity)})
		}
		out.Datasets = append(out.Datasets, ds)
	}
	return out, nil
}

// IRVE is the answer of /v1/fr/irve.
type IRVE struct {
	Insee      string  `json:"insee"`
	NbStations int     `json:"nb_stations"`
	NbPDC      int     `json:"nb_pdc"`
	NbRapides  int     `json:"nb_rapides"` // stations with a point of 50 kW or more
	Bornes     []Borne `json:"bornes"`
	// Truncated: the commune has more points than the pages read; the counts are then
	// lower bounds.
	Truncated bool `json:"truncated"`
}

// Borne is one charging station with its points.
type Borne struct {
	Station     string      `json:"station"`
	ID          string      `json:"id"`
	Operateur   string      `json:"operateur"`
	Adresse     string      `json:"adresse"`
	NbPDC       int         `json:"nb_pdc"`
	PuissanceKW float64     `json:"puissance_kw"` // the strongest point
	Connectors  []string    `json:"connectors"`
	Gratuit     bool        `json:"gratuit"`
	Access      string      `json:"access"`
	Horaires    string      `json:"horaires"`
	Coordinates *Coordinate `json:"coordinates"`
}

// Coordinate is a WGS84 point.
type Coordinate struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

func (r *Routes) irve(ctx context.Context, req *catalog.Request) (any, error) {
	insee := req.Args.Str("insee")
	pdcs, truncated, err := r.tabular.IRVE(ctx, insee)
	if err != nil {
		return nil, err
	}
	out := IRVE{Insee: insee, NbPDC: len(pdcs), Bornes: []Borne{}, Truncated: truncated}
	idx := map[string]int{}
	for _, p := range pdcs {
		i, ok := idx[p.IDStation]
		if !ok {
			i = len(out.Bornes)
			idx[p.IDStation] = i
			b := Borne{Station: p.NomStation, ID: p.IDStation, Operateur: nonEmpty(p.NomOperateur, p.NomEnseigne), Adresse: p.Adresse,
				Connectors: []string{}, Gratuit: tabular.Bool(p.Gratuit), Access: p.ConditionAcces, Horaires: p.Horaires}
			if p.Latitude.Valid && p.Longitude.Valid {
				b.Coordinates = &Coordinate{Lat: p.Latitude.V, Lon: p.Longitude.V}
			}
			out.Bornes = append(out.Bornes, b)
		}
		b := &out.Bornes[i]
		b.NbPDC++
		if p.Puissance.Valid && p.Puissance.V > b.PuissanceKW {
			b.PuissanceKW = p.Puissance.V
		}
		for name, v := range map[string]any{"EF": p.PriseEF, "Type 2": p.Prise2, "Combo CCS": p.PriseCCS, "CHAdeMO": p.PriseChademo, "Autre": p.PriseAutre} {
			if tabular.Bool(v) && !slices.Contains(b.Connectors, name) {
				b.Connectors = append(b.Connectors, name)
			}
		}
		slices.Sort(b.Connectors)
	}
	out.NbStations = len(out.Bornes)
	for _, b := range out.Bornes {
		if b.PuissanceKW >= 50 {
			out.NbRapides++
		}
	}
	return out, nil
}
