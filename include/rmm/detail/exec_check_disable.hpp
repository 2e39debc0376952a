/**
 * @file exec_check_disable.hpp
 * @brief RMM_EXEC_CHECK_DISABLE: silences nvcc's execution-space check for the next function.
 */
#pragma once

// Thrust calls allocator constructors from __host__ __device__ functions of its own. nvcc checks
// every such call into a __host__-only function when it instantiates the caller; the pragma tells
// it that the call is only ever made on the host. Other compilers need nothing.
#if defined(__NVCC__)
#define RMM_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#define RMM_EXEC_CHECK_DISABLE
#endif
