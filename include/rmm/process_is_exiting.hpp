/**
 * @file process_is_exiting.hpp
 * @brief Tells destructors whether the process has begun exiting, so they can skip CUDA calls.
 */
#pragma once

#include <rmm/detail/export.hpp>

namespace rmm {

/**
 * @brief Returns true once the process has entered `exit()` / atexit handler execution.
 *
 * Destructors of objects held in the per-device resource registry may run during process
 * termination, after the CUDA primary context may already have been destroyed; calling CUDA then
 * is undefined behaviour. Such destructors (and helpers they call, such as `release()`) consult
 * this function and skip CUDA calls, leaking what they would have freed: the OS reclaims it.
 *
 * The flag is set by an `atexit` handler that the library registers right after the registry's
 * storage is constructed, so it is set before that storage is destroyed.
 *
 * Storing library objects with static or thread-local storage duration is unsupported; this
 * function does not make such destructors safe.
 *
 * Thread-safety: always safe to call, from any thread and from any destructor; it performs one
 * atomic load with acquire semantics and never calls CUDA.
 *
 * @return true if exit() has begun; false otherwise.
 */
RMM_EXPORT bool process_is_exiting() noexcept;

}  // namespace rmm
