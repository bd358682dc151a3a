package natsmon

import (
	"context"
	"net"
	"net/http"
	"strconv"
)

// FetchVersion reads one server's version from /varz on its monitor port.
func FetchVersion(ctx context.Context, c *http.Client, ip string, port int) (string, error) {
	url := "http://" + net.JoinHostPort(ip, strconv.Itoa(port)) + "/varz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var varz struct {
		Version string `json:"version"`
	}
	if err := decodeJSON(resp, maxVarzBody, &varz); err != nil {
		return "", err
	}
	return varz.Version, nil
}
