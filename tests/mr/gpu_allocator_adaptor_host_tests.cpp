// gpu_allocator_adaptor without a GPU: its bookkeeping over host-backed "device" resources (see
// utilities/test_resources.hpp). Size 0, alignments, flags, deallocate true exactly once, free,
// the refusals of reallocate, copies sharing state, upstream failures (out of memory, foreign
// exceptions, misaligned pointers) reported as nullptr, many threads at once, and an
// IGpuAllocator-shaped base class forwarding to the adaptor. Moving reallocations copy with CUDA,
// so where there is no GPU they return nullptr; the tests accept that outcome and then check that
// the original is untouched (on a GPU machine the copy succeeds and the move is checked).
#include "../utilities/igpu_allocator.hpp"
#include "../utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/gpu_allocator_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

// Upstreams that misbehave, in a named namespace: clang drops the hidden-friend get_property of a
// class with internal linkage as unneeded (-Wunneeded-internal-declaration).
namespace rmm::test::gpu_allocator_adaptor_fakes {

using rmm::test::host_backed_resource;

// Takes memory from host_backed_resource until `limit` bytes are outstanding, then throws
// rmm::out_of_memory, like a device that is full.
class limited_resource {
 public:
  explicit limited_resource(std::size_t limit) : state_{std::make_shared<state>(limit)} {}

  void* allocate_sync(std::size_t bytes, std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    {
      std::lock_guard<std::mutex> lock(state_->mtx);
      if (bytes > state_->limit - state_->outstanding) {
        throw rmm::out_of_memory{"limited_resource: out of memory"};
      }
      state_->outstanding += bytes;
    }
    return state_->upstream.allocate_sync(bytes, alignment);
  }
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    state_->upstream.deallocate_sync(ptr, bytes, alignment);
    std::lock_guard<std::mutex> lock(state_->mtx);
    state_->outstanding -= bytes;
  }
  void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t alignment) {
    return allocate_sync(bytes, alignment);
  }
  void deallocate(cuda::stream_ref, void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    deallocate_sync(ptr, bytes, alignment);
  }
  [[nodiscard]] std::size_t outstanding() const {
    std::lock_guard<std::mutex> lock(state_->mtx);
    return state_->outstanding;
  }
  bool operator==(limited_resource const& other) const noexcept { return state_ == other.state_; }
  bool operator!=(limited_resource const& other) const noexcept { return !(*this == other); }
  friend void get_property(limited_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  struct state {
    explicit state(std::size_t l) : limit{l} {}
    std::mutex mtx;
    std::size_t limit;
    std::size_t outstanding{0};
    host_backed_resource upstream;
  };
  std::shared_ptr<state> state_;
};

// Throws something that is not a std::exception from every allocation.
struct throwing_resource {
  void* allocate_sync(std::size_t, std::size_t = rmm::CUDA_ALLOCATION_ALIGNMENT) { throw 42; }
  void deallocate_sync(void*, std::size_t, std::size_t = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {}
  void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t alignment) {
    return allocate_sync(bytes, alignment);
  }
  void deallocate(cuda::stream_ref, void*, std::size_t, std::size_t) noexcept {}
  bool operator==(throwing_resource const&) const noexcept { return true; }
  bool operator!=(throwing_resource const&) const noexcept { return false; }
  friend void get_property(throwing_resource const&, cuda::mr::device_accessible) noexcept {}
};

// Returns pointers 16 bytes past a 256-byte boundary (breaking its promise of alignment), and
// counts what is still outstanding.
class misaligned_resource {
 public:
  void* allocate_sync(std::size_t bytes, std::size_t = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    void* base = std::aligned_alloc(256, rmm::align_up(bytes + 16, 256));
    if (base == nullptr) {
      throw std::bad_alloc{};
    }
    ++*outstanding_;
    return static_cast<char*>(base) + 16;
  }
  void deallocate_sync(void* ptr,
                       std::size_t,
                       std::size_t = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    std::free(static_cast<char*>(ptr) - 16);
    --*outstanding_;
  }
  void* allocate(cuda::stream_ref, std::size_t bytes, std::size_t alignment) {
    return allocate_sync(bytes, alignment);
  }
  void deallocate(cuda::stream_ref, void* ptr, std::size_t bytes, std::size_t alignment) noexcept {
    deallocate_sync(ptr, bytes, alignment);
  }
  [[nodiscard]] int outstanding() const noexcept { return outstanding_->load(); }
  bool operator==(misaligned_resource const& o) const noexcept {
    return outstanding_ == o.outstanding_;
  }
  bool operator!=(misaligned_resource const& o) const noexcept { return !(*this == o); }
  friend void get_property(misaligned_resource const&, cuda::mr::device_accessible) noexcept {}

 private:
  std::shared_ptr<std::atomic<int>> outstanding_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace rmm::test::gpu_allocator_adaptor_fakes

namespace {

using rmm::mr::gpu_allocator_adaptor;
using rmm::test::counting_resource;
using rmm::test::host_backed_resource;
using rmm::test::verifying_resource;

constexpr std::uint32_t resizable = gpu_allocator_adaptor::resizable;

// The upstream stack every test uses unless it needs a special one: the verifying layer checks
// that each free matches its allocation (pointer, size, alignment), the counting layer that
// everything taken is given back.
struct fixture {
  counting_resource counting{host_backed_resource{}};
  verifying_resource verifying{counting};
  gpu_allocator_adaptor adaptor{verifying};

  void check_balanced() const {
    CHECK(adaptor.allocated_bytes() == 0);
    CHECK(adaptor.live_allocations() == 0);
    CHECK(verifying.failures().empty());
    CHECK(verifying.live_allocations() == 0);
    CHECK(counting.counts().bytes_outstanding.load() == 0);
    CHECK(counting.counts().allocations.load() == counting.counts().deallocations.load());
  }
};

void fill(void* ptr, std::size_t bytes, unsigned char seed) {
  auto* p = static_cast<unsigned char*>(ptr);
  for (std::size_t i = 0; i < bytes; ++i) {
    p[i] = static_cast<unsigned char>(seed + i * 7U);
  }
}

std::size_t mismatches(void const* ptr, std::size_t bytes, unsigned char seed) {
  auto const* p     = static_cast<unsigned char const*>(ptr);
  std::size_t count = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    count += p[i] == static_cast<unsigned char>(seed + i * 7U) ? 0U : 1U;
  }
  return count;
}

using rmm::test::gpu_allocator_adaptor_fakes::limited_resource;
using rmm::test::gpu_allocator_adaptor_fakes::misaligned_resource;
using rmm::test::gpu_allocator_adaptor_fakes::throwing_resource;

using rmm::test::AllocatorFlags;
using rmm::test::forwarding_allocator;
using rmm::test::IGpuAllocator;
using std::uint64_t;

}  // namespace

TEST_CASE("gpu_allocator_adaptor: interface types", "[gpu_allocator_adaptor]") {
  STATIC_REQUIRE(gpu_allocator_adaptor::resizable == 1U);
  STATIC_REQUIRE(gpu_allocator_adaptor::max_alignment == rmm::CUDA_ALLOCATION_ALIGNMENT);
  STATIC_REQUIRE(std::is_copy_constructible_v<gpu_allocator_adaptor>);
  STATIC_REQUIRE(std::is_copy_assignable_v<gpu_allocator_adaptor>);
  STATIC_REQUIRE(!std::is_convertible_v<rmm::test::any_device_resource, gpu_allocator_adaptor>);
  gpu_allocator_adaptor a{host_backed_resource{}};
  STATIC_REQUIRE(noexcept(a.allocate(1, 0, 0)));
  STATIC_REQUIRE(noexcept(a.deallocate(nullptr)));
  STATIC_REQUIRE(noexcept(a.free(nullptr)));
  STATIC_REQUIRE(noexcept(a.reallocate(nullptr, 0, 1)));
  STATIC_REQUIRE(
      std::is_same_v<decltype(a.get_upstream_resource()), rmm::device_async_resource_ref>);
  CHECK(a.stream() == rmm::cuda_stream_view{});
  CHECK_FALSE(a.resizes_in_place());
}

TEST_CASE("gpu_allocator_adaptor: size 0 returns nullptr and takes nothing",
          "[gpu_allocator_adaptor]") {
  fixture f;
  CHECK(f.adaptor.allocate(0, 0, 0) == nullptr);
  CHECK(f.adaptor.allocate(0, 256, resizable) == nullptr);
  CHECK(f.adaptor.allocate(0, 3, 0) == nullptr);
  CHECK(f.counting.counts().allocations.load() == 0);
  f.check_balanced();
}

TEST_CASE("gpu_allocator_adaptor: alignment 0 or a power of two up to 256",
          "[gpu_allocator_adaptor]") {
  fixture f;
  for (std::uint64_t alignment :
       {0ULL, 1ULL, 2ULL, 4ULL, 8ULL, 16ULL, 32ULL, 64ULL, 128ULL, 256ULL}) {
    INFO("alignment " << alignment);
    void* p = f.adaptor.allocate(100, alignment, 0);
    REQUIRE(p != nullptr);
    CHECK(rmm::is_pointer_aligned(p, 256));  // always cudaMalloc's alignment
    CHECK(f.adaptor.allocation_size(p) == 100);
    CHECK(f.adaptor.deallocate(p));
  }
  std::uint64_t const refused[] = {3,
                                   6,
                                   12,
                                   255,
                                   257,
                                   384,
                                   512,
                                   4096,
                                   std::uint64_t{1} << 32U,
                                   std::uint64_t{1} << 63U,
                                   std::numeric_limits<std::uint64_t>::max()};
  for (std::uint64_t alignment : refused) {
    INFO("alignment " << alignment);
    CHECK(f.adaptor.allocate(100, alignment, 0) == nullptr);
    CHECK(f.adaptor.allocate(100, alignment, resizable) == nullptr);
  }
  CHECK(f.counting.counts().allocations.load() == 10);  // the refusals reached no upstream
  f.check_balanced();
}

TEST_CASE("gpu_allocator_adaptor: deallocate is true exactly once per allocation",
          "[gpu_allocator_adaptor]") {
  fixture f;
  void* p = f.adaptor.allocate(1000, 0, 0);
  void* q = f.adaptor.allocate(3000, 64, resizable);
  REQUIRE(p != nullptr);
  REQUIRE(q != nullptr);
  CHECK(p != q);
  CHECK(f.adaptor.live_allocations() == 2);
  CHECK(f.adaptor.allocated_bytes() == 4000);
  CHECK(f.adaptor.allocation_size(p) == 1000);
  CHECK(f.adaptor.allocation_size(q) == 3000);

  // Pointers it did not return: inside an allocation, on the stack, from the upstream directly.
  int on_stack = 0;
  CHECK_FALSE(f.adaptor.deallocate(static_cast<char*>(p) + 1));
  CHECK_FALSE(f.adaptor.deallocate(&on_stack));
  void* direct = f.verifying.allocate_sync(64);
  CHECK_FALSE(f.adaptor.deallocate(direct));
  f.verifying.deallocate_sync(direct, 64);
  CHECK(f.adaptor.live_allocations() == 2);

  CHECK(f.adaptor.deallocate(p));
  CHECK_FALSE(f.adaptor.deallocate(p));
  CHECK(f.adaptor.allocation_size(p) == 0);
  CHECK(f.adaptor.allocated_bytes() == 3000);
  CHECK(f.adaptor.deallocate(q));
  CHECK_FALSE(f.adaptor.deallocate(q));

  // nullptr: nothing to release, reported as success, as cudaFree(nullptr) is.
  CHECK(f.adaptor.deallocate(nullptr));
  f.check_balanced();
}

TEST_CASE("gpu_allocator_adaptor: free releases like deallocate", "[gpu_allocator_adaptor]") {
  fixture f;
  void* p = f.adaptor.allocate(512, 0, 0);
  REQUIRE(p != nullptr);
  f.adaptor.free(p);
  CHECK(f.adaptor.live_allocations() == 0);
  CHECK_FALSE(f.adaptor.deallocate(p));
  f.adaptor.free(p);  // already freed: nothing happens
  f.adaptor.free(nullptr);
  int on_stack = 0;
  f.adaptor.free(&on_stack);
  f.check_balanced();
}

TEST_CASE("gpu_allocator_adaptor: copies share the bookkeeping", "[gpu_allocator_adaptor]") {
  fixture f;
  gpu_allocator_adaptor copy{f.adaptor};
  CHECK(copy == f.adaptor);
  CHECK_FALSE(copy != f.adaptor);
  gpu_allocator_adaptor other{f.verifying};
  CHECK(other != f.adaptor);

  void* p = f.adaptor.allocate(100, 0, 0);
  REQUIRE(p != nullptr);
  CHECK(copy.allocation_size(p) == 100);
  CHECK(other.allocation_size(p) == 0);
  CHECK_FALSE(other.deallocate(p));  // another adaptor's: unknown there
  CHECK(copy.deallocate(p));
  CHECK_FALSE(f.adaptor.deallocate(p));

  gpu_allocator_adaptor moved{std::move(copy)};  // a move copies: both stay usable
  CHECK(moved == f.adaptor);
  void* q = copy.allocate(10, 0, 0);  // NOLINT(bugprone-use-after-move): documented as usable
  REQUIRE(q != nullptr);
  CHECK(moved.deallocate(q));
  other = f.adaptor;
  CHECK(other == f.adaptor);

  // The upstream reference reaches the same upstream.
  rmm::device_async_resource_ref upstream = f.adaptor.get_upstream_resource();
  void* r                                 = upstream.allocate_sync(64, 256);
  CHECK(f.verifying.live_allocations() == 1);
  upstream.deallocate_sync(r, 64, 256);
  f.check_balanced();
}

TEST_CASE("gpu_allocator_adaptor: reallocate refusals leave the allocation untouched",
          "[gpu_allocator_adaptor]") {
  fixture f;
  void* fixed = f.adaptor.allocate(1000, 0, 0);
  void* grows = f.adaptor.allocate(1000, 0, resizable);
  REQUIRE(fixed != nullptr);
  REQUIRE(grows != nullptr);
  fill(fixed, 1000, 1);
  fill(grows, 1000, 2);

  CHECK(f.adaptor.reallocate(fixed, 0, 2000) == nullptr);  // not resizable
  CHECK(f.adaptor.reallocate(fixed, 0, 500) == nullptr);
  CHECK(f.adaptor.reallocate(fixed, 0, 1000) == nullptr);
  CHECK(f.adaptor.allocation_size(fixed) == 1000);
  CHECK(mismatches(fixed, 1000, 1) == 0);

  CHECK(f.adaptor.reallocate(grows, 0, 0) == nullptr);     // size 0: free it instead
  CHECK(f.adaptor.reallocate(grows, 3, 2000) == nullptr);  // alignment not accepted
  CHECK(f.adaptor.reallocate(grows, 512, 2000) == nullptr);
  CHECK(f.adaptor.reallocate(nullptr, 0, 2000) == nullptr);
  CHECK(f.adaptor.reallocate(static_cast<char*>(grows) + 256, 0, 2000) == nullptr);  // unknown
  CHECK(f.adaptor.allocation_size(grows) == 1000);
  CHECK(mismatches(grows, 1000, 2) == 0);

  // The same size: nothing to do, the same address.
  CHECK(f.adaptor.reallocate(grows, 0, 1000) == grows);
  CHECK(f.adaptor.reallocate(grows, 256, 1000) == grows);
  CHECK(f.counting.counts().allocations.load() == 2);

  CHECK(f.adaptor.deallocate(fixed));
  CHECK(f.adaptor.deallocate(grows));
  CHECK(f.adaptor.reallocate(grows, 0, 2000) == nullptr);  // freed
  f.check_balanced();
}

TEST_CASE("gpu_allocator_adaptor: reallocate moves, keeping min(old, new) bytes",
          "[gpu_allocator_adaptor]") {
  fixture f;
  void* p = f.adaptor.allocate(1000, 0, resizable);
  REQUIRE(p != nullptr);
  fill(p, 1000, 3);
  void* q = f.adaptor.reallocate(p, 0, 5000);  // a host-backed upstream cannot grow in place
  if (q == nullptr) {
    // The copy needs CUDA, which this machine lacks: the original is untouched and still known.
    WARN("reallocate could not copy (no CUDA device): checked that the original is untouched");
    CHECK(f.adaptor.allocation_size(p) == 1000);
    CHECK(f.adaptor.allocated_bytes() == 1000);
    CHECK(mismatches(p, 1000, 3) == 0);
    CHECK(f.counting.counts().bytes_outstanding.load() == 1000);  // the new block was given back
    CHECK(f.adaptor.deallocate(p));
  } else {
    CHECK(q != p);
    CHECK(mismatches(q, 1000, 3) == 0);
    CHECK(f.adaptor.allocation_size(q) == 5000);
    CHECK(f.adaptor.allocation_size(p) == 0);
    CHECK_FALSE(f.adaptor.deallocate(p));  // the old block is gone
    CHECK(f.adaptor.allocated_bytes() == 5000);
    fill(q, 5000, 4);
    void* r = f.adaptor.reallocate(q, 0, 300);  // shrinking moves too
    REQUIRE(r != nullptr);
    CHECK(r != q);
    CHECK(mismatches(r, 300, 4) == 0);
    CHECK(f.adaptor.allocated_bytes() == 300);
    void* s = f.adaptor.reallocate(r, 0, 300);
    CHECK(s == r);
    CHECK(f.adaptor.deallocate(r));
  }
  f.check_balanced();
}

TEST_CASE("gpu_allocator_adaptor: upstream out of memory is nullptr", "[gpu_allocator_adaptor]") {
  limited_resource limited{10000};
  gpu_allocator_adaptor adaptor{limited};
  CHECK(adaptor.allocate(20000, 0, 0) == nullptr);
  CHECK(adaptor.allocate(std::numeric_limits<std::uint64_t>::max(), 0, 0) == nullptr);
  void* p = adaptor.allocate(6000, 0, resizable);
  REQUIRE(p != nullptr);
  fill(p, 6000, 5);
  CHECK(adaptor.allocate(6000, 0, 0) == nullptr);  // 12000 > 10000

  // The new block cannot be had: nullptr, and the original stays valid and known.
  CHECK(adaptor.reallocate(p, 0, 8000) == nullptr);
  CHECK(adaptor.reallocate(p, 0, std::numeric_limits<std::uint64_t>::max()) == nullptr);
  CHECK(adaptor.allocation_size(p) == 6000);
  CHECK(mismatches(p, 6000, 5) == 0);
  CHECK(limited.outstanding() == 6000);
  CHECK(adaptor.deallocate(p));
  CHECK(limited.outstanding() == 0);
  CHECK(adaptor.live_allocations() == 0);
}

TEST_CASE("gpu_allocator_adaptor: any exception of the upstream is nullptr",
          "[gpu_allocator_adaptor]") {
  gpu_allocator_adaptor adaptor{throwing_resource{}};
  CHECK(adaptor.allocate(100, 0, 0) == nullptr);
  CHECK(adaptor.allocate(100, 256, resizable) == nullptr);
  CHECK(adaptor.live_allocations() == 0);
}

TEST_CASE("gpu_allocator_adaptor: a misaligned upstream pointer is refused and given back",
          "[gpu_allocator_adaptor]") {
  misaligned_resource misaligned;
  gpu_allocator_adaptor adaptor{misaligned};
  CHECK(adaptor.allocate(100, 0, 0) == nullptr);
  CHECK(adaptor.allocate(100, 16, 0) == nullptr);
  CHECK(misaligned.outstanding() == 0);
  CHECK(adaptor.live_allocations() == 0);
}

TEST_CASE("gpu_allocator_adaptor: through an IGpuAllocator base pointer",
          "[gpu_allocator_adaptor]") {
  fixture f;
  {
    std::unique_ptr<IGpuAllocator> allocator = std::make_unique<forwarding_allocator>(f.adaptor);
    CHECK(allocator->allocate(0, 0, 0) == nullptr);
    CHECK(allocator->allocate(10, 3, 0) == nullptr);
    void* p = allocator->allocate(4096, 256, 0);
    REQUIRE(p != nullptr);
    CHECK(f.adaptor.allocation_size(p) == 4096);
    CHECK(allocator->reallocate(p, 256, 8192) == nullptr);  // not made resizable
    CHECK(allocator->deallocate(p));
    CHECK_FALSE(allocator->deallocate(p));
    CHECK(allocator->deallocate(nullptr));

    void* q = allocator->allocate(100, 0, resizable);  // kRESIZABLE
    REQUIRE(q != nullptr);
    CHECK(allocator->reallocate(q, 0, 100) == q);
    allocator->free(q);
    CHECK(f.adaptor.live_allocations() == 0);
    allocator->free(nullptr);
  }
  f.check_balanced();
}

TEST_CASE("gpu_allocator_adaptor: many threads allocate, reallocate and deallocate at once",
          "[gpu_allocator_adaptor][threads]") {
  fixture f;
  constexpr int threads    = 8;
  constexpr int iterations = 500;
  std::atomic<int> errors{0};
  std::atomic<int> moves{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 rng{static_cast<std::mt19937::result_type>(t + 1)};
      std::uniform_int_distribution<std::size_t> size{1, 4096};
      std::uint64_t const alignments[] = {0, 1, 64, 256};
      struct held {
        void* ptr;
        std::size_t bytes;
        unsigned char seed;
      };
      std::vector<held> live;
      auto const release = [&](held const& h) {
        // Contents intact: no other thread was given overlapping memory.
        if (mismatches(h.ptr, h.bytes, h.seed) != 0) {
          ++errors;
        }
        // Not a pointer it returned (every one is 256-byte aligned): false, nothing freed. A freed
        // pointer is not tried again here: another thread may have been given it meanwhile.
        if (f.adaptor.deallocate(static_cast<char*>(h.ptr) + 1)) {
          ++errors;
        }
        if (!f.adaptor.deallocate(h.ptr)) {
          ++errors;
        }
      };
      for (int i = 0; i < iterations; ++i) {
        auto const seed  = static_cast<unsigned char>(t * 31 + i);
        std::size_t n    = size(rng);
        bool const grows = (rng() & 1U) != 0;
        void* p          = f.adaptor.allocate(n, alignments[rng() % 4], grows ? resizable : 0U);
        if (p == nullptr || !rmm::is_pointer_aligned(p, 256)) {
          ++errors;
          continue;
        }
        fill(p, n, seed);
        std::size_t const m = size(rng);
        void* q             = f.adaptor.reallocate(p, 0, m);
        if (!grows) {
          if (q != nullptr) {
            ++errors;
          }
        } else if (q != nullptr) {
          if (q != p) {
            ++moves;
          }
          std::size_t const kept = std::min(n, m);
          if (mismatches(q, kept, seed) != 0) {
            ++errors;
          }
          p = q;
          n = m;
          fill(p, n, seed);
        }
        live.push_back({p, n, seed});
        if (live.size() > 4) {  // keep a few alive while the others run
          std::size_t const k = rng() % live.size();
          release(live[k]);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
        }
      }
      for (held const& h : live) {
        release(h);
      }
    });
  }
  for (auto& w : workers) {
    w.join();
  }
  CHECK(errors.load() == 0);
  INFO("moves: " << moves.load());
  f.check_balanced();
}

TEST_CASE("gpu_allocator_adaptor: racing deallocations of the same pointers, one true each",
          "[gpu_allocator_adaptor][threads]") {
  fixture f;
  constexpr std::size_t count = 1000;
  constexpr int threads       = 8;
  std::vector<void*> ptrs;
  for (std::size_t i = 0; i < count; ++i) {
    ptrs.push_back(f.adaptor.allocate(64 + i, 0, (i % 2) != 0 ? resizable : 0U));
    REQUIRE(ptrs.back() != nullptr);
  }
  std::vector<std::atomic<int>> released(count);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      gpu_allocator_adaptor mine{f.adaptor};  // a copy per thread: the same bookkeeping
      for (std::size_t j = 0; j < count; ++j) {
        std::size_t const i = (t % 2) == 0 ? j : count - 1 - j;
        if ((t % 4) == 3) {
          // Reallocating a pointer that is being freed: nullptr, or the same pointer (same size).
          void* r = mine.reallocate(ptrs[i], 0, 64 + i);
          if (r != nullptr && r != ptrs[i]) {
            released[i] += 100;
          }
        }
        if (mine.deallocate(ptrs[i])) {
          ++released[i];
        }
      }
    });
  }
  for (auto& w : workers) {
    w.join();
  }
  std::size_t wrong = 0;
  for (auto const& r : released) {
    wrong += r.load() == 1 ? 0U : 1U;
  }
  CHECK(wrong == 0);
  f.check_balanced();
}
