package jetstream

import "strings"

// advisorySubjects are JetStream's stream and consumer advisories: created,
// updated, deleted and the rest, in the connection's account.
const advisorySubjects = "$JS.EVENT.ADVISORY.>"

// advisory wakes every user on the connection whose server object belongs
// to the stream the advisory names. A consumer advisory names its stream
// too, so a deleted consumer and a deleted stream both reach the
// resources that must recreate them.
func (p *Pool) advisory(key, subject string) {
	stream := advisoryStream(subject)
	if stream == "" || p.OnChange == nil {
		return
	}
	p.mu.Lock()
	var wake []User
	for user, u := range p.users {
		if u.conn.key == key && u.stream == stream {
			wake = append(wake, user)
		}
	}
	p.mu.Unlock()
	for _, u := range wake {
		p.OnChange(u)
	}
}

// advisoryStream returns the stream an advisory subject names, or "":
// $JS.EVENT.ADVISORY.STREAM.<event>.<stream> and
// $JS.EVENT.ADVISORY.CONSUMER.<event>.<stream>.<consumer>.
func advisoryStream(subject string) string {
	parts := strings.Split(subject, ".")
	if len(parts) < 6 || parts[0] != "$JS" || parts[1] != "EVENT" || parts[2] != "ADVISORY" {
		return ""
	}
	switch parts[3] {
	case "STREAM", "CONSUMER":
		return parts[5]
	}
	return ""
}
