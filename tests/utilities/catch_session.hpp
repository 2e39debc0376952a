// The Catch2 session of every test program, defined once in catch_impl.cpp: Catch2 v2 declares
// Catch::Session only where its implementation is compiled, so the mains call this instead.
#pragma once

namespace rmm::test {

/// Runs the test cases selected by the command line; returns the program's exit status.
int run_catch_session(int argc, char* argv[]);

}  // namespace rmm::test
