// File: bench/extender_load_bench.cc
// bench_extender_load: what kube-scheduler and a cluster admin wait for, end to end.
//  1. A synthetic cluster (bench/cluster_gen.h: 5,000 nodes of mixed shapes, --sync-pods pods)
//     is preloaded into the fake-apiserver binary (a separate process).
//  2. Raw list + watch: two lib/k8s Informers (Nodes, Pods) from Start to synced.
//  3. Cold start: the real neuron-scheduler-extender binary from exec to /readyz 200, and its
//     memory once synced.
//  4. Restarted on a cluster with --load-pods pods: filter then prioritize in NodeNames mode
//     (nodeCacheCapable), bodies exactly as kube-scheduler's HTTPExtender sends them (the full
//     Pod, "Nodes": null, ~500 NodeNames, prioritize gets the names that passed the filter),
//     over keep-alive connections; client round trip, req/s, and the server-side p99 read from
//     the extender's own latency histogram.
//  5. Full-Nodes mode: 5,000 Node objects in ExtenderArgs.Nodes.
// Flags: --nodes=5000 --sync-pods=50000 --load-pods=20000 --requests=4000 --connections=2
//        --names=500 --full-requests=20
#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/cluster_gen.h"
#include "bench/driver_util.h"
#include "bench/proc_status.h"
#include "httplib.h"
#include "lib/base/json_ondemand.h"
#include "lib/k8s/informer.h"
#include "lib/k8s/object_fields.h"
#include "lib/k8s/resource.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/transport.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace {

using neuron::testing::Subprocess;
using nlohmann::json;

using neuron::bench::IntFlag;
using neuron::bench::WriteKubeconfig;

using neuron::bench::ProcStatusKiB;

// The port a child logged ("... 127.0.0.1:PORT" or "port=PORT"), -1 if it never did.
int PortFromLog(const Subprocess& p, const std::string& needle, const std::regex& re) {
  const std::string log = p.WaitForLog(needle, absl::Seconds(60));
  std::smatch m;
  return std::regex_search(log, m, re) ? std::stoi(m[1].str()) : -1;
}

struct Fake {
  std::unique_ptr<Subprocess> proc;
  int port = -1;
};

Fake StartFake(const std::string& bin_dir, const std::string& dir,
               const neuron::bench::SyntheticCluster& c, const std::string& tag) {
  const std::string file = dir + "/" + tag + ".ndjson";
  {
    std::ofstream out(file);
    neuron::bench::WriteNdjson(c, out);
  }
  Fake f;
  f.proc = std::make_unique<Subprocess>(
      std::vector<std::string>{bin_dir + "/fake-apiserver", "--listen=127.0.0.1:0",
                               "--preload=" + file},
      dir + "/" + tag + "-fake.log");
  static const std::regex kUrl("listening on http://127\\.0\\.0\\.1:([0-9]+)");
  f.port = PortFromLog(*f.proc, "listening on", kUrl);
  return f;
}

// lib/k8s informers for Nodes and Pods, concurrently, from Start until both have synced.
double InformerSyncSeconds(int port, size_t* nodes, size_t* pods) {
  neuron::k8s::ClientConfig cfg;
  cfg.server = absl::StrCat("http://127.0.0.1:", port);
  auto transport = neuron::k8s::NewTransport(cfg);
  if (!transport.ok()) return -1;
  neuron::k8s::RestClient client(*transport);
  neuron::k8s::Informer ni(client, neuron::k8s::resources::kNodes);
  neuron::k8s::Informer pi(client, neuron::k8s::resources::kPods);
  ni.SetFields(neuron::k8s::WithoutBookkeeping());
  pi.SetFields(neuron::k8s::WithoutBookkeeping());
  const absl::Time start = absl::Now();
  ni.Start();
  pi.Start();
  const bool ok = ni.WaitForSync(absl::Seconds(120)) && pi.WaitForSync(absl::Seconds(120));
  const double s = absl::ToDoubleSeconds(absl::Now() - start);
  *nodes = ni.store().size();
  *pods = pi.store().size();
  ni.Stop();
  pi.Stop();
  return ok ? s : -1;
}

// Every page of Nodes then Pods through lib/k8s with each item pruned to its name: what the
// fake API server costs to list at this size, plus a client that scans but builds little.
double PrunedListSeconds(int port, size_t* items) {
  neuron::k8s::ClientConfig cfg;
  cfg.server = absl::StrCat("http://127.0.0.1:", port);
  auto transport = neuron::k8s::NewTransport(cfg);
  if (!transport.ok()) return -1;
  neuron::k8s::RestClient client(*transport);
  static const neuron::JsonKeep kName =
      neuron::JsonKeep::Of({{"metadata", neuron::JsonKeep::Of({{"name", {}}})}});
  *items = 0;
  const absl::Time start = absl::Now();
  for (const auto& ref : {neuron::k8s::resources::kNodes, neuron::k8s::resources::kPods}) {
    neuron::k8s::ListOptions lo;
    lo.limit = 500;
    lo.keep = &kName;
    for (;;) {
      auto page = client.List(ref, "", lo);
      if (!page.ok()) return -1;
      *items += page->items.size();
      if (page->continue_token.empty()) break;
      lo.continue_token = page->continue_token;
    }
  }
  return absl::ToDoubleSeconds(absl::Now() - start);
}

struct Extender {
  std::unique_ptr<Subprocess> proc;
  int port = -1;
  double ready_seconds = -1;
};

Extender StartExtender(const std::string& bin_dir, const std::string& dir,
                       const std::string& kubeconfig, const std::string& tag) {
  Extender e;
  const absl::Time start = absl::Now();
  e.proc = std::make_unique<Subprocess>(
      std::vector<std::string>{bin_dir + "/neuron-scheduler-extender", "--listen=127.0.0.1:0",
                               "--kubeconfig=" + kubeconfig, "--log-level=info"},
      dir + "/" + tag + "-extender.log");
  static const std::regex kPort("port=([0-9]+)");
  e.port = PortFromLog(*e.proc, "scheduler extender serving", kPort);
  if (e.port <= 0) return e;
  const absl::Time deadline = start + absl::Seconds(120);
  while (absl::Now() < deadline) {
    if (neuron::testing::HttpGet(e.port, "/readyz").status == 200) {
      e.ready_seconds = absl::ToDoubleSeconds(absl::Now() - start);
      break;
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  return e;
}

// Bucket counts of neuron_extender_request_duration_seconds{verb=...}, by upper bound.
std::map<double, double> Buckets(int port, const std::string& verb) {
  std::map<double, double> out;
  const std::string body = neuron::testing::HttpGet(port, "/metrics").body;
  const std::regex re(
      "neuron_extender_request_duration_seconds_bucket\\{[^}]*le=\"([^\"]+)\"[^}]*"
      "\\} ([0-9.e+]+)");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), re); it != std::sregex_iterator();
       ++it) {
    const std::string line = it->str();
    if (line.find("verb=\"" + verb + "\"") == std::string::npos) continue;
    const std::string le = (*it)[1].str();
    out[le == "+Inf" ? 1e9 : std::stod(le)] = std::stod((*it)[2].str());
  }
  return out;
}

// Upper bound of the bucket holding quantile q of the requests made between two snapshots.
double BucketQuantile(const std::map<double, double>& before, const std::map<double, double>& after,
                      double q) {
  const double total = after.rbegin()->second - (before.empty() ? 0 : before.rbegin()->second);
  for (const auto& [le, n] : after) {
    const double prev = before.count(le) ? before.at(le) : 0;
    if (n - prev >= q * total) return le;
  }
  return -1;
}

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

// Pending pods as the scheduler holds them: mixed device and core requests.
std::vector<json> PendingPods() {
  std::vector<json> out;
  int i = 0;
  for (int n : {1, 2, 4, 8, 16}) {
    out.push_back(neuron::bench::SyntheticPendingPod("ml", absl::StrCat("dev-", n, "-", i++),
                                                     "aws.amazon.com/neuron", n));
  }
  for (int n : {1, 2, 4, 8, 32}) {
    out.push_back(neuron::bench::SyntheticPendingPod("ml", absl::StrCat("core-", n, "-", i++),
                                                     "aws.amazon.com/neuroncore", n));
  }
  return out;
}

// Go's net/http asks for gzip unless told not to, and kube-scheduler's extender client does not.
const httplib::Headers kGoHeaders = {{"Accept-Encoding", "gzip"}};

// The NodeNames array of an ExtenderFilterResult, as text (the driver must not steal the
// server's CPU building trees).
bool NodeNamesOf(std::string_view result, std::string_view* names) {
  const neuron::JsonInput in(result);
  neuron::JsonParser parser;
  simdjson::ondemand::document doc;
  simdjson::ondemand::value v;
  if (parser.Iterate(in).get(doc) || doc["NodeNames"].get(v)) return false;
  std::string_view raw;
  if (neuron::RawJson(v, &raw) || raw.empty() || raw.front() != '[') return false;
  // A view into `result`, not into the padded copy that dies here.
  *names = result.substr(static_cast<size_t>(raw.data() - in.data()), raw.size());
  return true;
}

struct LoadResult {
  std::vector<double> filter_ms, prioritize_ms;
  int errors = 0;
  double seconds = 0;
};

// Each connection runs scheduling cycles back to back: /filter, then /prioritize of survivors.
LoadResult NodeNamesLoad(int port, const std::vector<std::string>& names, int names_per_request,
                         int cycles, int connections) {
  const std::vector<json> pods = PendingPods();
  // Pre-serialized filter bodies: a pod and a random window of node names, with Go's field
  // order. `heads` keep each body up to its NodeNames, for the /prioritize that follows.
  std::vector<std::string> bodies, heads;
  std::mt19937 rng(7);
  for (int b = 0; b < 64; ++b) {
    std::vector<std::string> pick;
    const size_t start = rng() % names.size();
    for (int k = 0; k < names_per_request; ++k) pick.push_back(names[(start + k) % names.size()]);
    heads.push_back(
        absl::StrCat(R"({"Pod":)", pods[b % pods.size()].dump(), R"(,"Nodes":null,"NodeNames":)"));
    bodies.push_back(absl::StrCat(heads.back(), json(pick).dump(), "}"));
  }
  std::vector<LoadResult> per(connections);
  std::vector<std::thread> threads;
  const absl::Time start = absl::Now();
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client cli("127.0.0.1", port);
      cli.set_keep_alive(true);
      cli.set_tcp_nodelay(true);  // as Go's net/http (kube-scheduler) does
      cli.set_read_timeout(30, 0);
      LoadResult& r = per[c];
      for (int i = c; i < cycles; i += connections) {
        const std::string& body = bodies[i % bodies.size()];
        absl::Time t = absl::Now();
        auto f = cli.Post("/filter", kGoHeaders, body, "application/json");
        r.filter_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
        std::string_view passed;
        if (!f || f->status != 200 || !NodeNamesOf(f->body, &passed)) {
          ++r.errors;
          continue;
        }
        const std::string pbody = heads[i % heads.size()] + std::string(passed) + "}";
        t = absl::Now();
        auto p = cli.Post("/prioritize", kGoHeaders, pbody, "application/json");
        r.prioritize_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
        if (!p || p->status != 200) ++r.errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  LoadResult all;
  all.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  for (const LoadResult& r : per) {
    all.filter_ms.insert(all.filter_ms.end(), r.filter_ms.begin(), r.filter_ms.end());
    all.prioritize_ms.insert(all.prioritize_ms.end(), r.prioritize_ms.begin(),
                             r.prioritize_ms.end());
    all.errors += r.errors;
  }
  return all;
}

void FullNodesLoad(int port, const neuron::bench::SyntheticCluster& c, int requests) {
  json items = json::array();
  for (const json& n : c.nodes) items.push_back(n);
  const std::string body = json{
      {"Pod", PendingPods()[2]},
      {"Nodes", {{"metadata", json::object()}, {"items", items}}},
      {"NodeNames", nullptr}}.dump();
  httplib::Client cli("127.0.0.1", port);
  cli.set_keep_alive(true);
  cli.set_tcp_nodelay(true);
  cli.set_read_timeout(60, 0);
  for (const char* verb : {"/filter", "/prioritize"}) {
    std::vector<double> ms;
    int errors = 0;
    for (int i = 0; i < requests; ++i) {
      const absl::Time t = absl::Now();
      auto r = cli.Post(verb, kGoHeaders, body, "application/json");
      ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
      if (!r || r->status != 200) ++errors;
    }
    std::printf(
        "full-Nodes %-11s %zu nodes (%.1f MB body), %d requests: p50 %.1f ms  p99 %.1f ms"
        "  errors %d\n",
        verb, c.nodes.size(), static_cast<double>(body.size()) / 1e6, requests, Pct(ms, 0.5),
        Pct(ms, 0.99), errors);
  }
}

void PrintMemory(const char* when, pid_t pid) {
  std::printf("extender memory %s: VmRSS %.1f MiB (anon %.1f)  VmHWM %.1f MiB\n", when,
              static_cast<double>(ProcStatusKiB(pid, "VmRSS")) / 1024.0,
              static_cast<double>(ProcStatusKiB(pid, "RssAnon")) / 1024.0,
              static_cast<double>(ProcStatusKiB(pid, "VmHWM")) / 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = IntFlag(argc, argv, "nodes", 5000);
  const int sync_pods = IntFlag(argc, argv, "sync-pods", 50000);
  const int load_pods = IntFlag(argc, argv, "load-pods", 20000);
  const int cycles = IntFlag(argc, argv, "requests", 4000) / 2;
  const int connections = IntFlag(argc, argv, "connections", 2);
  const int per_request = IntFlag(argc, argv, "names", 500);
  const int full_requests = IntFlag(argc, argv, "full-requests", 20);
  char t[] = "/tmp/bench-extender-XXXXXX";
  const std::string dir = mkdtemp(t);
  const std::string bin_dir = std::filesystem::path(argv[0]).parent_path().string();

  // --- cold start at the memory target's size ---
  neuron::bench::SyntheticCluster big = neuron::bench::GenerateCluster({nodes, sync_pods});
  Fake fake = StartFake(bin_dir, dir, big, "sync");
  if (fake.port <= 0) {
    std::fprintf(stderr, "fake-apiserver did not start:\n%s\n", fake.proc->Log().c_str());
    return 1;
  }
  size_t listed_nodes = 0, listed_pods = 0;
  const double sync_s = InformerSyncSeconds(fake.port, &listed_nodes, &listed_pods);
  std::printf("lib/k8s informers, list + watch of %zu Nodes + %zu Pods from the fake: %.2f s\n",
              listed_nodes, listed_pods, sync_s);
  size_t pruned_items = 0;
  const double pruned_s = PrunedListSeconds(fake.port, &pruned_items);
  std::printf("paged list of all %zu Nodes + Pods, items pruned to their names: %.2f s\n",
              pruned_items, pruned_s);
  const std::string kubeconfig = WriteKubeconfig(dir, fake.port);
  Extender cold = StartExtender(bin_dir, dir, kubeconfig, "sync");
  if (cold.ready_seconds < 0) {
    std::fprintf(stderr, "extender not ready:\n%s\n", cold.proc->Log().c_str());
    return 1;
  }
  std::printf("extender cold start to /readyz, %d nodes + %zu pods: %.2f s\n", nodes,
              big.pods.size(), cold.ready_seconds);
  PrintMemory("synced", cold.proc->pid());
  cold.proc->Terminate();
  fake.proc->Terminate();
  big = {};

  // --- decisions at the latency target's size ---
  const neuron::bench::SyntheticCluster c = neuron::bench::GenerateCluster({nodes, load_pods});
  fake = StartFake(bin_dir, dir, c, "load");
  Extender ext = StartExtender(bin_dir, dir, WriteKubeconfig(dir, fake.port), "load");
  if (ext.ready_seconds < 0) {
    std::fprintf(stderr, "extender not ready:\n%s\n", ext.proc->Log().c_str());
    return 1;
  }
  const auto filter_before = Buckets(ext.port, "filter");
  const auto prio_before = Buckets(ext.port, "prioritize");
  const LoadResult r = NodeNamesLoad(ext.port, c.node_names, per_request, cycles, connections);
  const auto filter_after = Buckets(ext.port, "filter");
  const auto prio_after = Buckets(ext.port, "prioritize");
  const double reqs = static_cast<double>(r.filter_ms.size() + r.prioritize_ms.size());
  std::printf(
      "NodeNames mode, %d nodes + %zu pods, %d names per filter, %d connections: "
      "%.0f req/s (%zu requests, %d errors)\n",
      nodes, c.pods.size(), per_request, connections, reqs / r.seconds, static_cast<size_t>(reqs),
      r.errors);
  std::printf(
      "  /filter     round trip p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms;  server p50 <= %g ms"
      "  p99 <= %g ms\n",
      Pct(r.filter_ms, 0.5), Pct(r.filter_ms, 0.99), Pct(r.filter_ms, 0.999),
      1e3 * BucketQuantile(filter_before, filter_after, 0.5),
      1e3 * BucketQuantile(filter_before, filter_after, 0.99));
  std::printf(
      "  /prioritize round trip p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms;  server p50 <= %g ms"
      "  p99 <= %g ms\n",
      Pct(r.prioritize_ms, 0.5), Pct(r.prioritize_ms, 0.99), Pct(r.prioritize_ms, 0.999),
      1e3 * BucketQuantile(prio_before, prio_after, 0.5),
      1e3 * BucketQuantile(prio_before, prio_after, 0.99));
  FullNodesLoad(ext.port, c, full_requests);
  PrintMemory("after load", ext.proc->pid());
  ext.proc->Terminate();
  fake.proc->Terminate();
  std::filesystem::remove_all(dir);
  return r.errors == 0 ? 0 : 1;
}
