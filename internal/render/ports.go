package render

// Ports of a NATS server (the official chart's numbers).
const (
	ClientPort  = 4222
	ClusterPort = 6222
	MonitorPort = 8222
)

// Paths inside the nats container.
const (
	ConfigDir  = "/etc/nats-config"
	ConfigFile = ConfigDir + "/nats.conf"
	PidDir     = "/var/run/nats"
	PidFile    = PidDir + "/nats.pid"
	StoreDir   = "/data"
)
