/**
 * @file failure_callback_t.hpp
 * @brief The callback type of failure_callback_resource_adaptor, in a header of its own so that
 * code can name it without the adaptor (later RMM releases have this header too).
 */
#pragma once

#include <cstddef>
#include <functional>

namespace rmm::mr {

/**
 * @brief Callback function type used by failure_callback_resource_adaptor.
 *
 * The adaptor calls it when an allocation from its upstream throws the adaptor's exception type.
 * The signature is `bool failure_callback_t(std::size_t bytes, void* callback_arg)`: `bytes` is
 * the size of the failed request and `callback_arg` the extra argument given to the adaptor's
 * constructor. Returning true makes the adaptor try the allocation again; returning false makes
 * it rethrow the caught exception. An exception thrown by the callback propagates out of the
 * allocation in place of the original one.
 *
 * The adaptor may call the callback from several threads at once (one call per failing
 * allocation), so a callback shared by threads must synchronise its own state. A callback that
 * returns true without freeing anything makes the adaptor retry for ever: count the retries (see
 * failure_callback_resource_adaptor).
 */
using failure_callback_t = std::function<bool(std::size_t, void*)>;

}  // namespace rmm::mr
