package e2elisteners_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// varz is the part of a server's /varz these tests read.
type varz struct {
	Start     time.Time         `json:"start"`
	Metadata  map[string]string `json:"metadata"`
	Websocket struct {
		Port           int      `json:"port"`
		AllowedOrigins []string `json:"allowed_origins"`
	} `json:"websocket"`
	MQTT struct {
		Port int `json:"port"`
	} `json:"mqtt"`
}

// readVarz reads ip's /varz on the monitor port.
func readVarz(ctx context.Context, ip string) (varz, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ip+":8222/varz", nil)
	if err != nil {
		return varz{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return varz{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return varz{}, fmt.Errorf("/varz: %s", resp.Status)
	}
	var v varz
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v)
	return v, err
}
