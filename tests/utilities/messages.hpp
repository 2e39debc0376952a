// The message of an expected exception, for tests that check what an error says.
#pragma once

#include <rmm/error.hpp>

#include <string>

namespace rmm::test {

/// @brief The what() of the E that f() throws; if f throws nothing, a text saying so, which no
/// check on the message's contents accepts. Other exceptions propagate (and fail the test).
template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (E const& e) {
    return e.what();
  }
  return "(no exception of the expected type was thrown)";
}

/// @brief message_of<rmm::logic_error>.
template <typename F>
std::string logic_error_message(F&& f) {
  return message_of<rmm::logic_error>(f);
}

/// @brief message_of<rmm::out_of_memory>.
template <typename F>
std::string out_of_memory_message(F&& f) {
  return message_of<rmm::out_of_memory>(f);
}

}  // namespace rmm::test
