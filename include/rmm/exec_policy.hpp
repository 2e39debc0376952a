/**
 * @file exec_policy.hpp
 * @brief Thrust execution policies whose temporary storage comes from a memory resource.
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <thrust/system/cuda/execution_policy.h>
#include <thrust/version.h>
#include <cuda/memory_resource>

#include <utility>

namespace rmm {

/**
 * @brief The Thrust CUDA execution policy type that exec_policy derives from: one that runs on a
 * stream, synchronises where Thrust's algorithms need it, and allocates temporary storage through
 * an rmm::mr::thrust_allocator.
 */
using thrust_exec_policy_t =
    thrust::detail::execute_with_allocator<mr::thrust_allocator<char>,
                                           thrust::cuda_cub::execute_on_stream_base>;

/**
 * @brief A Thrust CUDA execution policy that runs algorithms on a stream and takes their
 * temporary storage from a memory resource, stream-ordered on that stream.
 *
 * `thrust::sort(rmm::exec_policy(stream, mr), first, last)` launches on @p stream, and every
 * temporary buffer the algorithm needs is allocated from and returned to @p mr on @p stream.
 * Thrust synchronises the stream where an algorithm's result is returned to the host (as with
 * `thrust::cuda::par.on(stream)`); see exec_policy_nosync for a policy that lets Thrust skip the
 * synchronisations it does not need.
 *
 * Thread-safety: a policy is a value; distinct policies may be used concurrently if the resource
 * is thread-safe.
 *
 * @note Passing the policy to a Thrust algorithm instantiates Thrust's CUDA backend, which needs a
 * CUDA translation unit compiled by nvcc (see docs/thrust_and_prefetch.md).
 */
class exec_policy : public thrust_exec_policy_t {
 public:
  /**
   * @brief Constructs the policy.
   * @param stream The stream on which algorithms run and temporary memory is allocated.
   * @param mr The resource temporary memory is allocated from: a resource object (shared or
   * copied) or a reference, which must outlive the policy and its copies.
   * @throws rmm::cuda_error if there is no current device.
   */
  explicit exec_policy(cuda_stream_view stream = cuda_stream_default,
                       cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                           mr::get_current_device_resource_ref())
      : thrust_exec_policy_t{thrust::cuda::par(mr::thrust_allocator<char>{stream, std::move(mr)})
                                 .on(stream.value())} {}
};

/**
 * @brief The Thrust CUDA execution policy type that exec_policy_nosync derives from: like
 * thrust_exec_policy_t, but Thrust may skip stream synchronisations that are not needed for
 * correctness.
 */
using thrust_exec_policy_nosync_t =
    thrust::detail::execute_with_allocator<mr::thrust_allocator<char>,
                                           thrust::cuda_cub::execute_on_stream_nosync_base>;

/**
 * @brief Like exec_policy, but lets Thrust skip the stream synchronisations that are not required
 * for correctness (those of `thrust::cuda::par_nosync`).
 *
 * Algorithms whose results are written to device memory may then return before the work on the
 * stream has finished; the caller synchronises the stream (or orders later work on it) before
 * reading those results on the host. Algorithms that return a value to the host (reduce, count,
 * ...) still wait for it.
 *
 * Thread-safety: as exec_policy.
 */
class exec_policy_nosync : public thrust_exec_policy_nosync_t {
 public:
  /**
   * @brief Constructs the policy.
   * @param stream The stream on which algorithms run and temporary memory is allocated.
   * @param mr The resource temporary memory is allocated from (as for exec_policy).
   * @throws rmm::cuda_error if there is no current device.
   */
  explicit exec_policy_nosync(cuda_stream_view stream = cuda_stream_default,
                              cuda::mr::any_resource<cuda::mr::device_accessible> mr =
                                  mr::get_current_device_resource_ref())
      : thrust_exec_policy_nosync_t{
            thrust::cuda::par_nosync(mr::thrust_allocator<char>{stream, std::move(mr)})
                .on(stream.value())} {}
};

}  // namespace rmm
