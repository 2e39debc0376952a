// The test doubles must themselves catch what they are for.
#include "test_resources.hpp"

#include <catch2/catch.hpp>

using namespace rmm::test;

namespace {
cuda::stream_ref const null_stream{cudaStream_t{}};
}

TEST_CASE("verifying_resource reports mismatched and unknown frees", "[test_resources]") {
  verifying_resource verifier{host_backed_resource{}};
  void* ptr = verifier.allocate(null_stream, 1024, 256);
  verifier.deallocate(null_stream, ptr, 512, 256);  // wrong size: reported, not forwarded
  REQUIRE(verifier.failures().size() == 1);
  CHECK_THAT(verifier.failures()[0], Catch::Matchers::Contains("allocated 1024 bytes"));
  verifier.deallocate(null_stream, ptr, 1024, 512);  // wrong alignment
  CHECK(verifier.failures().size() == 2);
  int local = 0;
  verifier.deallocate(null_stream, &local, 4, 256);  // never allocated
  CHECK(verifier.failures().size() == 3);
  CHECK(verifier.live_allocations() == 1);
  verifier.deallocate(null_stream, ptr, 1024, 256);
  CHECK(verifier.live_allocations() == 0);
  CHECK(verifier.failures().size() == 3);
}

TEST_CASE("counting_resource copies share counters", "[test_resources]") {
  counting_resource a{host_backed_resource{}};
  counting_resource b = a;
  void* ptr           = b.allocate_sync(300);
  CHECK(a.counts().allocations == 1);
  CHECK(a.counts().bytes_outstanding == 300);
  a.deallocate_sync(ptr, 300);
  CHECK(b.counts().deallocations == 1);
  CHECK(a == b);
  CHECK(a != counting_resource{host_backed_resource{}});
}

TEST_CASE("delayed_resource performs frees late", "[test_resources]") {
  counting_resource counter{host_backed_resource{}};
  delayed_resource delayed{counter, 3};
  void* p = delayed.allocate(null_stream, 256, 256);
  delayed.deallocate(null_stream, p, 256, 256);
  CHECK(delayed.pending() == 1);
  CHECK(counter.counts().deallocations == 0);
  void* q = delayed.allocate(null_stream, 256, 256);
  void* r = delayed.allocate(null_stream, 256, 256);
  CHECK(counter.counts().deallocations == 1);  // due after three further operations
  CHECK(delayed.pending() == 0);
  delayed.deallocate(null_stream, q, 256, 256);
  delayed.deallocate(null_stream, r, 256, 256);
  delayed.flush();
  CHECK(counter.counts().deallocations == 3);
  CHECK(counter.counts().bytes_outstanding == 0);
}
