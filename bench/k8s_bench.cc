// lib/k8s benchmarks.
//  BM_WatchDecode: WatchDecoder throughput on realistic Pod events (with managedFields), fed in
//    16 KiB chunks as a chunked HTTP body arrives; reports events/s.
//  BM_InformerMemory: RSS growth (VmRSS) of an informer pair holding 5,000 Nodes and 50,000 Pods
//    trimmed by a transform, listed over HTTP from the fake-apiserver binary (separate process,
//    so the server's own memory is not counted). Target: < 300 MiB.
#include <malloc.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "lib/k8s/informer.h"
#include "lib/k8s/object_fields.h"
#include "lib/k8s/watch_decoder.h"

namespace neuron::k8s {
namespace {

using nlohmann::json;

json MakePod(int i, int nodes) {
  json managed = json::array();
  for (const char* m : {"kube-controller-manager", "kubelet", "neuron-scheduler-extender"}) {
    managed.push_back({{"manager", m},
                       {"operation", "Update"},
                       {"apiVersion", "v1"},
                       {"time", "2024-05-01T10:00:00Z"},
                       {"fieldsType", "FieldsV1"},
                       {"fieldsV1",
                        {{"f:metadata", {{"f:labels", {{"f:app", json::object()}}}}},
                         {"f:status",
                          {{"f:conditions", {{"k:{\"type\":\"Ready\"}", json::object()}}},
                           {"f:podIP", json::object()}}}}}});
  }
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", absl::StrCat("train-worker-", i)},
        {"namespace", absl::StrCat("team-", i % 20)},
        {"uid", absl::StrCat("6f1c0e1a-0000-4000-8000-", 100000000000 + i)},
        {"resourceVersion", std::to_string(1000 + i)},
        {"labels", {{"app", "train"}, {"job", absl::StrCat("job-", i / 16)}}},
        {"annotations", {{"neuron.amazonaws.com/cores", "0-31"}}},
        {"ownerReferences", json::array({{{"apiVersion", "batch/v1"},
                                          {"kind", "Job"},
                                          {"name", absl::StrCat("job-", i / 16)},
                                          {"uid", "x"},
                                          {"controller", true}}})},
        {"managedFields", managed}}},
      {"spec",
       {{"nodeName", absl::StrCat("ip-10-0-", i % nodes / 250, "-", i % nodes % 250)},
        {"schedulerName", "neuron-scheduler"},
        {"containers",
         json::array({{{"name", "worker"},
                       {"image", "public.ecr.aws/neuron/pytorch-training-neuronx:2.1.2"},
                       {"command", json::array({"torchrun", "--nproc_per_node=32", "train.py"})},
                       {"env", json::array({{{"name", "NEURON_RT_LOG_LEVEL"}, {"value", "INFO"}},
                                            {{"name", "FI_PROVIDER"}, {"value", "efa"}}})},
                       {"resources",
                        {{"limits", {{"aws.amazon.com/neuroncore", "32"}}},
                         {"requests", {{"aws.amazon.com/neuroncore", "32"}, {"cpu", "8"}}}}}}})},
        {"tolerations", json::array({{{"key", "aws.amazon.com/neuron"},
                                      {"operator", "Exists"},
                                      {"effect", "NoSchedule"}}})}}},
      {"status",
       {{"phase", "Running"},
        {"podIP", "10.0.3.4"},
        {"conditions", json::array({{{"type", "Ready"},
                                     {"status", "True"},
                                     {"lastTransitionTime", "2024-05-01T10:00:00Z"}},
                                    {{"type", "PodScheduled"},
                                     {"status", "True"},
                                     {"lastTransitionTime", "2024-05-01T10:00:00Z"}}})}}}};
  return pod;
}

void BM_WatchDecode(benchmark::State& state) {
  std::string stream;
  const int kEvents = 2000;
  for (int i = 0; i < kEvents; ++i) {
    stream += json{{"type", "MODIFIED"}, {"object", MakePod(i, 5000)}}.dump();
    stream += '\n';
  }
  const size_t kChunk = 16 << 10;
  std::vector<WatchEvent> out;
  for (auto _ : state) {
    WatchDecoder d;
    size_t n = 0;
    for (size_t i = 0; i < stream.size(); i += kChunk) {
      out.clear();
      if (!d.Feed(absl::string_view(stream).substr(i, kChunk), out).ok()) {
        state.SkipWithError("decode failed");
        return;
      }
      n += out.size();
    }
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * kEvents);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(stream.size()));
  state.counters["event_bytes"] = static_cast<double>(stream.size()) / kEvents;
}
BENCHMARK(BM_WatchDecode)->Unit(benchmark::kMillisecond);

long RssKiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    return 0;  // the bench then fails to reach the server, loudly
  }
  close(fd);
  return ntohs(a.sin_port);
}

// What the scheduler extender / device plugin read of a Pod.
const JsonKeep& PodEssentials() {
  static const JsonKeep* keep = new JsonKeep(JsonKeep::Of({
      IdentityMetadata({{"labels"}, {"annotations"}}),
      {"spec",
       JsonKeep::Of({{"nodeName"},
                     {"containers", JsonKeep::EachItem(JsonKeep::Of({{"name"}, {"resources"}}))}})},
      {"status", JsonKeep::Of({{"phase"}})},
  }));
  return *keep;
}

void BM_InformerMemory(benchmark::State& state) {
  const int kNodes = 5000, kPods = 50000;
  const std::string bin =
      std::filesystem::read_symlink("/proc/self/exe").parent_path().string() + "/fake-apiserver";
  const int port = FreePort();
  const pid_t child = fork();
  if (child == 0) {
    const std::string listen = absl::StrCat("127.0.0.1:", port);
    execl(bin.c_str(), bin.c_str(), "--listen", listen.c_str(), "--log-level", "warn", nullptr);
    _exit(127);
  }
  ClientConfig cfg;
  cfg.server = absl::StrCat("http://127.0.0.1:", port);
  RestClient client(*NewTransport(cfg, {}, {.max_attempts = 10}));
  for (int i = 0; i < 200 && !client.GetPath("/api").ok(); ++i) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  // Populate with 16 writer threads (requests are latency-bound, not CPU-bound).
  std::vector<std::thread> writers;
  for (int w = 0; w < 16; ++w) {
    writers.emplace_back([&, w] {
      for (int i = w; i < kNodes; i += 16) {
        json node = {{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata",
                      {{"name", absl::StrCat("ip-10-0-", i / 250, "-", i % 250)},
                       {"labels", {{"node.kubernetes.io/instance-type", "trn1.32xlarge"}}}}},
                     {"status", {{"capacity", {{"aws.amazon.com/neuroncore", "32"}}}}}};
        (void)client.Create({"", "v1", "nodes", false}, "", node);
      }
      for (int i = w; i < kPods; i += 16) {
        json pod = MakePod(i, kNodes);
        const std::string ns = pod["metadata"]["namespace"];
        (void)client.Create(resources::kPods, ns, pod);
      }
    });
  }
  for (auto& t : writers) t.join();
  for (auto _ : state) {
    const long before = RssKiB();
    Informer nodes(client, {"", "v1", "nodes", false}, "");
    Informer pods(client, resources::kPods, "");
    nodes.SetFields(WithoutBookkeeping());
    pods.SetFields(PodEssentials());
    (void)pods.AddIndexer("node", IndexByNodeName);
    const absl::Time t0 = absl::Now();
    nodes.Start();
    pods.Start();
    nodes.WaitForSync(absl::Minutes(5));
    pods.WaitForSync(absl::Minutes(5));
    const double sync_s = absl::ToDoubleSeconds(absl::Now() - t0);
    const long after = RssKiB();
    malloc_trim(0);  // return freed list buffers to the OS: what stays is the live cache
    const long trimmed = RssKiB();
    state.counters["nodes"] = static_cast<double>(nodes.store().size());
    state.counters["pods"] = static_cast<double>(pods.store().size());
    state.counters["rss_delta_MiB"] = static_cast<double>(after - before) / 1024.0;
    state.counters["rss_delta_trimmed_MiB"] = static_cast<double>(trimmed - before) / 1024.0;
    state.counters["sync_s"] = sync_s;
  }
  kill(child, SIGTERM);
  waitpid(child, nullptr, 0);
}
BENCHMARK(BM_InformerMemory)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace neuron::k8s

BENCHMARK_MAIN();
