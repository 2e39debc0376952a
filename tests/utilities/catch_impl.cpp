// Catch2's implementation, compiled once and linked into every test program (rmm_catch_impl in
// tests/CMakeLists.txt): it is the slowest source to compile, and the programs only differ in
// their main (host_main.cpp, gpu_main.cpp, multi_gpu/mgpu_main.cpp).
#define CATCH_CONFIG_RUNNER
#include "catch_session.hpp"

#include <catch2/catch.hpp>

int rmm::test::run_catch_session(int argc, char* argv[]) {
  return Catch::Session().run(argc, argv);
}
