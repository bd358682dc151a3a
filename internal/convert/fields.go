package convert

// A rule says what becomes of one NACK spec field: carried under the
// kubenats name (the same, mostly: kubenats kept NACK's names), read by
// the target (connection settings), or not carried and why.
type rule struct {
	to      string // the kubenats spec field; "" when not carried as a field
	target  bool   // read by targetOf, not copied
	lost    string // why it is not carried
	nested  map[string]rule
	nestedL bool // nested applies to each element of a list
}

func same(names ...string) map[string]rule {
	out := map[string]rule{}
	for _, n := range names {
		out[n] = rule{to: n}
	}
	return out
}

func with(base map[string]rule, more map[string]rule) map[string]rule {
	out := map[string]rule{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// Why the connection settings NACK reads from files in its own pod cannot
// be carried: kubenats reads credentials only from Secrets their owner
// labelled for it.
const (
	fileCredentials = "a file in NACK's pod; kubenats reads credentials from a Secret: " +
		"put the file in a Secret under key creds (or nkey), label it kubenats.io/allow=true, " +
		"and name it in spec.connection.credentialsSecretRef, or use a NACK Account with a Secret"
	fileTLS = "files in NACK's pod; put ca.crt, tls.crt and tls.key in a Secret, label it " +
		"kubenats.io/allow=true, and name it in spec.connection.tlsSecretRef"
	noTLSFirst = "kubenats' connection to a NATS system it does not run has no TLS-first option; " +
		"a NatsCluster's spec.tls.client.handshakeFirst applies to connections to it"
)

// connectionRules are NACK's connection options, on every kind.
var connectionRules = map[string]rule{
	"account":       {target: true},
	"servers":       {target: true},
	"jsDomain":      {target: true},
	"creds":         {lost: fileCredentials},
	"nkey":          {lost: fileCredentials},
	"tls":           {lost: fileTLS},
	"tlsFirst":      {lost: noTLSFirst},
	"preventDelete": {to: "preventDelete"},
	"preventUpdate": {to: "preventUpdate"},
}

var subjectTransformRules = same("source", "dest")

var sourceRules = with(same("name", "optStartSeq", "optStartTime", "filterSubject", "externalApiPrefix", "externalDeliverPrefix"),
	map[string]rule{
		"subjectTransforms": {to: "subjectTransforms", nested: subjectTransformRules, nestedL: true},
		"consumer":          {to: "consumer", nested: same("name", "deliverSubject")},
	})

var placementRules = same("cluster", "tags")

var republishRules = map[string]rule{
	"source":       {to: "source"},
	"destination":  {to: "destination"},
	"headers_only": {to: "headersOnly"},
}

var streamRules = with(connectionRules, with(same(
	"name", "description", "subjects", "retention", "maxConsumers", "maxMsgsPerSubject", "maxMsgs", "maxBytes",
	"maxAge", "maxMsgSize", "storage", "discard", "replicas", "noAck", "duplicateWindow", "compression",
	"sealed", "denyDelete", "denyPurge", "allowDirect", "allowRollup", "mirrorDirect", "discardPerSubject",
	"firstSequence", "metadata", "allowMsgTtl", "subjectDeleteMarkerTtl", "allowMsgCounter",
	"allowAtomicPublish", "allowMsgSchedules", "persistMode"),
	map[string]rule{
		"placement":        {to: "placement", nested: placementRules},
		"mirror":           {to: "mirror", nested: sourceRules},
		"sources":          {to: "sources", nested: sourceRules, nestedL: true},
		"subjectTransform": {to: "subjectTransform", nested: subjectTransformRules},
		"republish":        {to: "republish", nested: republishRules},
		"consumerLimits":   {to: "consumerLimits", nested: same("inactiveThreshold", "maxAckPending")},
		// nats-server's allow_batched is what kubenats calls allowBatchPublish.
		"allowBatched": {to: "allowBatchPublish"},
	}))

var consumerRules = with(connectionRules, with(same(
	"streamName", "durableName", "description", "ackPolicy", "ackWait", "deliverPolicy", "deliverSubject",
	"deliverGroup", "filterSubject", "filterSubjects", "flowControl", "heartbeatInterval", "maxAckPending",
	"maxDeliver", "backoff", "maxWaiting", "optStartSeq", "optStartTime", "rateLimitBps", "replayPolicy",
	"sampleFreq", "headersOnly", "maxRequestBatch", "maxRequestExpires", "maxRequestMaxBytes",
	"inactiveThreshold", "replicas", "memStorage", "metadata", "pauseUntil", "priorityPolicy",
	"priorityGroups"),
	map[string]rule{
		// NACK's name is the consumer's name beside its durable name;
		// a kubenats Consumer is durable, named by durableName
		// (consumerName reconciles the two).
		"name": {target: true},
		// The pinned client's timeout is the server's priority_timeout.
		"pinnedTtl": {to: "priorityTimeout"},
	}))

var keyValueRules = with(connectionRules, with(same(
	"bucket", "description", "maxValueSize", "history", "ttl", "maxBytes", "storage", "replicas", "compression"),
	map[string]rule{
		"placement": {to: "placement", nested: placementRules},
		"republish": {to: "republish", nested: republishRules},
		"mirror":    {to: "mirror", nested: sourceRules},
		"sources":   {to: "sources", nested: sourceRules, nestedL: true},
	}))

var objectStoreRules = with(connectionRules, with(same(
	"bucket", "description", "ttl", "maxBytes", "storage", "replicas", "compression", "metadata"),
	map[string]rule{
		"placement": {to: "placement", nested: placementRules},
	}))
