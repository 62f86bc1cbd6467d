package fleet

// Config is the [fleet] section: on a gateway, where its hub listens for boxes; on a box, the
// credentials it joined with and where its traffic exits.
type Config struct {
	LeafAddr    string   `toml:"leaf_addr" doc:"gateway: host:port of the TLS leaf listener that boxes dial out to"`
	LeafHosts   []string `toml:"leaf_hosts" doc:"gateway: the names boxes reach the leaf listener by (its certificate and the enrolment URL); default the host of leaf_addr"`
	EnrolAddr   string   `toml:"enrol_addr" doc:"gateway: host:port of the public HTTPS listener where boxes redeem their one-time enrolment tokens"`
	Credentials string   `toml:"credentials" doc:"box: the credentials file appliance join writes at enrolment and joins with (per-box nkey made on the box, hub URL and CA); default fleet-credentials.json in state_dir"`
	Box         string   `toml:"box" doc:"box: this box's name, the one its enrolment token was made for (a-z, 0-9, '-', '_')"`
	Gateway     string   `toml:"gateway" doc:"box: the gateway's enrolment URL (https://host:7423), used only while the box has no credentials"`
	Token       string   `toml:"token" doc:"box: the one-time enrolment token from appliance gateway token, used only while the box has no credentials"`
	Country     string   `toml:"country" doc:"box: ISO 3166-1 alpha-2 country of the box's exit"`
	ASN         uint32   `toml:"asn" doc:"box: autonomous system number of the box's exit"`
	// KernelTunnel: the box's tunnel is the image's kernel WireGuard, configured by
	// systemd-networkd from appliance join --networkd, and join listens on the tunnel address;
	// otherwise appliance join runs the tunnel in user space.
	KernelTunnel bool `toml:"kernel_tunnel" doc:"box: the tunnel is kernel WireGuard set up by systemd-networkd (appliance join --networkd), join listening on its address; default: join runs the tunnel in user space"`
	// Proxy packages across the fleet (gateway side; a box needs only its credentials).
	ProxyListen    string `toml:"proxy_listen" doc:"gateway: host:port where buyers of proxy packages sold on the boxes connect (empty: no proxy sales on the fleet)"`
	ProxyHost      string `toml:"proxy_host" doc:"gateway: the public name a sold package's proxy URL names; default the first of leaf_hosts"`
	TunnelPort     int    `toml:"tunnel_port" doc:"gateway: UDP port of the WireGuard tunnel boxes dial out to for proxy tunnels"`
	TunnelEndpoint string `toml:"tunnel_endpoint" doc:"gateway: host:port boxes send WireGuard to, given at enrolment; default the first of leaf_hosts and tunnel_port"`
}

// DefaultConfig listens for boxes on every address, on NATS's leaf node port and the port
// after it for enrolment; the proxy tunnels' UDP port is WireGuard's usual one.
func DefaultConfig() Config {
	return Config{LeafAddr: "0.0.0.0:7422", EnrolAddr: "0.0.0.0:7423", TunnelPort: 51820}
}
