package e2elisteners_test

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// mqttClient connects a real MQTT 3.1.1 client (paho) to addr (host:port)
// as user/password, TLS when tlsConf is set, and returns it with the
// CONNACK's verdict: nil, or paho's error for the return code the server
// sent. It never retries: a refusal is the error returned.
func mqttClient(addr, clientID, user, password string, clean bool, tlsConf *tls.Config, onMsg mqtt.MessageHandler) (mqtt.Client, error) {
	scheme := "tcp"
	if tlsConf != nil {
		scheme = "ssl"
	}
	o := mqtt.NewClientOptions().AddBroker(scheme + "://" + addr).SetClientID(clientID).
		SetCleanSession(clean).SetAutoReconnect(false).SetConnectRetry(false).
		SetConnectTimeout(10 * time.Second).SetProtocolVersion(4).SetOrderMatters(false)
	if user != "" {
		o.SetUsername(user)
	}
	if password != "" {
		o.SetPassword(password)
	}
	if tlsConf != nil {
		o.SetTLSConfig(tlsConf)
	}
	if onMsg != nil {
		o.SetDefaultPublishHandler(onMsg)
	}
	c := mqtt.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(20 * time.Second) {
		return nil, errors.New("no CONNACK within 20s")
	}
	if err := tok.Error(); err != nil {
		return nil, err
	}
	return c, nil
}

// isNotAuthorized: the server's CONNACK said 5 (not authorized) or 4 (bad
// user name or password): MQTT's explicit refusal, not a timeout or a
// dropped connection.
func isNotAuthorized(err error) bool {
	return errors.Is(err, packets.ErrorRefusedNotAuthorised) || errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword)
}

// collector gathers MQTT messages by topic.
type collector struct {
	mu   sync.Mutex
	msgs map[string][]mqttMsg
}

type mqttMsg struct {
	payload  string
	retained bool
}

func newCollector() *collector { return &collector{msgs: map[string][]mqttMsg{}} }

func (c *collector) handle(_ mqtt.Client, m mqtt.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs[m.Topic()] = append(c.msgs[m.Topic()], mqttMsg{string(m.Payload()), m.Retained()})
}

func (c *collector) get(topic string) []mqttMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]mqttMsg(nil), c.msgs[topic]...)
}

// wsUpgradeStatus opens a WebSocket upgrade to addr with the given Origin
// header (none when empty) and returns the HTTP status the server
// answers: 101 when it accepts, 403 when it refuses the origin.
func wsUpgradeStatus(addr, origin string, tlsConf *tls.Config) (int, error) {
	var conn net.Conn
	var err error
	d := &net.Dialer{Timeout: 10 * time.Second}
	if tlsConf != nil {
		conn, err = tls.DialWithDialer(d, "tcp", addr, tlsConf)
	} else {
		conn, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(15 * time.Second))
	req := "GET / HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
	if origin != "" {
		req += "Origin: " + origin + "\r\n"
	}
	if _, err := conn.Write([]byte(req + "\r\n")); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusSwitchingProtocols && !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") {
		return 0, fmt.Errorf("101 without Upgrade: websocket")
	}
	return resp.StatusCode, nil
}
