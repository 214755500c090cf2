// Replay driver for fuzz targets in builds without libFuzzer (GCC, the default presets).
// Runs LLVMFuzzerTestOneInput on every file of the given corpus directories, then on a fixed
// number of deterministic mutations of them (truncations, bit flips, byte insertions and
// splices), so the sanitizer suite exercises every parser with hostile input on every run.
// Seeds larger than kMaxMutatedSeed (a 40 KB scalar, nesting thousands deep: inputs that
// exist to show a limit holds) run once as they are but are not mutated: each of their
// thousands of mutations would cost a full parse of them, and the replay would take minutes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// Hand-written xorshift, not absl::BitGen: a replay's mutations must be the same on every run and
// every Abseil version, so a failure found in CI reproduces by rerunning the test; Abseil's
// generators are nondeterministic by design, and their seeded sequences are not promised stable.
uint64_t Next(uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

// NEURON_FUZZ_LAST=<file>: each input is written there before it runs, so after a crash or a
// kill the file holds the input that did it.
const char* const kLastInputPath = std::getenv("NEURON_FUZZ_LAST");

void Run(const std::string& input) {
  if (kLastInputPath != nullptr) {
    std::ofstream(kLastInputPath, std::ios::binary | std::ios::trunc) << input;
  }
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

std::string Mutate(const std::vector<std::string>& seeds, uint64_t& s) {
  std::string in = seeds[Next(s) % seeds.size()];
  const int edits = 1 + static_cast<int>(Next(s) % 4);
  static const char kInteresting[] = "\0\n\r\"{}[],:-0123456789 \xff";
  for (int e = 0; e < edits; ++e) {
    switch (Next(s) % 5) {
      case 0:  // truncate
        if (!in.empty()) in.resize(Next(s) % in.size());
        break;
      case 1:  // flip a bit
        if (!in.empty()) in[Next(s) % in.size()] ^= static_cast<char>(1 << (Next(s) % 8));
        break;
      case 2:  // insert an interesting byte
        in.insert(in.begin() + static_cast<long>(in.empty() ? 0 : Next(s) % in.size()),
                  kInteresting[Next(s) % (sizeof(kInteresting) - 1)]);
        break;
      case 3: {  // splice with another seed
        const std::string& other = seeds[Next(s) % seeds.size()];
        if (!other.empty()) in += other.substr(Next(s) % other.size());
        break;
      }
      default:  // duplicate a chunk
        if (!in.empty()) {
          const size_t at = Next(s) % in.size();
          in.insert(at, in.substr(at, Next(s) % 16));
        }
    }
  }
  return in;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> seeds = {""};
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(argv[i], ec)) {
      if (!entry.is_regular_file()) continue;
      std::ifstream f(entry.path(), std::ios::binary);
      seeds.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
  }
  for (const auto& seed : seeds) Run(seed);
  const size_t seed_count = seeds.size();
  constexpr size_t kMaxMutatedSeed = 8 * 1024;
  std::erase_if(seeds, [](const std::string& seed) { return seed.size() > kMaxMutatedSeed; });
  const char* env = std::getenv("NEURON_FUZZ_RUNS");
  const long runs = env != nullptr ? std::atol(env) : 20000;
  uint64_t state = 0x243F6A8885A308D3ULL;
  for (long i = 0; i < runs; ++i) Run(Mutate(seeds, state));
  std::printf("replayed %zu seeds and %ld mutations of %zu of them: no crash\n", seed_count, runs,
              seeds.size());
  return 0;
}
