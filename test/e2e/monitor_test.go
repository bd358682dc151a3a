package e2e_test

import (
	"net/http"
	"time"

	"github.com/kubenats/kubenats/test/e2ekit"
)

// The servers' monitoring endpoint (port 8222), read as an operator of a
// real cluster would, at each pod's address.

// monitorClient reads what e2ekit.Monitor does not decode (/healthz).
var monitorClient = &http.Client{Timeout: 5 * time.Second}

// monitor is e2ekit.Monitor: GET path from the server at ip, JSON into out.
var monitor = e2ekit.Monitor

// routez is the part of /routez the tests read.
type routez struct {
	ServerName string `json:"server_name"`
	NumRoutes  int    `json:"num_routes"`
	Routes     []struct {
		RemoteName string `json:"remote_name"`
		Account    string `json:"account"`
	} `json:"routes"`
}

// jsz is the part of /jsz the tests read.
type jsz struct {
	Meta *struct {
		Leader   string `json:"leader"`
		Size     int    `json:"cluster_size"`
		Replicas []struct {
			Name    string `json:"name"`
			Current bool   `json:"current"`
			Offline bool   `json:"offline"`
		} `json:"replicas"`
	} `json:"meta_cluster"`
}

// connz is the part of /connz?auth=true the tests read.
type connz struct {
	Connections []struct {
		Name           string `json:"name"`
		AuthorizedUser string `json:"authorized_user"`
		Account        string `json:"account"`
	} `json:"connections"`
}

// varz is the part of /varz the tests read.
type varz struct {
	ServerName string `json:"server_name"`
	Version    string `json:"version"`
}
