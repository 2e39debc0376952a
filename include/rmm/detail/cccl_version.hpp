/**
 * @file cccl_version.hpp
 * @brief Stops the build with a clear message when the compiler finds a CCCL older than 3.5.
 *
 * The CUDA 13.0 toolkit ships CCCL 3.0 in <toolkit>/include/cccl, which nvcc always searches. If
 * that copy comes first on the include path (a consumer that adds CCCL's directory by hand after
 * the toolkit's, say), the errors would otherwise surface deep inside cuda::mr. rmm::cccl, the
 * target find_package(rmm) provides, puts the right copy first; see docs/dependencies.md.
 */
#pragma once

#include <cuda/std/version>

#if !defined(CCCL_VERSION) || CCCL_VERSION < 3005000
#error \
    "rmm needs CCCL >= 3.5.0, but the compiler found an older CCCL first on the include path \
(the CUDA 13.0 toolkit's copy is 3.0). Link rmm::rmm (which puts the pinned CCCL first) or put \
the include directory of CCCL >= 3.5 ahead of the toolkit's; see docs/dependencies.md."
#endif
