// Host-side logic of the driver-pool resources (no GPU needed): the limit arithmetic and its
// thread safety, fraction and option validation, handle-type names, UUIDs and the map from pool
// handles to shared limits.
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_pinned_memory_resource.hpp>
#include <rmm/mr/detail/mechanics/driver_pool.hpp>
#include "../utilities/messages.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using rmm::test::logic_error_message;

using Catch::Matchers::Contains;
using rmm::mr::pinned_pool_options;
using rmm::mr::resource_uuid;
using rmm::mr::detail::limit_for_fraction;
using rmm::mr::detail::pool_limit;
using rmm::mr::detail::resolve_pinned_location;

cudaMemPool_t fake_pool(std::uintptr_t value) { return reinterpret_cast<cudaMemPool_t>(value); }

}  // namespace

TEST_CASE("driver pool: limit_for_fraction", "[driver_pool]") {
  CHECK(limit_for_fraction(0.5, 1000, "r") == 500);
  CHECK(limit_for_fraction(0.0, 1000, "r") == 0);
  CHECK(limit_for_fraction(1.0, 1000, "r") == 1000);
  CHECK(limit_for_fraction(0.333, 3000, "r") == 999);
  std::size_t const big = std::size_t{80} << 30;  // an 80 GiB device
  CHECK(limit_for_fraction(0.9, big, "r") == big / 10 * 9);
  CHECK(limit_for_fraction(1.0, std::numeric_limits<std::size_t>::max(), "r") ==
        std::numeric_limits<std::size_t>::max());
  CHECK(limit_for_fraction(0.999999999, std::numeric_limits<std::size_t>::max(), "r") <=
        std::numeric_limits<std::size_t>::max());
  for (double bad : {-0.25,
                     1.5,
                     std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    INFO("fraction " << bad);
    CHECK_THROWS_AS(limit_for_fraction(bad, 1000, "r"), rmm::logic_error);
  }
  CHECK_THAT(logic_error_message([] { static_cast<void>(limit_for_fraction(1.5, 10, "my_mr")); }),
             Contains("my_mr") && Contains("fraction 1.5") && Contains("[0, 1]"));
  CHECK_THAT(logic_error_message([] { static_cast<void>(limit_for_fraction(-0.25, 10, "r")); }),
             Contains("fraction -0.25"));
  CHECK_THAT(
      logic_error_message([] {
        static_cast<void>(limit_for_fraction(std::numeric_limits<double>::quiet_NaN(), 10, "r"));
      }),
      Contains("fraction nan"));
}

TEST_CASE("driver pool: pool_limit accounting", "[driver_pool]") {
  pool_limit limit;
  std::size_t observed = 12345;
  CHECK(limit.limit() == 0);
  REQUIRE(limit.try_acquire(std::size_t{1} << 40, observed));  // no limit: anything goes
  limit.release(std::size_t{1} << 40);
  CHECK(limit.in_use() == 0);

  limit.set_limit(1000);
  REQUIRE(limit.try_acquire(600, observed));
  CHECK(limit.in_use() == 600);
  CHECK_FALSE(limit.try_acquire(401, observed));
  CHECK(observed == 600);
  CHECK(limit.in_use() == 600);               // a refused request takes nothing
  REQUIRE(limit.try_acquire(400, observed));  // exactly up to the limit
  CHECK(limit.in_use() == 1000);
  CHECK_FALSE(limit.try_acquire(1, observed));
  limit.release(400);
  limit.release(600);
  CHECK(limit.in_use() == 0);
  REQUIRE(limit.try_acquire(1000, observed));  // freed bytes count again

  // Lowering the limit below what is in use refuses later requests until enough is freed.
  limit.set_limit(100);
  CHECK_FALSE(limit.try_acquire(1, observed));
  CHECK(observed == 1000);
  limit.release(950);
  CHECK(limit.try_acquire(50, observed));
  limit.release(100);
  CHECK(limit.in_use() == 0);

  // Releasing more than is in use stops at zero; overflow is refused even without a limit.
  limit.release(5);
  CHECK(limit.in_use() == 0);
  limit.set_limit(0);
  REQUIRE(limit.try_acquire(10, observed));
  CHECK_FALSE(limit.try_acquire(std::numeric_limits<std::size_t>::max(), observed));
  CHECK(observed == 10);
  limit.release(10);
}

TEST_CASE("driver pool: pool_limit never lets concurrent requests past the limit",
          "[driver_pool]") {
  pool_limit limit;
  constexpr std::size_t cap     = 1000;
  constexpr std::size_t request = 7;
  constexpr int num_threads     = 8;
  limit.set_limit(cap);
  std::atomic<std::size_t> over{0};
  std::atomic<std::size_t> granted{0};
  std::atomic<std::size_t> refused{0};
  std::atomic<int> filled{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&] {
      // Phase 1: every thread takes up to 30 requests (8 x 30 x 7 bytes > 1000) and holds them
      // until all threads are done taking: the limit must refuse some.
      std::vector<std::size_t> held;
      for (int i = 0; i < 30; ++i) {
        std::size_t observed{};
        if (limit.try_acquire(request, observed)) {
          ++granted;
          held.push_back(request);
        } else {
          ++refused;
        }
        if (limit.in_use() > cap) {
          ++over;
        }
      }
      ++filled;
      while (filled.load() < num_threads) {
        std::this_thread::yield();
      }
      // Phase 2: churn, acquiring and releasing concurrently.
      for (int i = 0; i < 20000; ++i) {
        std::size_t observed{};
        if (limit.try_acquire(request, observed)) {
          held.push_back(request);
        }
        if (limit.in_use() > cap) {
          ++over;
        }
        if (!held.empty() && (i % 2 == 0 || held.size() > 30)) {
          limit.release(held.back());
          held.pop_back();
        }
      }
      for (auto bytes : held) {
        limit.release(bytes);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  CHECK(over == 0);
  CHECK(granted == cap / request);  // phase 1 fills the limit exactly, whatever the interleaving
  CHECK(refused == num_threads * 30 - cap / request);
  CHECK(limit.in_use() == 0);
}

TEST_CASE("driver pool: handle type names", "[driver_pool]") {
  using rmm::mr::detail::handle_type_names;
  using rmm::mr::detail::unsupported_handle_types;
  CHECK(handle_type_names(0) == "none");
  CHECK(handle_type_names(0x1) == "posix_file_descriptor");
  CHECK(handle_type_names(0x2) == "win32");
  CHECK(handle_type_names(0x4) == "win32_kmt");
  CHECK(handle_type_names(0x8) == "fabric");
  CHECK(handle_type_names(0x9) == "posix_file_descriptor|fabric");
  CHECK(handle_type_names(0x31) == "posix_file_descriptor|0x30");
  CHECK(unsupported_handle_types(0x9, 0x1) == 0x8);
  CHECK(unsupported_handle_types(0x1, 0x9) == 0);
  CHECK(unsupported_handle_types(0, 0) == 0);
}

TEST_CASE("driver pool: one shared limit per pool handle", "[driver_pool]") {
  using rmm::mr::detail::fresh_pool_limit;
  using rmm::mr::detail::shared_pool_limit;
  auto const pool_a = fake_pool(0x1000);
  auto const pool_b = fake_pool(0x2000);
  auto a1           = shared_pool_limit(pool_a);
  auto a2           = shared_pool_limit(pool_a);
  auto b1           = shared_pool_limit(pool_b);
  CHECK(a1 == a2);
  CHECK(a1 != b1);
  a1->set_limit(42);
  CHECK(a2->limit() == 42);
  CHECK(b1->limit() == 0);
  // A fresh limit (a new pool reusing a handle) replaces the entry.
  auto a3 = fresh_pool_limit(pool_a);
  CHECK(a3 != a1);
  CHECK(a3->limit() == 0);
  CHECK(shared_pool_limit(pool_a) == a3);
  // An entry lives as long as someone holds it.
  a1.reset();
  a2.reset();
  a3.reset();
  auto a4 = shared_pool_limit(pool_a);
  CHECK(a4->limit() == 0);
  // Many short-lived pools do not break the map.
  for (std::uintptr_t i = 1; i <= 1000; ++i) {
    CHECK(shared_pool_limit(fake_pool(0x100000 + 16 * i))->limit() == 0);
  }
}

TEST_CASE("pinned pool options resolve to a location or a named error", "[driver_pool]") {
  auto const where = [](pinned_pool_options const& o, int device_numa) {
    return resolve_pinned_location(o, device_numa, 0);
  };
  pinned_pool_options plain;
  auto loc = where(plain, 3);
  CHECK(loc.type == cudaMemLocationTypeHost);  // no IPC, no numa_id: the OS places it

  pinned_pool_options numa;
  numa.numa_id = 1;
  loc          = where(numa, 3);
  CHECK(loc.type == cudaMemLocationTypeHostNuma);
  CHECK(loc.id == 1);

  pinned_pool_options os;
  os.numa_id = -1;
  CHECK(where(os, 3).type == cudaMemLocationTypeHost);

  pinned_pool_options ipc;
  ipc.ipc_enabled = true;
  loc             = where(ipc, 2);  // the device's host NUMA node
  CHECK(loc.type == cudaMemLocationTypeHostNuma);
  CHECK(loc.id == 2);
  ipc.numa_id = 0;  // an explicit node wins
  CHECK(where(ipc, 2).id == 0);

  CHECK_THAT(logic_error_message([&] {
               pinned_pool_options o;
               o.numa_id = -2;
               static_cast<void>(where(o, 0));
             }),
             Contains("numa_id -2 is invalid"));
  CHECK_THAT(logic_error_message([&] {
               pinned_pool_options o;
               o.ipc_enabled = true;
               static_cast<void>(where(o, -1));
             }),
             Contains("IPC-enabled") && Contains("device 0 reports host NUMA id -1"));
  CHECK_THAT(logic_error_message([&] {
               pinned_pool_options o;
               o.ipc_enabled = true;
               o.numa_id     = -1;
               static_cast<void>(where(o, 5));
             }),
             Contains("numa_id is -1"));
  CHECK_THAT(logic_error_message([&] {
               pinned_pool_options o;
               o.max_size = 0;
               static_cast<void>(where(o, 0));
             }),
             Contains("max_size must not be 0"));
  CHECK_THAT(logic_error_message([&] {
               pinned_pool_options o;
               o.max_size          = 1 << 20;
               o.initial_pool_size = 2 << 20;
               static_cast<void>(where(o, 0));
             }),
             Contains("initial_pool_size 2097152 exceeds max_size 1048576"));
}

TEST_CASE("resource_uuid: generation, text form and order", "[driver_pool]") {
  resource_uuid const nil;
  CHECK(nil.is_nil());
  CHECK(nil.to_string() == "00000000-0000-0000-0000-000000000000");

  std::set<resource_uuid> seen;
  for (int i = 0; i < 100; ++i) {
    auto const id = resource_uuid::generate();
    CHECK_FALSE(id.is_nil());
    CHECK((id.bytes()[6] >> 4U) == 4);        // version 4
    CHECK((id.bytes()[8] & 0xC0U) == 0x80U);  // RFC 4122 variant
    auto const text = id.to_string();
    REQUIRE(text.size() == 36);
    CHECK(text[8] == '-');
    CHECK(text[13] == '-');
    CHECK(text[18] == '-');
    CHECK(text[23] == '-');
    CHECK(text[14] == '4');
    CHECK(resource_uuid::from_string(text) == id);
    seen.insert(id);
  }
  CHECK(seen.size() == 100);

  auto const parsed = resource_uuid::from_string("0123ABCD-4567-89ab-CDEF-0123456789AB");
  CHECK(parsed.to_string() == "0123abcd-4567-89ab-cdef-0123456789ab");
  CHECK(parsed.bytes()[0] == 0x01);
  CHECK(parsed.bytes()[15] == 0xab);
  CHECK(nil < parsed);
  CHECK_FALSE(parsed < nil);
  CHECK(parsed != nil);
  for (char const* bad : {"",
                          "0123abcd-4567-89ab-cdef-0123456789a",
                          "0123abcd-4567-89ab-cdef-0123456789abc",
                          "0123abcd+4567-89ab-cdef-0123456789ab",
                          "0123abcd-4567-89ab-cdef-0123456789ag"}) {
    INFO(bad);
    CHECK_THAT(logic_error_message([&] { static_cast<void>(resource_uuid::from_string(bad)); }),
               Contains("is not a UUID") && Contains(std::string{"'"} + bad + "'"));
  }
}
