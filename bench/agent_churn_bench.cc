// Load driver for issue 33: the agent's CPU and memory while pods churn. The real
// neuron-node-agent on an emulated trn2.48xlarge (16 devices x 8 physical cores, LNC 2: 64
// logical cores) asks the in-process fake kubelet's PodResources server every second which pod
// holds each core. 64 pods hold one logical core each (slots 0-31 through the device plugin's
// aws.amazon.com/neuroncore IDs, 32-63 through DRA claims of neuron.aws.com), and --churn of them
// are replaced by new pods (new names) every second. /metrics is scraped once a second, half a
// second after each change, with gzip on a new connection as Prometheus does; every page must
// hold exactly the 128 neuron_core_allocation series (64 logical x LNC 2) of one pod set, no
// older than the set the agent's previous List saw (the fake counts Lists), else the bench exits
// 1: the figures are those of an agent that attributes correctly. How far behind the kubelet each
// page was is printed: one set is expected; two happen because the agent lists every interval
// plus its scan time, not every interval. A second pass with --pod-resources-socket= empty
// (attribution off) shows what attribution costs.
//
//   bench_agent_churn [--seconds=60] [--churn=64] [--baseline=true|false] [--rounds=1]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/proc_status.h"
#include "lib/httpserver/gzip.h"
#include "tests/fakes/kubelet/fake_kubelet.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace {

constexpr char kShape[] = "trn2.48xlarge";
constexpr int kLogicalPerDevice = 4;  // 8 physical cores per device at LNC 2
constexpr int kLnc = 2;
constexpr int kSlots = 64;  // one pod per logical core: every core held
constexpr int kDraFirstSlot = kSlots / 2;
constexpr char kNode[] = "bench";  // --node-name, and so the DRA pool the agent accepts
constexpr char kNamespace[] = "churn";
constexpr char kContainer[] = "main";
// Spelled out rather than taken from lib/: the bench checks the wire names the device plugin and
// the DRA driver publish, independently of the agent's reading of them.
constexpr char kCoreResource[] = "aws.amazon.com/neuroncore";
constexpr char kDraDriver[] = "neuron.aws.com";
constexpr char kDraResource[] = "dra:neuron.aws.com";

struct Options {
  int seconds = 60;
  int churn = 64;
  bool baseline = true;
  int rounds = 1;  // attribution on, then off, this many times (medians over the rounds)
  std::string bin_dir;
};

std::string Flag(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--" + name + "=", 0) == 0) return arg.substr(name.size() + 3);
  }
  return fallback;
}

// Every pod set the bench has served: sets_[k][slot] is the pod holding logical core `slot` in
// set k. A replaced pod gets a new name carrying the set it was created in.
class PodSets {
 public:
  PodSets() {
    std::vector<std::string> first;
    for (int slot = 0; slot < kSlots; ++slot) first.push_back(Name(slot, 0));
    sets_.push_back(std::move(first));
  }
  // Replaces `n` pods, round robin over the slots, as a new set.
  void Churn(int n) {
    std::vector<std::string> next = sets_.back();
    const int k = static_cast<int>(sets_.size());
    for (int i = 0; i < n; ++i) {
      next[cursor_] = Name(cursor_, k);
      cursor_ = (cursor_ + 1) % kSlots;
    }
    sets_.push_back(std::move(next));
  }
  int latest() const { return static_cast<int>(sets_.size()) - 1; }
  // The latest set is served: `calls` is the fake's List count read after SetPodResources, so
  // every List numbered above it saw this set or a later one.
  void Installed(int calls) { installed_after_.resize(sets_.size(), calls); }
  // The oldest set List number `n` can have seen.
  int OldestSeenBy(int n) const {
    int k = 0;
    for (size_t i = 0; i < installed_after_.size(); ++i) {
      if (installed_after_[i] < n) k = static_cast<int>(i);
    }
    return k;
  }
  const std::vector<std::string>& set(int k) const { return sets_[static_cast<size_t>(k)]; }

 private:
  static std::string Name(int slot, int k) { return absl::StrCat("job-", slot, "-", k); }
  std::vector<std::vector<std::string>> sets_;
  std::vector<int> installed_after_;
  int cursor_ = 0;
};

// The kubelet's List answer for one pod set: device-plugin pods name their logical core by the
// node-wide index, DRA pods by neurondevice<N>-core<M> in this node's pool.
v1::ListPodResourcesResponse Reply(const std::vector<std::string>& pods) {
  v1::ListPodResourcesResponse r;
  for (int slot = 0; slot < kSlots; ++slot) {
    v1::PodResources* pod = r.add_pod_resources();
    pod->set_name(pods[static_cast<size_t>(slot)]);
    pod->set_namespace_(kNamespace);
    v1::ContainerResources* c = pod->add_containers();
    c->set_name(kContainer);
    if (slot < kDraFirstSlot) {
      v1::ContainerDevices* d = c->add_devices();
      d->set_resource_name(kCoreResource);
      d->add_device_ids(std::to_string(slot));
      continue;
    }
    v1::DynamicResource* dr = c->add_dynamic_resources();
    dr->set_class_name(kDraDriver);
    dr->set_claim_name(pod->name() + "-cores");
    dr->set_claim_namespace(kNamespace);
    v1::ClaimResource* cr = dr->add_claim_resources();
    cr->set_driver_name(kDraDriver);
    cr->set_pool_name(kNode);
    cr->set_device_name(
        absl::StrCat("neurondevice", slot / kLogicalPerDevice, "-core", slot % kLogicalPerDevice));
  }
  return r;
}

// The neuron_core_allocation series one set should produce, each as
// "device,core,namespace,pod,container,resource", sorted.
std::vector<std::string> Expected(const std::vector<std::string>& pods) {
  std::vector<std::string> out;
  for (int slot = 0; slot < kSlots; ++slot) {
    for (int k = 0; k < kLnc; ++k) {
      out.push_back(absl::StrJoin(
          {std::to_string(slot / kLogicalPerDevice),
           std::to_string((slot % kLogicalPerDevice) * kLnc + k), std::string(kNamespace),
           pods[static_cast<size_t>(slot)], std::string(kContainer),
           std::string(slot < kDraFirstSlot ? kCoreResource : kDraResource)},
          ","));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The page's neuron_core_allocation series in Expected()'s form; label values here never hold
// escapes (the bench's own names).
absl::StatusOr<std::vector<std::string>> Observed(const std::string& page) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(page, '\n')) {
    if (!absl::ConsumePrefix(&line, "neuron_core_allocation{")) continue;
    if (!absl::ConsumeSuffix(&line, "} 1")) {
      return absl::DataLossError(absl::StrCat("allocation sample not \"{...} 1\": ", line));
    }
    std::vector<std::string> values;
    for (absl::string_view pair : absl::StrSplit(line, "\",")) {
      const size_t eq = pair.find("=\"");
      if (eq == absl::string_view::npos) return absl::DataLossError("unparsable label pair");
      absl::string_view v = pair.substr(eq + 2);
      absl::ConsumeSuffix(&v, "\"");
      values.emplace_back(v);
    }
    out.push_back(absl::StrJoin(values, ","));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Which set the page shows, from `oldest` to the latest; an error names what is wrong (an older
// set means the page is older than the agent's previous List).
absl::StatusOr<int> CheckPage(const std::string& page, const PodSets& sets, int oldest) {
  const int latest = sets.latest();
  if (page.find("\nneuron_agent_pod_resources_up 1\n") == std::string::npos ||
      page.find("\nneuron_agent_pod_resources_ignored_entries 0\n") == std::string::npos) {
    return absl::InternalError("pod_resources_up is not 1 or ignored_entries is not 0");
  }
  auto observed = Observed(page);
  if (!observed.ok()) return observed.status();
  if (observed->size() != static_cast<size_t>(kSlots * kLnc)) {
    return absl::InternalError(
        absl::StrCat(observed->size(), " neuron_core_allocation series, want ", kSlots * kLnc));
  }
  for (int k = latest; k >= 0 && k >= oldest; --k) {
    if (*observed == Expected(sets.set(k))) return k;
  }
  for (int k = oldest - 1; k >= 0 && k >= oldest - 5; --k) {
    if (*observed == Expected(sets.set(k))) {
      return absl::InternalError(absl::StrCat("the page shows pod set ", k, ", ", latest - k,
                                              " sets behind the kubelet: older than what the "
                                              "agent's previous List saw (set ",
                                              oldest, ")"));
    }
  }
  const std::vector<std::string> want = Expected(sets.set(latest));
  for (size_t i = 0; i < want.size(); ++i) {
    if ((*observed)[i] != want[i]) {
      return absl::InternalError(
          absl::StrCat("the page matches no recent pod set; first difference: ", (*observed)[i],
                       " where set ", latest, " has ", want[i]));
    }
  }
  return absl::InternalError("unreachable: equal to the latest set");
}

struct Scrape {
  double ms = 0;
  size_t gzip_bytes = 0;
  std::string page;
};

// One scrape as Prometheus does it: a new connection, gzip accepted.
absl::StatusOr<Scrape> ScrapeOnce(int port) {
  const absl::Time start = absl::Now();
  const auto r = neuron::testing::HttpGetRaw(port, "/metrics", {{"Accept-Encoding", "gzip"}});
  Scrape s;
  s.ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  if (r.status != 200) {
    return absl::UnavailableError(absl::StrCat("GET /metrics: status ", r.status, " ", r.error));
  }
  s.gzip_bytes = r.body.size();
  if (r.content_encoding != "gzip") {
    s.page = r.body;
    return s;
  }
  auto text = neuron::httpserver::GzipDecompress(r.body);
  if (!text.ok()) return text.status();
  s.page = *std::move(text);
  return s;
}

struct PassResult {
  double cpu_s = 0, wall_s = 0;
  long rss_kib = 0, hwm_kib = 0;
  std::vector<double> scrape_ms;
  std::vector<int> behind = std::vector<int>(4);  // scrapes showing the latest set, 1, 2, 3+ behind
  int list_calls = 0;
  size_t gzip_bytes = 0, page_bytes = 0;
};

// The real agent, ready; its HTTP port in `port`.
std::unique_ptr<neuron::testing::Subprocess> StartAgent(const Options& o, const std::string& dir,
                                                        const std::string& socket, int& port) {
  auto agent = std::make_unique<neuron::testing::Subprocess>(
      std::vector<std::string>{o.bin_dir + "/neuron-node-agent", absl::StrCat("--emulate=", kShape),
                               "--emulate-dir=" + dir + "/host", "--listen=127.0.0.1:0",
                               "--interval=1s", "--pod-resources-socket=" + socket,
                               absl::StrCat("--node-name=", kNode)},
      dir + "/agent.log");
  const std::string log = agent->WaitForLog("node agent ready", absl::Seconds(60));
  static const std::regex kPort("listening address=127\\.0\\.0\\.1:([0-9]+)");
  std::smatch m;
  port = std::regex_search(log, m, kPort) ? std::stoi(m[1].str()) : -1;
  return agent;
}

// One scrape, checked against the pod sets (`sets` null: attribution off, so no allocation
// series allowed); its latency and which set it showed go to `r`.
absl::Status ScrapeAndCheck(int port, const PodSets* sets, int list_calls, PassResult& r) {
  auto s = ScrapeOnce(port);
  if (!s.ok()) return s.status();
  r.scrape_ms.push_back(s->ms);
  r.gzip_bytes = s->gzip_bytes;
  r.page_bytes = s->page.size();
  if (sets == nullptr) {
    if (s->page.find("neuron_core_allocation") != std::string::npos) {
      return absl::InternalError("allocation series with attribution off");
    }
    return absl::OkStatus();
  }
  // List `list_calls` may still be rendering; the previous one was rendered.
  auto k = CheckPage(s->page, *sets, sets->OldestSeenBy(list_calls - 1));
  if (!k.ok()) return k.status();
  ++r.behind[static_cast<size_t>(std::min(sets->latest() - *k, 3))];
  return absl::OkStatus();
}

// `kubelet` null: the baseline pass (attribution off, nothing churns).
absl::StatusOr<PassResult> RunPass(const Options& o, neuron::fakes::FakeKubelet* kubelet) {
  char t[] = "/tmp/bench-churn-XXXXXX";
  const std::string dir = mkdtemp(t);
  PodSets sets;
  if (kubelet != nullptr) {
    kubelet->SetPodResources(Reply(sets.set(0)));
    sets.Installed(kubelet->pod_resources_list_calls());
  }
  int port = -1;
  auto agent = StartAgent(o, dir, kubelet ? kubelet->pod_resources_socket() : "", port);
  if (port <= 0) return absl::UnavailableError("the agent did not start:\n" + agent->Log());
  PassResult r;
  const pid_t pid = agent->pid();
  const int calls0 = kubelet ? kubelet->pod_resources_list_calls() : 0;
  const double cpu0 = neuron::bench::CpuSeconds(pid);
  const absl::Time t0 = absl::Now();
  absl::Status status;
  for (int i = 0; i < o.seconds && status.ok(); ++i) {
    absl::SleepFor(t0 + absl::Seconds(i) - absl::Now());
    if (kubelet != nullptr) {
      sets.Churn(o.churn);
      kubelet->SetPodResources(Reply(sets.set(sets.latest())));
      sets.Installed(kubelet->pod_resources_list_calls());
    }
    absl::SleepFor(t0 + absl::Seconds(i) + absl::Milliseconds(500) - absl::Now());
    const int calls = kubelet ? kubelet->pod_resources_list_calls() : 0;
    status = ScrapeAndCheck(port, kubelet ? &sets : nullptr, calls, r);
    if (!status.ok()) {
      status = absl::Status(status.code(), absl::StrCat("second ", i, ": ", status.message()));
    }
  }
  absl::SleepFor(t0 + absl::Seconds(o.seconds) - absl::Now());
  r.cpu_s = neuron::bench::CpuSeconds(pid) - cpu0;
  r.wall_s = absl::ToDoubleSeconds(absl::Now() - t0);
  r.list_calls = kubelet ? kubelet->pod_resources_list_calls() - calls0 : 0;
  r.rss_kib = neuron::bench::ProcStatusKiB(pid, "VmRSS");
  r.hwm_kib = neuron::bench::ProcStatusKiB(pid, "VmHWM");
  if (!status.ok()) {
    const std::string log = agent->Log();
    status = absl::Status(status.code(),
                          absl::StrCat(status.message(), "\nagent log (end):\n",
                                       log.substr(log.size() > 4000 ? log.size() - 4000 : 0)));
  }
  agent->Terminate();
  std::filesystem::remove_all(dir);
  if (!status.ok()) return status;
  return r;
}

void Print(const char* name, const PassResult& r) {
  std::vector<double> ms = r.scrape_ms;
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double p) {
    return ms[static_cast<size_t>(p * static_cast<double>(ms.size() - 1))];
  };
  std::printf(
      "  %s: CPU %.2f %% of one core (%.2f ms per second; %d PodResources Lists)  VmRSS %.1f MiB  "
      "VmHWM %.1f MiB  scrape p50 %.2f ms p99 %.2f ms max %.2f ms (%zu scrapes, %zu B gzip, %zu B "
      "text)\n",
      name, 100.0 * r.cpu_s / r.wall_s, 1000.0 * r.cpu_s / r.wall_s, r.list_calls,
      r.rss_kib / 1024.0, r.hwm_kib / 1024.0, pct(0.50), pct(0.99), ms.back(), ms.size(),
      r.gzip_bytes, r.page_bytes);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// CPU in ms per second of wall time.
double CpuMsPerSecond(const PassResult& r) { return 1000.0 * r.cpu_s / r.wall_s; }

// One pass, printed; false (after saying why) when it failed.
bool RunAndPrint(const Options& o, neuron::fakes::FakeKubelet* kubelet,
                 std::vector<PassResult>& results) {
  auto r = RunPass(o, kubelet);
  if (!r.ok()) {
    std::fprintf(stderr, "FAIL (attribution %s): %s\n", kubelet ? "on" : "off",
                 std::string(r.status().message()).c_str());
    return false;
  }
  Print(kubelet ? "attribution on " : "attribution off", *r);
  if (kubelet != nullptr) {
    std::printf(
        "    every scrape right: %d series; pages showing the latest pod set %d, 1 behind %d, 2 "
        "behind %d, 3+ behind %d; a List every %.2f s\n",
        kSlots * kLnc, r->behind[0], r->behind[1], r->behind[2], r->behind[3],
        r->wall_s / std::max(r->list_calls, 1));
  }
  results.push_back(*std::move(r));
  return true;
}

// Medians over the rounds of what attribution adds.
void PrintCost(const std::vector<PassResult>& on, const std::vector<PassResult>& off) {
  std::vector<double> cpu_on, cpu_off, rss_on, rss_off, hwm_on, hwm_off;
  for (const auto& r : on) {
    cpu_on.push_back(CpuMsPerSecond(r));
    rss_on.push_back(r.rss_kib / 1024.0);
    hwm_on.push_back(r.hwm_kib / 1024.0);
  }
  for (const auto& r : off) {
    cpu_off.push_back(CpuMsPerSecond(r));
    rss_off.push_back(r.rss_kib / 1024.0);
    hwm_off.push_back(r.hwm_kib / 1024.0);
  }
  std::printf(
      "  medians of %zu rounds: CPU %.1f vs %.1f ms per second (attribution %+.1f), VmRSS %.1f vs "
      "%.1f MiB (%+.1f), VmHWM %.1f vs %.1f MiB (%+.1f)\n",
      on.size(), Median(cpu_on), Median(cpu_off), Median(cpu_on) - Median(cpu_off), Median(rss_on),
      Median(rss_off), Median(rss_on) - Median(rss_off), Median(hwm_on), Median(hwm_off),
      Median(hwm_on) - Median(hwm_off));
}

bool ParseOptions(int argc, char** argv, Options& o) {
  o.bin_dir = std::filesystem::path(argv[0]).parent_path().string();
  o.baseline = Flag(argc, argv, "baseline", "true") != "false";
  return absl::SimpleAtoi(Flag(argc, argv, "seconds", "60"), &o.seconds) && o.seconds >= 1 &&
         absl::SimpleAtoi(Flag(argc, argv, "churn", "64"), &o.churn) && o.churn >= 0 &&
         o.churn <= kSlots && absl::SimpleAtoi(Flag(argc, argv, "rounds", "1"), &o.rounds) &&
         o.rounds >= 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: %s [--seconds=N>=1] [--churn=0..%d] [--baseline=false] [--rounds=N>=1]\n",
                 argv[0], kSlots);
    return 2;
  }
  neuron::fakes::FakeKubelet kubelet;
  if (absl::Status s = kubelet.StartPodResources(); !s.ok()) {
    std::fprintf(stderr, "fake kubelet: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf(
      "agent churn (%s, %d pods on %d logical cores: %d device plugin + %d DRA; %d "
      "replaced per second; --interval=1s; %d s per pass):\n",
      kShape, kSlots, kSlots, kDraFirstSlot, kSlots - kDraFirstSlot, o.churn, o.seconds);
  std::vector<PassResult> on, off;
  for (int round = 0; round < o.rounds; ++round) {
    if (!RunAndPrint(o, &kubelet, on)) return 1;
    if (o.baseline && !RunAndPrint(o, nullptr, off)) return 1;
  }
  if (o.baseline) PrintCost(on, off);
  return 0;
}
