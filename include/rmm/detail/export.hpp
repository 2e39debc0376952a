/**
 * @file export.hpp
 * @brief Symbol visibility of the compiled part of the library.
 */
#pragma once

// The compiled library is built with hidden visibility; what must be one object per process
// (registry, exit flag, logger) is exported explicitly so that every shared object in a process
// binds to the same definition.
#if defined(_WIN32)
#define RMM_EXPORT __declspec(dllexport)
#else
#define RMM_EXPORT __attribute__((visibility("default")))
#endif
