// Conformance factories for resource adaptors (group A), included by conformance_gpu_tests.cpp
// inside its anonymous namespace context (after the base factories and helpers). The macro lists
// them, each preceded by a comma.
#pragma once

#define RMM_CONFORMANCE_ADAPTOR_FACTORIES_A
