#include "lib/base/logging.h"

#include <memory>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "spdlog/sinks/base_sink.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace neuron {
namespace {

// Emits {"ts":..,"level":..,"logger":..,"msg":..} lines; nlohmann does the string escaping.
class JsonStderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const auto ts = absl::FromChrono(msg.time);
    nlohmann::json line = {
        {"ts", absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", ts, absl::UTCTimeZone())},
        {"level", std::string(spdlog::level::to_string_view(msg.level).data(),
                              spdlog::level::to_string_view(msg.level).size())},
        {"logger", std::string(msg.logger_name.data(), msg.logger_name.size())},
        {"msg", std::string(msg.payload.data(), msg.payload.size())},
    };
    const std::string out =
        line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(out.data(), 1, out.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

}  // namespace

absl::Status InitLogging(std::string_view program, std::string_view level, bool json_lines) {
  const spdlog::level::level_enum parsed = spdlog::level::from_str(std::string(level));
  // from_str maps unknown names to "off"; only accept "off" when it was asked for.
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown log level \"", std::string(level),
                     "\" (want trace, debug, info, warn, error, critical, off)"));
  }
  std::shared_ptr<spdlog::logger> logger;
  if (json_lines) {
    logger =
        std::make_shared<spdlog::logger>(std::string(program), std::make_shared<JsonStderrSink>());
  } else {
    logger = std::make_shared<spdlog::logger>(std::string(program),
                                              std::make_shared<spdlog::sinks::stderr_sink_mt>());
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %L %n: %v", spdlog::pattern_time_type::utc);
  }
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  return absl::OkStatus();
}

}  // namespace neuron
