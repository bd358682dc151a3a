// Package convert turns NACK's JetStream manifests (jetstream.nats.io/v1beta2
// Stream, Consumer, KeyValue, ObjectStore and Account) into kubenats'
// resources, for `kubenats convert`.
//
// Every NACK field has a rule (fields.go): carried to the kubenats field
// of the same meaning, or not carried, with why and what to do instead.
// A field with no rule is reported too, never passed on silently. The
// converted resources adopt the server objects NACK made (adoptExisting),
// so that applying them takes over what exists and re-creates nothing.
package convert
