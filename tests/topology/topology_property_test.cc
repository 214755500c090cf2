// Property tests: on every topology, the library agrees with the brute-force reference model
// (reference.h) on validity, on the best choice and on existence, and is deterministic.
#include <random>

#include "catch2/catch.hpp"
#include "lib/topology/topology.h"
#include "tests/topology/reference.h"
#include "tests/topology/topologies.h"

namespace neuron::topology {
namespace {

using testing::TestTopologies;

std::vector<std::vector<std::vector<int>>> BySize(const std::vector<std::vector<int>>& sets,
                                                  int n) {
  std::vector<std::vector<std::vector<int>>> out(n + 1);
  for (const auto& s : sets) out[s.size()].push_back(s);
  return out;
}

std::vector<int> FreeIds(const std::vector<bool>& free) {
  std::vector<int> ids;
  for (int i = 0; i < static_cast<int>(free.size()); ++i) {
    if (free[i]) ids.push_back(i);
  }
  return ids;
}

// Free masks: every mask for small nodes, otherwise all-free plus random masks of several
// densities, from a fixed seed.
std::vector<std::vector<bool>> FreeMasks(int n, int random_count, std::mt19937& rng) {
  std::vector<std::vector<bool>> masks;
  if (n <= 8) {
    for (unsigned m = 0; m < (1u << n); ++m) {
      std::vector<bool> f(n);
      for (int i = 0; i < n; ++i) f[i] = (m >> i) & 1u;
      masks.push_back(f);
    }
    return masks;
  }
  masks.push_back(std::vector<bool>(n, true));
  const double densities[] = {0.3, 0.5, 0.7, 0.85, 0.95};
  for (int i = 0; i < random_count; ++i) {
    std::bernoulli_distribution bit(densities[i % 5]);
    std::vector<bool> f(n);
    for (int d = 0; d < n; ++d) f[d] = bit(rng);
    masks.push_back(f);
  }
  return masks;
}

TEST_CASE("device validity matches the reference on every subset", "[topology][property]") {
  for (const auto& [name, t] : TestTopologies()) {
    INFO(name);
    REQUIRE(t.devices <= 16);
    int valid = 0;
    for (unsigned m = 1; m < (1u << t.devices); ++m) {
      std::vector<int> s = reference::Members(m, t.devices);
      const bool want = reference::ValidDevices(t, s);
      valid += want ? 1 : 0;
      if (IsValidDeviceSet(t, s) != want) CHECK(IsValidDeviceSet(t, s) == want);
      std::vector<int> reversed(s.rbegin(), s.rend());  // order of ids does not matter
      if (IsValidDeviceSet(t, reversed) != want) CHECK(IsValidDeviceSet(t, reversed) == want);
    }
    CHECK(valid >= t.devices);  // every single device is a valid set
    CHECK_FALSE(IsValidDeviceSet(t, {}));
    CHECK_FALSE(IsValidDeviceSet(t, {t.devices}));
    CHECK_FALSE(IsValidDeviceSet(t, {-1}));
    CHECK_FALSE(IsValidDeviceSet(t, {0, 0}));
  }
}

TEST_CASE("core validity matches the reference", "[topology][property]") {
  std::mt19937 rng(1234);
  for (const auto& [name, t] : TestTopologies()) {
    INFO(name);
    const int total = t.devices * t.cores_per_device;
    if (total <= 16) {  // every subset of cores
      for (unsigned m = 1; m < (1u << total); ++m) {
        const std::vector<int> c = reference::Members(m, total);
        const bool want = reference::ValidCores(t, c);
        if (IsValidCoreSet(t, c) != want) CHECK(IsValidCoreSet(t, c) == want);
      }
    }
    // Random core sets built from random device sets, so that valid ones are common too.
    std::uniform_int_distribution<int> count_dist(1, total);
    for (int i = 0; i < 3000; ++i) {
      const int k = count_dist(rng);
      std::vector<int> all(total);
      for (int c = 0; c < total; ++c) all[c] = c;
      std::shuffle(all.begin(), all.end(), rng);
      std::vector<int> c;
      if (i % 2 == 0) {
        c.assign(all.begin(), all.begin() + k);
      } else {  // cores packed onto a random window of devices
        const int start = std::uniform_int_distribution<int>(0, t.devices - 1)(rng);
        for (int j = 0; j < k; ++j) c.push_back((start * t.cores_per_device + j) % total);
      }
      const bool want = reference::ValidCores(t, c);
      if (IsValidCoreSet(t, c) != want) CHECK(IsValidCoreSet(t, c) == want);
    }
    CHECK_FALSE(IsValidCoreSet(t, {}));
    CHECK_FALSE(IsValidCoreSet(t, {total}));
  }
}

TEST_CASE("ChooseDevices equals the brute-force best fit", "[topology][property]") {
  std::mt19937 rng(42);
  for (const auto& [name, t] : TestTopologies()) {
    INFO(name);
    const auto valid = BySize(reference::AllValidDeviceSets(t), t.devices);
    std::vector<std::vector<int>> valid_flat;
    for (const auto& v : valid) valid_flat.insert(valid_flat.end(), v.begin(), v.end());
    int found = 0, not_found = 0;
    for (const auto& free : FreeMasks(t.devices, 300, rng)) {
      const std::vector<int> free_ids = FreeIds(free);
      for (int count = 1; count <= t.devices; ++count) {
        for (int variant = 0; variant < 3; ++variant) {
          std::vector<int> must;
          if (variant > 0 && !free_ids.empty()) {
            std::uniform_int_distribution<size_t> pick(0, free_ids.size() - 1);
            must.push_back(free_ids[pick(rng)]);
            if (variant == 2 && count >= 2) {
              const int other = free_ids[pick(rng)];
              if (other != must[0]) must.push_back(other);
            }
          }
          const auto got = ChooseDevices(t, free, count, must);
          const auto want = reference::BestDevices(t, valid[count], free, count, must);
          if (got != want) {
            INFO("count=" << count << " must=" << must.size());
            CHECK(got == want);
            continue;
          }
          if (got.has_value()) {
            ++found;
            // Spelled out, even though equality with the reference implies them:
            if (!IsValidDeviceSet(t, *got)) CHECK(IsValidDeviceSet(t, *got));
            for (int d : *got) {
              if (!free[d]) CHECK(free[d]);
            }
            if (!reference::Contains(*got, must)) {
              CHECK(reference::Contains(*got, must));
            }
            if (!std::is_sorted(got->begin(), got->end())) {
              CHECK(std::is_sorted(got->begin(), got->end()));
            }
          } else {
            ++not_found;
          }
          if (ChooseDevices(t, free, count, must) != got) {
            CHECK(ChooseDevices(t, free, count, must) == got);  // deterministic
          }
          if (variant == 0) {
            const int score = ScoreDevices(t, free, count);
            if ((score == 0) != !got.has_value() || score < 0 || score > 10) {
              CHECK(score == (got.has_value() ? std::max(score, 1) : 0));
              CHECK(score <= 10);
            }
          }
        }
      }
    }
    CHECK(found > 0);
    CHECK(not_found > 0);
  }
}

TEST_CASE("ChooseCores equals the brute-force best fit", "[topology][property]") {
  std::mt19937 rng(7);
  for (const auto& [name, t] : TestTopologies()) {
    INFO(name);
    const int cpd = t.cores_per_device;
    const int total = t.devices * cpd;
    const auto core_sets = BySize(reference::AllCoreDeviceSets(t), t.devices);
    const int masks = t.devices >= 15 ? 60 : 200;
    std::vector<int> counts;
    for (int k = 1; k <= total; ++k) {
      if (k <= 2 * cpd + 1 || k % cpd == 0 || k % cpd == 1 || k == total) counts.push_back(k);
    }
    int found = 0, not_found = 0;
    for (int i = 0; i < masks; ++i) {
      // Per device: wholly free, wholly used, or partly used.
      std::vector<bool> free(total);
      for (int d = 0; d < t.devices; ++d) {
        const int kind = std::uniform_int_distribution<int>(0, 2)(rng);
        for (int c = d * cpd; c < (d + 1) * cpd; ++c) {
          free[c] = kind == 0 || (kind == 2 && std::bernoulli_distribution(0.5)(rng));
        }
      }
      if (i == 0) free.assign(total, true);
      const std::vector<int> free_ids = FreeIds(free);
      for (int count : counts) {
        std::vector<int> must;
        if (i % 3 == 1 && !free_ids.empty()) {
          must.push_back(
              free_ids[std::uniform_int_distribution<size_t>(0, free_ids.size() - 1)(rng)]);
        }
        const auto got = ChooseCores(t, free, count, must);
        const auto want =
            reference::BestCores(t, core_sets[(count + cpd - 1) / cpd], free, count, must);
        if (got != want) {
          INFO("mask=" << i << " count=" << count << " must=" << must.size());
          CHECK(got == want);
          continue;
        }
        if (got.has_value()) {
          ++found;
          if (static_cast<int>(got->size()) != count) {
            CHECK(got->size() == static_cast<size_t>(count));
          }
          if (!IsValidCoreSet(t, *got)) CHECK(IsValidCoreSet(t, *got));
          for (int c : *got) {
            if (!free[c]) CHECK(free[c]);
          }
          if (!reference::Contains(*got, must)) CHECK(reference::Contains(*got, must));
        } else {
          ++not_found;
        }
        if (ChooseCores(t, free, count, must) != got) {
          CHECK(ChooseCores(t, free, count, must) == got);
        }
        if (must.empty()) {
          const int score = ScoreCores(t, free, count);
          if ((score == 0) == got.has_value() || score > 10) {
            CHECK(score == (got.has_value() ? std::max(score, 1) : 0));
            CHECK(score <= 10);
          }
        }
      }
    }
    CHECK(found > 0);
    CHECK(not_found > 0);
  }
}

}  // namespace
}  // namespace neuron::topology
