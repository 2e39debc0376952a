// Allocator semantics over host-backed test resources; no GPU needed.
#include "../utilities/test_resources.hpp"

#include <rmm/mr/polymorphic_allocator.hpp>

#include <catch2/catch.hpp>

#include <limits>
#include <numeric>
#include <vector>

using rmm::mr::polymorphic_allocator;
using rmm::mr::stream_allocator_adaptor;
using rmm::test::counting_resource;
using rmm::test::host_backed_resource;
using rmm::test::verifying_resource;

TEST_CASE("polymorphic_allocator allocates through its resource", "[polymorphic_allocator]") {
  counting_resource counter{host_backed_resource{}};
  polymorphic_allocator<double> alloc{counter};
  double* ptr = alloc.allocate(100, rmm::cuda_stream_default);
  REQUIRE(ptr != nullptr);
  CHECK(rmm::is_pointer_aligned(ptr, 256));
  CHECK(counter.counts().allocations == 1);
  CHECK(counter.counts().bytes_outstanding == 100 * sizeof(double));
  alloc.deallocate(ptr, 100, rmm::cuda_stream_default);
  CHECK(counter.counts().deallocations == 1);
  CHECK(counter.counts().bytes_outstanding == 0);
}

TEST_CASE("polymorphic_allocator equality follows the resource", "[polymorphic_allocator]") {
  host_backed_resource a;
  host_backed_resource b;
  polymorphic_allocator<int> pa{a};
  polymorphic_allocator<int> pa2{a};
  polymorphic_allocator<int> pb{b};
  polymorphic_allocator<float> rebound{pa};
  CHECK(pa == pa2);
  CHECK(pa == rebound);
  CHECK(pa != pb);
  CHECK_FALSE(pa == pb);
  // The rebound copy keeps working after the original is gone.
  auto survivor = [&] {
    polymorphic_allocator<int> temporary{a};
    return polymorphic_allocator<char>{temporary};
  }();
  char* ptr = survivor.allocate(10, rmm::cuda_stream_default);
  survivor.deallocate(ptr, 10, rmm::cuda_stream_default);
}

TEST_CASE("polymorphic_allocator passes matching sizes and alignments", "[polymorphic_allocator]") {
  verifying_resource verifier{host_backed_resource{}};
  {
    polymorphic_allocator<int> alloc{verifier};
    auto adapted = stream_allocator_adaptor{alloc, rmm::cuda_stream_default};
    std::vector<int, decltype(adapted)> values(1000, 0, adapted);
    std::iota(values.begin(), values.end(), 0);
    values.resize(5000);
    values.shrink_to_fit();
    CHECK(std::accumulate(values.begin(), values.begin() + 1000, 0L) == 499500L);
  }
  CHECK(verifier.failures().empty());
  CHECK(verifier.live_allocations() == 0);
}

TEST_CASE("polymorphic_allocator reports size overflow", "[polymorphic_allocator]") {
  polymorphic_allocator<std::uint64_t> alloc{host_backed_resource{}};
  auto const too_many = std::numeric_limits<std::size_t>::max() / 4;
  CHECK_THROWS_AS(alloc.allocate(too_many, rmm::cuda_stream_default), rmm::bad_alloc);
  CHECK_THROWS_WITH(alloc.allocate(too_many, rmm::cuda_stream_default),
                    Catch::Matchers::Contains(std::to_string(too_many)));
}

TEST_CASE("stream_allocator_adaptor wraps allocator and stream", "[stream_allocator_adaptor]") {
  counting_resource counter{host_backed_resource{}};
  polymorphic_allocator<int> alloc{counter};
  auto const stream = rmm::cuda_stream_view{reinterpret_cast<cudaStream_t>(0x77)};
  stream_allocator_adaptor<polymorphic_allocator<int>> adapted{alloc, stream};
  CHECK(adapted.stream() == stream);
  CHECK(adapted.underlying_allocator() == alloc);

  using rebound_t = stream_allocator_adaptor<polymorphic_allocator<int>>::rebind<double>::other;
  STATIC_REQUIRE(
      std::is_same_v<rebound_t, stream_allocator_adaptor<polymorphic_allocator<double>>>);
  STATIC_REQUIRE(
      std::is_same_v<std::allocator_traits<decltype(adapted)>::rebind_alloc<double>, rebound_t>);
  STATIC_REQUIRE_FALSE(std::is_default_constructible_v<decltype(adapted)>);
  rebound_t rebound{adapted};
  CHECK(rebound.stream() == stream);
  CHECK(rebound == adapted);

  int* ptr = std::allocator_traits<decltype(adapted)>::allocate(adapted, 10);
  CHECK(counter.counts().allocations == 1);
  std::allocator_traits<decltype(adapted)>::deallocate(adapted, ptr, 10);
  CHECK(counter.counts().deallocations == 1);

  stream_allocator_adaptor<polymorphic_allocator<int>> other_resource{
      polymorphic_allocator<int>{host_backed_resource{}}, stream};
  CHECK(adapted != other_resource);
  auto made = rmm::mr::make_stream_allocator_adaptor(alloc, stream);
  CHECK(made == adapted);
}
