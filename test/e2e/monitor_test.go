package e2e_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"
)

// The servers' monitoring endpoint (port 8222), read as an operator of a
// real cluster would, at each pod's address.

var monitorClient = &http.Client{Timeout: 5 * time.Second}

// monitor GETs path from the server at ip and decodes its JSON into out.
func monitor(ip, path string, out any) error {
	url := "http://" + net.JoinHostPort(ip, "8222") + path
	resp, err := monitorClient.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

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
