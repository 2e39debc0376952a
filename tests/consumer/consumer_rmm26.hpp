// The parts of the consumer program in consumer_rmm26.cpp (what code written against RMM 26.x
// uses beyond the seed's page), and the check both files report through.
#pragma once

#include <rmm/cuda_stream_view.hpp>

namespace consumer {

/// Counts a failed check and prints what failed (defined in consumer.cpp).
void expect(bool condition, char const* what);

/// Containers, resource adaptors, Thrust interop and prefetch; needs a GPU.
void rmm26_with_gpu(rmm::cuda_stream_view stream);

/// Compile-time promises and the compatibility headers' checks that need no GPU.
void rmm26_host_only();

}  // namespace consumer
