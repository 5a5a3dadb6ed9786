// Package deploy holds no Go code: it is the home of Floe's deployment files
// (deploy/docker, deploy/cloudformation, deploy/terraform, deploy/local) and of
// the tests that keep them consistent with the Makefile and the configuration:
// the image's build stage runs exactly `make release`, the release recipe builds a
// static binary stamped with version and commit, and every FLOE_* variable the
// templates set is a real configuration field, the same in CloudFormation and
// Terraform.
package deploy
