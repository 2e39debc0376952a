// Conformance factories for resource adaptors (group A), included by conformance_gpu_tests.cpp
// inside its anonymous namespace context (after the base factories and helpers). The macro lists
// them, each preceded by a comma.
//
// Group A: the observing adaptors (statistics, tracking, logging, limiting), each over
// cuda_memory_resource and over a pool. They forward alignment checks and upstream failures
// unchanged, so each factory's `name` is its upstream's (the suite looks for it in those
// messages); the limiting adaptor's own out-of-memory error is probed with a request above its
// limit.
#pragma once

#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>

#include <atomic>
#include <cstddef>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>

namespace {

namespace adaptors_a {

// The upstreams: a fresh cuda_memory_resource, or a fresh pool over one.
inline cuda::mr::any_resource<cuda::mr::device_accessible> cuda_upstream() {
  return rmm::mr::cuda_memory_resource{};
}
inline cuda::mr::any_resource<cuda::mr::device_accessible> pool_upstream() {
  return rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0};
}
inline std::optional<std::size_t> device_oom_probe() {
  return rmm::available_device_memory().second * 2;
}

// Where the logging adaptor over a pool writes: a stream that counts and discards its
// characters (the adaptor's mutex serialises the writes).
class discarding_buffer : public std::streambuf {
 public:
  [[nodiscard]] std::size_t written() const noexcept { return written_.load(); }

 protected:
  int_type overflow(int_type c) override {
    written_.fetch_add(1);
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(char const*, std::streamsize n) override {
    written_.fetch_add(static_cast<std::size_t>(n));
    return n;
  }

 private:
  std::atomic<std::size_t> written_{0};
};

inline std::ostream& discarding_stream() {
  static discarding_buffer buffer;
  static std::ostream stream{&buffer};
  return stream;
}

constexpr std::size_t limit = 2 * GiB;  // above the suite's largest live set (1 GiB)

}  // namespace adaptors_a

struct statistics_over_cuda_factory {
  static constexpr char const* name = "cuda_memory_resource";
  static rmm::mr::statistics_resource_adaptor make() {
    return rmm::mr::statistics_resource_adaptor{adaptors_a::cuda_upstream()};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_a::device_oom_probe(); }
};

struct statistics_over_pool_factory {
  static constexpr char const* name = "pool_memory_resource";
  static rmm::mr::statistics_resource_adaptor make() {
    return rmm::mr::statistics_resource_adaptor{adaptors_a::pool_upstream()};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_a::device_oom_probe(); }
};

struct tracking_over_cuda_factory {
  static constexpr char const* name = "cuda_memory_resource";
  static rmm::mr::tracking_resource_adaptor make() {
    return rmm::mr::tracking_resource_adaptor{adaptors_a::cuda_upstream()};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_a::device_oom_probe(); }
};

// With stack capture, so that the suite's threads exercise it too.
struct tracking_over_pool_factory {
  static constexpr char const* name = "pool_memory_resource";
  static rmm::mr::tracking_resource_adaptor make() {
    return rmm::mr::tracking_resource_adaptor{adaptors_a::pool_upstream(), true};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_a::device_oom_probe(); }
};

// Logs to a file by name (the lines are discarded by /dev/null).
struct logging_over_cuda_factory {
  static constexpr char const* name = "cuda_memory_resource";
  static rmm::mr::logging_resource_adaptor make() {
    return rmm::mr::logging_resource_adaptor{adaptors_a::cuda_upstream(), "/dev/null"};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_a::device_oom_probe(); }
};

// Logs to an ostream, flushing every line.
struct logging_over_pool_factory {
  static constexpr char const* name = "pool_memory_resource";
  static rmm::mr::logging_resource_adaptor make() {
    return rmm::mr::logging_resource_adaptor{
        adaptors_a::pool_upstream(), adaptors_a::discarding_stream(), true};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_a::device_oom_probe(); }
};

struct limiting_over_cuda_factory {
  static constexpr char const* name = "cuda_memory_resource";
  static rmm::mr::limiting_resource_adaptor make() {
    return rmm::mr::limiting_resource_adaptor{adaptors_a::cuda_upstream(), adaptors_a::limit};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_a::limit + GiB; }
};

struct limiting_over_pool_factory {
  static constexpr char const* name = "pool_memory_resource";
  static rmm::mr::limiting_resource_adaptor make() {
    return rmm::mr::limiting_resource_adaptor{adaptors_a::pool_upstream(), adaptors_a::limit};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_a::limit + GiB; }
};

}  // namespace

#define RMM_CONFORMANCE_ADAPTOR_FACTORIES_A                                                 \
  , statistics_over_cuda_factory, statistics_over_pool_factory, tracking_over_cuda_factory, \
      tracking_over_pool_factory, logging_over_cuda_factory, logging_over_pool_factory,     \
      limiting_over_cuda_factory, limiting_over_pool_factory
