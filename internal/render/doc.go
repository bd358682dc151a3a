// Package render turns a NatsCluster into the Kubernetes objects that run it.
//
// Every function here is pure: the same NatsCluster and Inputs give the same
// objects, with no client, clock or randomness. The controller applies what
// Objects returns; `kubenats render` prints it for GitOps users.
package render
