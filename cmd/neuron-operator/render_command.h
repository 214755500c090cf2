// File: cmd/neuron-operator/render_command.h
// `neuron-operator render -f deviceconfig.yaml`: every object a reconcile would apply for that
// DeviceConfig, as YAML in apply order, without a cluster. Flags describe the cluster's
// optional APIs (what discovery would find).
#pragma once

namespace neuron::op {

// argv without the program name and the "render" word. Returns the process exit code.
int RenderCommand(int argc, char** argv);

}  // namespace neuron::op
