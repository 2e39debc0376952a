// The process-wide logger. spdlog stays inside this translation unit: no public header names it.
#include <rmm/error.hpp>
#include <rmm/logger.hpp>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

namespace rmm {
namespace {

spdlog::level::level_enum to_spdlog(level_enum level) noexcept {
  return static_cast<spdlog::level::level_enum>(static_cast<int>(level));
}

level_enum level_from_env() noexcept {
  char const* text = std::getenv("RMM_LOG_LEVEL");
  if (text == nullptr) {
    return level_enum::warn;
  }
  auto const parsed = spdlog::level::from_str(text);
  // from_str returns off for unknown names; only accept "off" when it was asked for.
  if (parsed == spdlog::level::off && std::string{text} != "off") {
    return level_enum::warn;
  }
  return static_cast<level_enum>(static_cast<int>(parsed));
}

std::shared_ptr<spdlog::logger> make_logger(spdlog::sink_ptr sink, level_enum level) {
  auto logger = std::make_shared<spdlog::logger>("RMM", std::move(sink));
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] [tid %t] %v");
  logger->set_level(to_spdlog(level));
  logger->flush_on(spdlog::level::warn);
  return logger;
}

struct logger_state {
  std::mutex lock;  // guards replacing `logger`; spdlog's _mt sinks guard writing
  std::shared_ptr<spdlog::logger> logger;

  logger_state() {
    char const* file = std::getenv("RMM_DEBUG_LOG_FILE");
    spdlog::sink_ptr sink;
    if (file != nullptr && *file != '\0') {
      try {
        sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file);
      } catch (spdlog::spdlog_ex const&) {
        sink = nullptr;  // fall back to stderr rather than fail the first log call
      }
    }
    if (!sink) {
      sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    }
    logger = make_logger(std::move(sink), level_from_env());
  }

  std::shared_ptr<spdlog::logger> get() {
    std::lock_guard<std::mutex> guard{lock};
    return logger;
  }
};

logger_state& state() {
  static logger_state instance;
  return instance;
}

void replace_sink(spdlog::sink_ptr sink) {
  auto& st = state();
  std::lock_guard<std::mutex> guard{st.lock};
  auto const level = static_cast<level_enum>(static_cast<int>(st.logger->level()));
  st.logger->flush();
  st.logger = make_logger(std::move(sink), level);
}

}  // namespace

void log(level_enum level, std::string_view message) noexcept {
  try {
    state().get()->log(to_spdlog(level), "{}", message);
  } catch (...) {
    // Logging must never turn a report into a crash.
  }
}

void set_log_level(level_enum level) noexcept { state().get()->set_level(to_spdlog(level)); }

level_enum get_log_level() noexcept {
  return static_cast<level_enum>(static_cast<int>(state().get()->level()));
}

void set_log_file(std::string const& path) {
  spdlog::sink_ptr sink;
  try {
    sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path);
  } catch (spdlog::spdlog_ex const& e) {
    RMM_FAIL("set_log_file: cannot open \"" + path + "\": " + e.what());
  }
  replace_sink(std::move(sink));
}

void set_log_to_stderr() noexcept {
  try {
    replace_sink(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  } catch (...) {
  }
}

void flush_log() noexcept {
  try {
    state().get()->flush();
  } catch (...) {
  }
}

}  // namespace rmm
