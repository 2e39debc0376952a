#include <rmm/error.hpp>
#include <rmm/logger.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {
std::string read_file(std::string const& path) {
  std::ifstream in{path};
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

struct restore_logger {
  rmm::level_enum level = rmm::get_log_level();
  ~restore_logger() {
    rmm::set_log_to_stderr();
    rmm::set_log_level(level);
  }
};
}  // namespace

TEST_CASE("messages at or above the level reach the log file", "[logger]") {
  restore_logger restore;
  std::string const path = "rmm_logger_test_" + std::to_string(::getpid()) + ".log";
  std::remove(path.c_str());
  rmm::set_log_file(path);
  rmm::set_log_level(rmm::level_enum::warn);
  CHECK(rmm::get_log_level() == rmm::level_enum::warn);
  rmm::log(rmm::level_enum::info, "below the level: not written");
  rmm::log(rmm::level_enum::error, "pool ran out of memory: 42 bytes");
  rmm::flush_log();
  auto const content = read_file(path);
  CHECK(content.find("pool ran out of memory: 42 bytes") != std::string::npos);
  CHECK(content.find("[error]") != std::string::npos);
  CHECK(content.find("not written") == std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("the logger takes messages from many threads", "[logger]") {
  restore_logger restore;
  std::string const path = "rmm_logger_mt_" + std::to_string(::getpid()) + ".log";
  std::remove(path.c_str());
  rmm::set_log_file(path);
  rmm::set_log_level(rmm::level_enum::info);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 50; ++i) {
        rmm::log(rmm::level_enum::info,
                 "thread " + std::to_string(t) + " message " + std::to_string(i));
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  rmm::flush_log();
  auto const content = read_file(path);
  std::size_t lines  = 0;
  for (char c : content) {
    lines += c == '\n' ? 1 : 0;
  }
  CHECK(lines == 400);
  std::remove(path.c_str());
}

TEST_CASE("an unwritable log file is a logic_error naming the path", "[logger]") {
  restore_logger restore;
  std::string const path = "/dev/null/not-a-directory/rmm.log";
  CHECK_THROWS_AS(rmm::set_log_file(path), rmm::logic_error);
  CHECK_THROWS_WITH(rmm::set_log_file(path), Catch::Matchers::Contains(path));
}
