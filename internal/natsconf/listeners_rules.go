package natsconf

import "fmt"

// webSocketRules: the websocket block as the check reads it. Its tls block
// is the operator's (validateListeners checks it) and names files only the
// pod has, so Config.forCheck stands no_tls in for it: a websocket block
// here must say no_tls, or nats-server would refuse it.
var webSocketRules = map[string]rule{
	"port":            port,
	"no_tls":          boolean,
	"allowed_origins": origins,
	"compression":     boolean,
}

// mqttRules: the mqtt block as the check reads it (no tls, as above).
var mqttRules = map[string]rule{
	"port":            port,
	"stream_replicas": intBetween(1, 5),
}

// origins: an array of absolute http(s) URLs with a host, as
// validateWebsocketOptions requires.
func origins(path string, v any) error {
	if err := stringArray(path, v); err != nil {
		return err
	}
	for i, e := range v.([]any) {
		if err := validateOrigin(e.(string)); err != nil {
			return fmt.Errorf("%s[%d]: %w", path, i, err)
		}
	}
	return nil
}

// checkListeners holds the rules across blocks that nats-server applies at
// start: a websocket listener in plaintext only when it says no_tls, an
// mqtt listener only with JetStream and a server name.
func checkListeners(parsed map[string]any) error {
	if ws, ok := parsed["websocket"].(map[string]any); ok {
		if noTLS, _ := ws["no_tls"].(bool); !noTLS {
			return fmt.Errorf(`"websocket" needs tls or no_tls: true`)
		}
	}
	if _, ok := parsed["mqtt"]; ok {
		if _, js := parsed["jetstream"]; !js {
			return fmt.Errorf(`"mqtt" needs JetStream`)
		}
		if _, named := parsed["server_name"]; !named {
			return fmt.Errorf(`"mqtt" needs server_name`)
		}
	}
	return nil
}
