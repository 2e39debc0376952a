// Test runner for the host suites (Catch2's implementation is in catch_impl.cpp).
#include "catch_session.hpp"

int main(int argc, char* argv[]) { return rmm::test::run_catch_session(argc, argv); }
