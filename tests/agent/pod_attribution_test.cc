// File: tests/agent/pod_attribution_test.cc
// PodResources List replies (in the kubelet's shapes, as text protos) -> which pod holds each
// physical core: both device-plugin resources, DRA claims, shared cores and hostile entries.
#include "lib/agent/pod_attribution.h"

#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "google/protobuf/text_format.h"

namespace neuron::agent {
namespace {

v1::ListPodResourcesResponse Reply(const std::string& text) {
  v1::ListPodResourcesResponse r;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &r));
  return r;
}

// trn2.48xlarge-like: 16 devices of 8 physical cores, LNC=2 (4 logical cores per device).
NodeLayout Trn2(int lnc = 2) {
  NodeLayout l;
  for (int i = 0; i < 16; ++i) l.devices.push_back({i, 8});
  l.lnc = lnc;
  l.pool = "node-a";
  return l;
}

CoreAllocation Row(int device, int core, const std::string& container, const std::string& resource,
                   const std::string& pod = "train-0") {
  return {device, core, "ml", pod, container, resource};
}

TEST_CASE("aws.amazon.com/neuron IDs hold every physical core of the device", "[agent]") {
  const PodAttribution a =
      AttributePods(Reply(R"pb(
                      pod_resources {
                        name: "train-0"
                        namespace: "ml"
                        containers {
                          name: "main"
                          devices { resource_name: "aws.amazon.com/neuron" device_ids: "3" }
                          devices { resource_name: "vpc.amazonaws.com/efa" device_ids: "3" }
                        }
                      })pb"),
                    Trn2());
  REQUIRE(a.cores.size() == 8);
  for (int c = 0; c < 8; ++c) CHECK(a.cores[c] == Row(3, c, "main", "aws.amazon.com/neuron"));
  CHECK(a.problems_total == 0);
}

TEST_CASE("aws.amazon.com/neuroncore IDs are logical cores of the node, at its LNC", "[agent]") {
  const auto reply = Reply(R"pb(
    pod_resources {
      name: "train-0"
      namespace: "ml"
      containers {
        name: "main"
        devices { resource_name: "aws.amazon.com/neuroncore" device_ids: "5" device_ids: "63" }
      }
    })pb");
  // LNC=2: logical 5 = device 1, logical core 1 = physical 2,3; 63 = device 15, physical 6,7.
  const PodAttribution two = AttributePods(reply, Trn2(2));
  const std::string nc = "aws.amazon.com/neuroncore";
  CHECK(two.cores == std::vector<CoreAllocation>{Row(1, 2, "main", nc), Row(1, 3, "main", nc),
                                                 Row(15, 6, "main", nc), Row(15, 7, "main", nc)});
  // LNC=1: 8 logical per device; 63 is device 7's core 7.
  const PodAttribution one = AttributePods(reply, Trn2(1));
  CHECK(one.cores == std::vector<CoreAllocation>{Row(0, 5, "main", nc), Row(7, 7, "main", nc)});
  // LNC unknown: the IDs cannot be placed, and that is said.
  const PodAttribution unknown = AttributePods(reply, Trn2(0));
  CHECK(unknown.cores.empty());
  REQUIRE(unknown.problems_total == 2);
  CHECK(unknown.problems[0].find("LNC unknown") != std::string::npos);
}

TEST_CASE("DRA claims of neuron.aws.com: devices, core partitions, the node device", "[agent]") {
  const PodAttribution a =
      AttributePods(Reply(R"pb(
                      pod_resources {
                        name: "train-0"
                        namespace: "ml"
                        containers {
                          name: "main"
                          dynamic_resources {
                            class_name: "neuron.aws.com"
                            claim_name: "c1"
                            claim_namespace: "ml"
                            claim_resources {
                              driver_name: "neuron.aws.com"
                              pool_name: "node-a"
                              device_name: "neurondevice2"
                              cdi_devices { name: "k8s.neuron.aws.com/claim=abc" }
                            }
                            claim_resources {
                              driver_name: "neuron.aws.com"
                              pool_name: "node-a"
                              device_name: "neurondevice3-core1"
                            }
                            claim_resources {
                              driver_name: "efa.networking.k8s.aws"
                              pool_name: "node-a"
                              device_name: "neurondevice4"
                            }
                          }
                        }
                      }
                      pod_resources {
                        name: "big"
                        namespace: "ml"
                        containers {
                          name: "main"
                          dynamic_resources {
                            claim_name: "whole"
                            claim_namespace: "ml"
                            claim_resources {
                              driver_name: "neuron.aws.com"
                              pool_name: "node-a"
                              device_name: "neuronnode"
                            }
                          }
                        }
                      })pb"),
                    Trn2());
  std::vector<CoreAllocation> train;
  int big = 0;
  for (const auto& c : a.cores) {
    if (c.pod == "big") {
      ++big;
      CHECK(c.resource == kDraResource);
    } else {
      train.push_back(c);
    }
  }
  CHECK(big == 16 * 8);  // neuronnode: every core of the node
  std::vector<CoreAllocation> want;
  for (int c = 0; c < 8; ++c) want.push_back(Row(2, c, "main", kDraResource));
  want.push_back(Row(3, 2, "main", kDraResource));  // core 1 at LNC=2: physical 2 and 3
  want.push_back(Row(3, 3, "main", kDraResource));
  CHECK(train == want);  // the EFA driver's device is not ours, and not a problem either
  CHECK(a.problems_total == 0);
}

TEST_CASE("an init container and an app container listed with one device are one row per core",
          "[agent]") {
  const PodAttribution a =
      AttributePods(Reply(R"pb(
                      pod_resources {
                        name: "train-0"
                        namespace: "ml"
                        containers {
                          name: "warmup"
                          devices { resource_name: "aws.amazon.com/neuron" device_ids: "0" }
                        }
                        containers {
                          name: "main"
                          devices { resource_name: "aws.amazon.com/neuron" device_ids: "0" }
                        }
                      }
                      pod_resources {
                        name: "other"
                        namespace: "ml"
                        containers {
                          name: "main"
                          devices { resource_name: "aws.amazon.com/neuron" device_ids: "1" }
                        }
                      })pb"),
                    Trn2());
  REQUIRE(a.cores.size() == 16);
  CHECK(a.cores[0] == Row(0, 0, "main,warmup", "aws.amazon.com/neuron"));
  CHECK(a.cores[7] == Row(0, 7, "main,warmup", "aws.amazon.com/neuron"));
  CHECK(a.cores[8] == Row(1, 0, "main", "aws.amazon.com/neuron", "other"));
}

TEST_CASE("hostile entries are ignored and reported, never a crash", "[agent]") {
  const PodAttribution a =
      AttributePods(Reply(R"pb(
                      pod_resources {
                        name: ""
                        namespace: "ml"
                        containers {
                          name: "main"
                          devices { resource_name: "aws.amazon.com/neuron" device_ids: "0" }
                        }
                      }
                      pod_resources {
                        name: "x"
                        namespace: ""
                        containers {
                          name: "main"
                          devices { resource_name: "aws.amazon.com/neuron" device_ids: "0" }
                        }
                      }
                      pod_resources {
                        name: "train-0"
                        namespace: "ml"
                        containers {
                          name: ""
                          devices { resource_name: "aws.amazon.com/neuron" device_ids: "0" }
                        }
                        containers {
                          name: "main"
                          devices {
                            resource_name: "aws.amazon.com/neuron"
                            device_ids: "16"
                            device_ids: "-1"
                            device_ids: "01"
                            device_ids: "abc"
                            device_ids: ""
                            device_ids: "99999999999"
                            device_ids: "4"
                            device_ids: "4"
                          }
                          devices { resource_name: "neuron" device_ids: "5" }
                          devices { resource_name: "aws.amazon.com/neuroncore" device_ids: "64" }
                          dynamic_resources {
                            claim_name: "c"
                            claim_namespace: "ml"
                            claim_resources {
                              driver_name: "neuron.aws.com"
                              pool_name: "node-a"
                              device_name: "gpu0"
                            }
                            claim_resources {
                              driver_name: "neuron.aws.com"
                              pool_name: "node-a"
                              device_name: "neurondevice"
                            }
                            claim_resources {
                              driver_name: "neuron.aws.com"
                              pool_name: "node-a"
                              device_name: "neurondevice1-core4"
                            }
                            claim_resources {
                              driver_name: "neuron.aws.com"
                              pool_name: "node-b"
                              device_name: "neurondevice5"
                            }
                            claim_resources {
                              driver_name: "neuron.aws.com"
                              pool_name: "node-a"
                              device_name: "neurondevice99"
                            }
                          }
                        }
                      }
                      pod_resources {
                        name: "train-0"
                        namespace: "ml"
                        containers {
                          name: "main"
                          devices { resource_name: "aws.amazon.com/neuron" device_ids: "4" }
                        }
                      }
                    )pb"),
                    Trn2());
  // Only device 4 (listed three times, the pod twice) is real, once per core.
  REQUIRE(a.cores.size() == 8);
  for (int c = 0; c < 8; ++c) CHECK(a.cores[c] == Row(4, c, "main", "aws.amazon.com/neuron"));
  // 3 bad names + 6 bad device IDs + 1 core ID + 5 DRA devices; the short name "neuron" is not
  // a resource the kubelet reports, so not ours.
  CHECK(a.problems_total == 15);
  CHECK(a.problems.size() == 15);
  for (const std::string& p : a.problems) CHECK(p.find("ignored") != std::string::npos);
}

TEST_CASE("problems are capped, their count is not", "[agent]") {
  v1::ListPodResourcesResponse r;
  auto* devices = r.add_pod_resources();
  devices->set_name("p");
  devices->set_namespace_("ml");
  auto* d = devices->add_containers();
  d->set_name("main");
  auto* ids = d->add_devices();
  ids->set_resource_name("aws.amazon.com/neuron");
  for (int i = 0; i < 1000; ++i) ids->add_device_ids(std::to_string(100 + i));
  const PodAttribution a = AttributePods(r, Trn2());
  CHECK(a.cores.empty());
  CHECK(a.problems_total == 1000);
  CHECK(a.problems.size() == static_cast<size_t>(kMaxProblems));
}

TEST_CASE("NodeLayoutFrom keeps the present devices, the LNC and the node name", "[agent]") {
  inventory::Inventory inv;
  inv.node_name = "node-a";
  inv.lnc = 2;
  inventory::Device d0, d1;
  d0.index = 1;
  d0.physical_cores = 8;
  d1.index = 0;
  d1.physical_cores = 8;
  d1.present = false;  // kept only to report it unhealthy
  inv.devices = {d0, d1};
  const NodeLayout l = NodeLayoutFrom(inv);
  REQUIRE(l.devices.size() == 1);
  CHECK(l.devices[0].index == 1);
  CHECK(l.devices[0].physical_cores == 8);
  CHECK(l.lnc == 2);
  CHECK(l.pool == "node-a");
}

}  // namespace
}  // namespace neuron::agent
