package exporter

// The monitor endpoints the exporter reads, one request each per scrape.
// /jsz asks for what the series need and no more: accounts, streams and
// consumers with their Raft groups (leader, replicas and their lag), but no
// stream or consumer config, which is the bulk of the answer and carries
// nothing a series shows.
const (
	VarzPath    = "/varz"
	HealthzPath = "/healthz"
	JSZPath     = "/jsz?accounts=true&streams=true&consumers=true&config=false&raft=true"
)
