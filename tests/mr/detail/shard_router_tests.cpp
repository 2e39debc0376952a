// shard_router: which child serves a stream (the one with the fewest users: threads' cached
// routes, given back when a route is evicted or its thread exits, and created streams assigned to
// it), which child owns an address, and the order of tries after a child runs out of memory. Host
// only: the streams are made-up handles (and cudaStreamPerThread) that the router never passes to
// CUDA.
#include <rmm/error.hpp>
#include <rmm/mr/detail/mechanics/shard_router.hpp>
#include <rmm/out_of_memory_report.hpp>

#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using rmm::mr::detail::piece_map;
using rmm::mr::detail::shard_router;

struct fake_shard {
  piece_map* pieces;
  piece_map::owner_t owner;
  int releases{};  // calls of release() (retry_after_child_oom)

  void release() { ++releases; }
};

using router_t = shard_router<fake_shard>;

constexpr std::uintptr_t per_thread = 0;  // the calling thread's per-thread default stream

cuda::stream_ref stream(std::uintptr_t i) {
  return i == per_thread ? cuda::stream_ref{cudaStreamPerThread}
                         : cuda::stream_ref{reinterpret_cast<cudaStream_t>(0x10000 + i * 0x100)};
}

// The child that serves stream `i`, routed from the calling thread.
fake_shard& child_for(router_t& r, std::uintptr_t i) {
  return r.route(stream(i), [](piece_map& pieces, piece_map::owner_t owner) {
    return std::make_unique<fake_shard>(fake_shard{&pieces, owner});
  });
}

// The owner number of the child that serves stream `i`, routed from the calling thread.
piece_map::owner_t route(router_t& r, std::uintptr_t i) { return child_for(r, i).owner; }

// Routes the streams in order on a new thread, which then exits; returns their owners.
std::vector<piece_map::owner_t> route_on_new_thread(router_t& r,
                                                    std::vector<std::uintptr_t> const& streams) {
  std::vector<piece_map::owner_t> owners;
  std::thread([&] {
    for (auto i : streams) {
      owners.push_back(route(r, i));
    }
  }).join();
  return owners;
}

}  // namespace

TEST_CASE("shard_router: a limit of 0 never shards", "[shard_router]") {
  router_t r{0};
  r.enable();
  CHECK_FALSE(r.sharded());
  int x = 0;
  CHECK(r.owner_of(&x) == nullptr);
  CHECK(r.num_children() == 0);
}

TEST_CASE("shard_router: per-thread streams of finished threads leave their children to new ones",
          "[shard_router]") {
  router_t r{8};
  r.enable();
  REQUIRE(r.sharded());
  // Two threads alive at once (the first waits for the second), each on its per-thread default
  // stream (a different stream in each thread): children 1 and 2.
  piece_map::owner_t first  = 0;
  piece_map::owner_t second = 0;
  std::thread a([&] {
    first = route(r, per_thread);
    std::thread([&] { second = route(r, per_thread); }).join();
  });
  a.join();
  CHECK(first == 1);
  CHECK(second == 2);
  // Both have exited: a new thread's per-thread stream goes to child 1 again, not to a third
  // child (round robin, the earlier rule, made a new child for every new stream).
  CHECK(route_on_new_thread(r, {per_thread}) == std::vector<piece_map::owner_t>{1});
  CHECK(r.num_children() == 2);
}

TEST_CASE("shard_router: created streams spread over children and keep theirs", "[shard_router]") {
  router_t r{8};
  r.enable();
  // Stream 1's thread has exited, but the stream may come back: stream 2 gets a child of its own.
  CHECK(route_on_new_thread(r, {1}) == std::vector<piece_map::owner_t>{1});
  CHECK(route_on_new_thread(r, {2}) == std::vector<piece_map::owner_t>{2});
  // A stream keeps its child, whichever thread routes it.
  CHECK(route_on_new_thread(r, {2, 1}) == std::vector<piece_map::owner_t>{2, 1});
  // A per-thread stream goes to the first child with no user: a new one.
  CHECK(route_on_new_thread(r, {per_thread}) == std::vector<piece_map::owner_t>{3});
}

TEST_CASE("shard_router: a route evicted from a thread's cache stops counting", "[shard_router]") {
  router_t r{8};
  r.enable();
  piece_map::owner_t later = 0;
  std::thread a([&] {
    // Four routes fill the cache: the thread's per-thread stream on child 1, streams 2-4 on
    // children 2-4. Stream 5 goes to child 5 and evicts the first route, so that child 1 has no
    // user left for the thread started next.
    CHECK(route(r, per_thread) == 1);
    CHECK(route(r, 2) == 2);
    CHECK(route(r, 3) == 3);
    CHECK(route(r, 4) == 4);
    CHECK(route(r, 5) == 5);
    std::thread([&] { later = route(r, per_thread); }).join();
  });
  a.join();
  CHECK(later == 1);
  CHECK(r.num_children() == 5);
}

TEST_CASE("shard_router: more live threads than children share the least used", "[shard_router]") {
  router_t r{2};
  r.enable();
  std::vector<piece_map::owner_t> owners(4);
  // Nested threads: all four are alive when the innermost routes.
  std::thread([&] {
    owners[0] = route(r, per_thread);
    std::thread([&] {
      owners[1] = route(r, per_thread);
      std::thread([&] {
        owners[2] = route(r, per_thread);
        std::thread([&] { owners[3] = route(r, per_thread); }).join();
      }).join();
    }).join();
  }).join();
  CHECK(owners == std::vector<piece_map::owner_t>{1, 2, 1, 2});
}

TEST_CASE("shard_router: owner_of finds the child by address", "[shard_router]") {
  router_t r{4};
  std::vector<char> memory(4096);
  auto const base = reinterpret_cast<std::uintptr_t>(memory.data());
  CHECK(r.owner_of(memory.data()) == nullptr);  // not sharded: everything is the root's
  r.enable();
  fake_shard* child = nullptr;
  std::thread([&] {
    child = &r.route(stream(1), [](piece_map& pieces, piece_map::owner_t owner) {
      return std::make_unique<fake_shard>(fake_shard{&pieces, owner});
    });
  }).join();
  REQUIRE(child != nullptr);
  REQUIRE(child->pieces->insert(base + 1024, 1024, child->owner));
  CHECK(r.owner_of(memory.data() + 1024) == child);
  CHECK(r.owner_of(memory.data() + 2047) == child);
  CHECK(r.owner_of(memory.data() + 2048) == nullptr);  // the root's
  CHECK(r.owner_of(memory.data()) == nullptr);
  child->pieces->erase(base + 1024);
  CHECK(r.owner_of(memory.data() + 1024) == nullptr);
}

TEST_CASE("shard_router: after a child's out-of-memory, the others release, the child, the root",
          "[shard_router]") {
  router_t r{4};
  r.enable();
  fake_shard& failed = child_for(r, 1);
  fake_shard& other  = child_for(r, 2);
  fake_shard& third  = child_for(r, 3);
  REQUIRE(r.num_children() == 3);
  int from_child = 0;
  int from_root  = 0;
  std::vector<std::string> tries;
  auto const serve = [&](char const* who, void* p) {
    return [&tries, who, p] {
      tries.emplace_back(who);
      return p;
    };
  };
  auto const fail = [&](char const* who) {
    return [&tries, who]() -> void* {
      tries.emplace_back(who);
      throw rmm::out_of_memory(std::string{who} + " is full");
    };
  };
  std::string merged_from;
  auto const merge = [&](rmm::out_of_memory const& e) {
    merged_from = e.what();
    rmm::out_of_memory_report report;
    report.resource = "fake";
    report.reason   = "merged";
    return report;
  };

  SECTION("the child's second try serves: the root is not tried") {
    CHECK(r.retry_after_child_oom(failed, serve("child", &from_child), fail("root"), merge) ==
          &from_child);
    CHECK(tries == std::vector<std::string>{"child"});
  }
  SECTION("the child fails again: the root serves") {
    CHECK(r.retry_after_child_oom(failed, fail("child"), serve("root", &from_root), merge) ==
          &from_root);
    CHECK(tries == std::vector<std::string>{"child", "root"});
  }
  SECTION("both fail: out_of_memory with the report merged from the root's exception") {
    try {
      r.retry_after_child_oom(failed, fail("child"), fail("root"), merge);
      FAIL("no exception");
    } catch (rmm::out_of_memory const& e) {
      REQUIRE(e.report() != nullptr);
      CHECK(e.report()->reason == "merged");
    }
    CHECK(tries == std::vector<std::string>{"child", "root"});
    CHECK(merged_from.find("root is full") != std::string::npos);
  }
  SECTION("another exception from the child passes through: the root is not tried") {
    auto const broken = [&]() -> void* {
      tries.emplace_back("child");
      throw std::runtime_error("broken");
    };
    CHECK_THROWS_AS(r.retry_after_child_oom(failed, broken, serve("root", &from_root), merge),
                    std::runtime_error);
    CHECK(tries == std::vector<std::string>{"child"});
  }
  // Every other child gave its memory back once, before the tries; the failed child did not.
  CHECK(failed.releases == 0);
  CHECK(other.releases == 1);
  CHECK(third.releases == 1);
}
