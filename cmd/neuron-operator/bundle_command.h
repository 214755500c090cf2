// File: cmd/neuron-operator/bundle_command.h
// `neuron-operator bundle` and `neuron-operator catalog`: the OLM bundle and file-based catalog
// made from the install manifests (`kubectl kustomize deploy/operator`), written to a directory.
#pragma once

namespace neuron::op {

// argv without the program name and the subcommand word. Return the process exit code.
int BundleCommand(int argc, char** argv);
int CatalogCommand(int argc, char** argv);

}  // namespace neuron::op
