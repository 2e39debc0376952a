// Conformance factories for resource adaptors (group B), included by conformance_gpu_tests.cpp
// inside its anonymous namespace context (after the base factories and helpers). The macro lists
// them, each preceded by a comma.
//
// Group B: the policy adaptors (failure_callback, aligned, prefetch, thread_safe) over
// cuda_memory_resource, over a pool, over managed memory (prefetch), and all four stacked. Each
// of them refuses an alignment that is not a power of two itself, naming itself, so each
// factory's `name` is the adaptor's; an alignment above what the upstream supports is the
// upstream's refusal (the aligned adaptor's own above its alignment). Out of memory is the
// upstream's exception, passed on unchanged (failure_callback with a callback that declines,
// thread_safe, prefetch) or with the request's own size added (aligned).
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace {

namespace adaptors_b {

using any_upstream = cuda::mr::any_resource<cuda::mr::device_accessible>;

inline any_upstream cuda_upstream() { return rmm::mr::cuda_memory_resource{}; }
inline any_upstream pool_upstream() {
  return rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0};
}
inline std::optional<std::size_t> device_oom_probe() {
  return rmm::available_device_memory().second * 2;
}

// Declines every retry, so that the suite's out-of-memory probe sees the upstream's exception.
inline bool never_retry(std::size_t, void*) { return false; }

}  // namespace adaptors_b

struct failure_callback_over_cuda_factory {
  static constexpr char const* name = "failure_callback_resource_adaptor";
  static rmm::mr::failure_callback_resource_adaptor<> make() {
    return rmm::mr::failure_callback_resource_adaptor<>{
        adaptors_b::cuda_upstream(), adaptors_b::never_retry, nullptr};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_b::device_oom_probe(); }
};

// Responds to every rmm::bad_alloc (out_of_memory derives from it).
struct failure_callback_over_pool_factory {
  static constexpr char const* name = "failure_callback_resource_adaptor";
  static rmm::mr::failure_callback_resource_adaptor<rmm::bad_alloc> make() {
    return rmm::mr::failure_callback_resource_adaptor<rmm::bad_alloc>{
        adaptors_b::pool_upstream(), adaptors_b::never_retry, nullptr};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_b::device_oom_probe(); }
};

// Every allocation aligned to 4 KiB.
struct aligned_over_cuda_factory {
  static constexpr char const* name = "aligned_resource_adaptor";
  static rmm::mr::aligned_resource_adaptor make() {
    return rmm::mr::aligned_resource_adaptor{adaptors_b::cuda_upstream(), 4 * KiB};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_b::device_oom_probe(); }
};

// Allocations of 64 KiB and more aligned to 64 KiB; smaller ones straight from the pool.
struct aligned_over_pool_factory {
  static constexpr char const* name = "aligned_resource_adaptor";
  static rmm::mr::aligned_resource_adaptor make() {
    return rmm::mr::aligned_resource_adaptor{adaptors_b::pool_upstream(), 64 * KiB, 64 * KiB};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_b::device_oom_probe(); }
};

struct prefetch_over_managed_factory {
  static constexpr char const* name = "prefetch_resource_adaptor";
  static rmm::mr::prefetch_resource_adaptor make() {
    return rmm::mr::prefetch_resource_adaptor{rmm::mr::managed_memory_resource{}};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;  // the adaptor declares device access only
  // As for managed_factory: never ask for more managed memory than the card has.
  static std::optional<std::size_t> oom_probe() { return std::nullopt; }
};

// Device memory cannot be prefetched: the adaptor must still work.
struct prefetch_over_cuda_factory {
  static constexpr char const* name = "prefetch_resource_adaptor";
  static rmm::mr::prefetch_resource_adaptor make() {
    return rmm::mr::prefetch_resource_adaptor{adaptors_b::cuda_upstream()};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_b::device_oom_probe(); }
};

// Blocks of a managed pool, each prefetched on its own stream.
struct prefetch_over_managed_pool_factory {
  static constexpr char const* name = "prefetch_resource_adaptor";
  static rmm::mr::prefetch_resource_adaptor make() {
    return rmm::mr::prefetch_resource_adaptor{
        rmm::mr::pool_memory_resource{rmm::mr::managed_memory_resource{}, 64 * MiB}};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return std::nullopt; }
};

struct thread_safe_over_cuda_factory {
  static constexpr char const* name = "thread_safe_resource_adaptor";
  static rmm::mr::thread_safe_resource_adaptor make() {
    return rmm::mr::thread_safe_resource_adaptor{adaptors_b::cuda_upstream()};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_b::device_oom_probe(); }
};

struct thread_safe_over_pool_factory {
  static constexpr char const* name = "thread_safe_resource_adaptor";
  static rmm::mr::thread_safe_resource_adaptor make() {
    return rmm::mr::thread_safe_resource_adaptor{adaptors_b::pool_upstream()};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_b::device_oom_probe(); }
};

// All four stacked over a pool: thread_safe(prefetch(aligned 4 KiB(failure_callback(pool)))).
struct policy_stack_factory {
  static constexpr char const* name = "thread_safe_resource_adaptor";
  static rmm::mr::thread_safe_resource_adaptor make() {
    rmm::mr::failure_callback_resource_adaptor<> on_failure{
        adaptors_b::pool_upstream(), adaptors_b::never_retry, nullptr};
    rmm::mr::aligned_resource_adaptor aligned{on_failure, 4 * KiB};
    rmm::mr::prefetch_resource_adaptor prefetch{aligned};
    return rmm::mr::thread_safe_resource_adaptor{prefetch};
  }
  static std::string unavailable() { return {}; }
  static constexpr bool host_accessible = false;
  static std::optional<std::size_t> oom_probe() { return adaptors_b::device_oom_probe(); }
};

}  // namespace

#define RMM_CONFORMANCE_ADAPTOR_FACTORIES_B                                                \
  , failure_callback_over_cuda_factory, failure_callback_over_pool_factory,                \
      aligned_over_cuda_factory, aligned_over_pool_factory, prefetch_over_managed_factory, \
      prefetch_over_cuda_factory, prefetch_over_managed_pool_factory,                      \
      thread_safe_over_cuda_factory, thread_safe_over_pool_factory, policy_stack_factory
