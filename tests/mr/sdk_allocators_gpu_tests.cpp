// The sensor-streaming SDK's allocators as resources of this library: unbounded_memory_resource,
// block_memory_pool_resource, device_host_pool_pair and make_stream_ordered_allocator().
// Construction checks, data written on the device (and on the host for host-accessible storage)
// and read back, reuse, capacity and block-size refusals, limits.
#include "../utilities/device_kernels.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/block_memory_pool_resource.hpp>
#include <rmm/mr/device_host_pool_pair.hpp>
#include <rmm/mr/storage_type.hpp>
#include <rmm/mr/stream_ordered_allocator.hpp>
#include <rmm/mr/system_memory_resource.hpp>
#include <rmm/mr/unbounded_memory_resource.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::mr::block_memory_pool_resource;
using rmm::mr::device_host_pool_pair;
using rmm::mr::storage_type;
using rmm::mr::unbounded_memory_resource;
constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

bool system_memory_supported() {
  return rmm::mr::detail::is_system_memory_supported(rmm::get_current_cuda_device());
}

// Writes the pattern of seed on the host.
void fill_pattern_host(void* ptr, std::size_t bytes, std::uint32_t seed) {
  auto* bytes_ptr = static_cast<std::uint8_t*>(ptr);
  for (std::size_t i = 0; i < bytes; ++i) {
    bytes_ptr[i] = rmm::test::pattern_byte(seed, i);
  }
}

// Host-accessible memory: written on the host and checked on the device, then written on the
// device and checked on the host.
void check_host_and_device(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream) {
  fill_pattern_host(ptr, bytes, 11);
  CHECK(rmm::test::count_pattern_mismatches(ptr, bytes, 11, stream.value()) == 0);
  rmm::test::fill_pattern(ptr, bytes, 12, stream.value());
  stream.synchronize();
  CHECK(rmm::test::count_pattern_mismatches_host(ptr, bytes, 12) == 0);
}

void check_device(void* ptr, std::size_t bytes, std::uint32_t seed, rmm::cuda_stream_view stream) {
  rmm::test::fill_pattern(ptr, bytes, seed, stream.value());
  CHECK(rmm::test::count_pattern_mismatches(ptr, bytes, seed, stream.value()) == 0);
}

}  // namespace

// --- unbounded_memory_resource -------------------------------------------------------------------

TEST_CASE("unbounded: device storage", "[gpu][sdk][unbounded]") {
  unbounded_memory_resource mr{storage_type::device};
  CHECK(mr.storage() == storage_type::device);
  rmm::cuda_stream stream;
  // No upper bound other than the device: several large allocations at once.
  std::vector<void*> blocks;
  for (std::uint32_t i = 0; i < 4; ++i) {
    void* p = mr.allocate(stream, 64 * MiB, 256);
    REQUIRE(p != nullptr);
    CHECK(rmm::is_pointer_aligned(p, 256));
    check_device(p, 64 * MiB, i, stream);
    blocks.push_back(p);
  }
  for (void* p : blocks) {
    mr.deallocate(stream, p, 64 * MiB, 256);
  }
  CHECK(mr.allocate(stream, 0, 256) == nullptr);
  mr.deallocate(stream, nullptr, 0, 256);
  CHECK_THROWS_WITH(mr.allocate(stream, 100, 512),
                    Contains("unbounded_memory_resource: alignment 512 exceeds"));
}

TEST_CASE("unbounded: pinned host storage is host accessible", "[gpu][sdk][unbounded]") {
  unbounded_memory_resource mr{storage_type::pinned_host};
  rmm::cuda_stream stream;
  void* p = mr.allocate(stream, MiB + 3, 256);
  cudaPointerAttributes attributes{};
  REQUIRE(cudaPointerGetAttributes(&attributes, p) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeHost);
  check_host_and_device(p, MiB + 3, stream);
  mr.deallocate(stream, p, MiB + 3, 256);
  void* synced = mr.allocate_sync(4096, 256);
  fill_pattern_host(synced, 4096, 3);
  CHECK(rmm::test::count_pattern_mismatches_host(synced, 4096, 3) == 0);
  mr.deallocate_sync(synced, 4096, 256);
}

TEST_CASE("unbounded: system storage", "[gpu][sdk][unbounded]") {
  if (!system_memory_supported()) {
    CHECK_THROWS_AS(unbounded_memory_resource{storage_type::system}, rmm::logic_error);
    CHECK_THROWS_WITH(unbounded_memory_resource{storage_type::system}, Contains("HMM or ATS"));
    WARN(
        "SKIPPED system storage of unbounded_memory_resource: device reports no pageable "
        "memory access (no HMM or ATS); only the refusal was checked");
    return;
  }
  unbounded_memory_resource mr{storage_type::system};
  rmm::cuda_stream stream;
  void* p = mr.allocate(stream, MiB, 4096);  // system storage honours page alignment
  CHECK(rmm::is_pointer_aligned(p, 4096));
  check_host_and_device(p, MiB, stream);
  mr.deallocate(stream, p, MiB, 4096);
}

TEST_CASE("unbounded: equality by storage, invalid storage", "[gpu][sdk][unbounded]") {
  unbounded_memory_resource device_a{storage_type::device};
  unbounded_memory_resource device_b{storage_type::device};
  unbounded_memory_resource pinned{storage_type::pinned_host};
  CHECK(device_a == device_b);
  CHECK(device_a != pinned);
  auto copy = pinned;
  CHECK(copy == pinned);
  CHECK_THROWS_AS(unbounded_memory_resource{static_cast<storage_type>(5)}, rmm::logic_error);
  CHECK(unbounded_memory_resource{rmm::mr::storage_type_from_int(1)}.storage() ==
        storage_type::device);
  CHECK_THROWS_WITH(unbounded_memory_resource{rmm::mr::storage_type_from_int(3)},
                    Contains("invalid storage_type 3"));
}

TEST_CASE("unbounded: device out of memory is typed",
          "[gpu][sdk][unbounded][expected_api_errors]") {
  unbounded_memory_resource mr{storage_type::device};
  auto const bytes = rmm::available_device_memory().second * 2;
  CHECK_THROWS_AS(mr.allocate_sync(bytes, 256), rmm::out_of_memory);
  void* p = mr.allocate_sync(MiB, 256);  // the failure left nothing behind
  mr.deallocate_sync(p, MiB, 256);
}

// --- block_memory_pool_resource ------------------------------------------------------------------

TEST_CASE("block pool: bad arguments", "[gpu][sdk][block_pool]") {
  CHECK_THROWS_AS(block_memory_pool_resource(storage_type::device, 0, 4), rmm::logic_error);
  CHECK_THROWS_WITH(block_memory_pool_resource(storage_type::device, 0, 4),
                    Contains("block_memory_pool_resource: block_size must not be 0"));
  CHECK_THROWS_AS(block_memory_pool_resource(storage_type::device, 4096, 0), rmm::logic_error);
  CHECK_THROWS_WITH(block_memory_pool_resource(storage_type::device, 4096, 0),
                    Contains("block_memory_pool_resource: num_blocks must not be 0"));
  int const count = rmm::get_num_cuda_devices();
  CHECK_THROWS_AS(block_memory_pool_resource(storage_type::device, 4096, 4, count),
                  rmm::out_of_range);
  CHECK_THROWS_WITH(block_memory_pool_resource(storage_type::device, 4096, 4, -1),
                    Contains("dev_id -1 is not in [0, " + std::to_string(count) + ")"));
  CHECK_THROWS_AS(block_memory_pool_resource(static_cast<storage_type>(9), 4096, 4),
                  rmm::logic_error);
}

TEST_CASE("block pool: whole blocks, fixed capacity, both refusals", "[gpu][sdk][block_pool]") {
  block_memory_pool_resource mr{
      storage_type::device, 1000, 4, rmm::get_current_cuda_device().value()};
  CHECK(mr.storage() == storage_type::device);
  CHECK(mr.block_size() == 1000);
  CHECK(mr.num_blocks() == 4);
  CHECK(mr.free_blocks() == 4);
  CHECK(mr.device() == rmm::get_current_cuda_device());
  rmm::cuda_stream stream;
  std::set<void*> blocks;
  for (std::uint32_t i = 0; i < 4; ++i) {
    std::size_t const bytes = i == 0 ? 1 : 1000;
    void* p                 = mr.allocate(stream, bytes, 256);
    CHECK(rmm::is_pointer_aligned(p, 256));
    check_device(p, 1000, i, stream);  // a whole block is usable
    CHECK(blocks.insert(p).second);
  }
  CHECK(mr.free_blocks() == 0);
  // Distinct blocks one stride (1000 rounded up to 1024) apart: one allocation.
  auto const lowest  = reinterpret_cast<std::uintptr_t>(*blocks.begin());
  auto const highest = reinterpret_cast<std::uintptr_t>(*blocks.rbegin());
  CHECK(highest - lowest == 3 * 1024);

  CHECK_THROWS_AS(mr.allocate(stream, 1, 256), rmm::out_of_memory);
  CHECK_THROWS_WITH(mr.allocate(stream, 1, 256),
                    Contains("out_of_memory") && Contains("cannot allocate 1 bytes") &&
                        Contains("all 4 blocks of 1000 bytes are in use"));
  CHECK_THROWS_AS(mr.allocate(stream, 1001, 256), rmm::out_of_memory);
  CHECK_THROWS_WITH(mr.allocate(stream, 1001, 256),
                    Contains("1001 bytes") && Contains("exceeds the block size of 1000 bytes"));
  CHECK(mr.allocate(stream, 0, 256) == nullptr);

  // Freeing one makes exactly that block available again, on the same stream.
  void* one = *blocks.begin();
  mr.deallocate(stream, one, 1000, 256);
  CHECK(mr.free_blocks() == 1);
  void* again = mr.allocate(stream, 10, 256);
  CHECK(again == one);
  CHECK(mr.free_blocks() == 0);
  for (void* p : blocks) {
    mr.deallocate(stream, p, 1000, 256);
  }
  CHECK(mr.free_blocks() == 4);
  // A request above the block size is refused even when blocks are free.
  CHECK_THROWS_AS(mr.allocate(stream, 1001, 256), rmm::out_of_memory);
  CHECK(mr.free_blocks() == 4);
}

TEST_CASE("block pool: a block freed on one stream is reused on another after its work",
          "[gpu][sdk][block_pool]") {
  block_memory_pool_resource mr{storage_type::device, MiB, 2};
  rmm::cuda_stream s1;
  rmm::cuda_stream s2;
  void* a      = mr.allocate(s1, MiB, 256);
  void* theirs = mr.allocate(s2, MiB, 256);  // both streams known: frees record events
  rmm::test::fill_pattern_after_delay(a, MiB, 1, 200'000'000, s1.value());
  mr.deallocate(s1, a, MiB, 256);
  mr.deallocate(s2, theirs, MiB, 256);
  CHECK(mr.allocate(s2, MiB, 256) == theirs);  // its own block first
  void* b = mr.allocate(s2, MiB, 256);         // then s1's, ordered after s1's pending kernel
  CHECK(b == a);
  rmm::test::fill_pattern(b, MiB, 2, s2.value());
  CHECK(rmm::test::count_pattern_mismatches(b, MiB, 2, s2.value()) == 0);
  mr.deallocate(s2, b, MiB, 256);
  mr.deallocate(s2, theirs, MiB, 256);
  CHECK(mr.free_blocks() == 2);
}

TEST_CASE("block pool: exhaustion takes blocks freed on other streams before giving up",
          "[gpu][sdk][block_pool]") {
  block_memory_pool_resource mr{storage_type::device, 64 * KiB, 2};
  rmm::cuda_stream s1;
  void* a = mr.allocate(s1, KiB, 256);
  void* b = mr.allocate(s1, KiB, 256);
  mr.deallocate(s1, a, KiB, 256);  // freed on s1 while s1 is the only stream: no event
  mr.deallocate(s1, b, KiB, 256);
  rmm::cuda_stream s2;
  void* c = mr.allocate(s2, KiB, 256);  // s1's blocks, after one device synchronisation
  void* d = mr.allocate(s2, KiB, 256);
  CHECK(std::set<void*>{a, b} == std::set<void*>{c, d});
  check_device(c, 64 * KiB, 5, s2);
  mr.deallocate(s2, c, KiB, 256);
  mr.deallocate(s2, d, KiB, 256);
}

TEST_CASE("block pool: copies share the pool", "[gpu][sdk][block_pool]") {
  block_memory_pool_resource mr{storage_type::device, 4096, 3};
  block_memory_pool_resource other{storage_type::device, 4096, 3};
  auto copy = mr;
  CHECK(copy == mr);
  CHECK(other != mr);
  void* p = copy.allocate_sync(100, 256);
  CHECK(mr.free_blocks() == 2);
  mr.deallocate_sync(p, 100, 256);
  CHECK(copy.free_blocks() == 3);
  rmm::device_async_resource_ref ref{mr};
  void* q = ref.allocate(rmm::cuda_stream_default, 4096, 256);
  ref.deallocate(rmm::cuda_stream_default, q, 4096, 256);
}

TEST_CASE("block pool: pinned host storage is host accessible", "[gpu][sdk][block_pool]") {
  block_memory_pool_resource mr{storage_type::pinned_host, 64 * KiB, 4};
  CHECK(mr.storage() == storage_type::pinned_host);
  rmm::cuda_stream stream;
  void* p = mr.allocate(stream, 64 * KiB, 256);
  cudaPointerAttributes attributes{};
  REQUIRE(cudaPointerGetAttributes(&attributes, p) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeHost);
  check_host_and_device(p, 64 * KiB, stream);
  mr.deallocate(stream, p, 64 * KiB, 256);
}

TEST_CASE("block pool: system storage", "[gpu][sdk][block_pool]") {
  if (!system_memory_supported()) {
    CHECK_THROWS_AS(block_memory_pool_resource(storage_type::system, 4096, 4), rmm::logic_error);
    CHECK_THROWS_WITH(block_memory_pool_resource(storage_type::system, 4096, 4),
                      Contains("HMM or ATS"));
    WARN(
        "SKIPPED system storage of block_memory_pool_resource: device reports no pageable "
        "memory access (no HMM or ATS); only the refusal was checked");
    return;
  }
  block_memory_pool_resource mr{storage_type::system, 64 * KiB, 4};
  rmm::cuda_stream stream;
  void* p = mr.allocate(stream, 64 * KiB, 256);
  check_host_and_device(p, 64 * KiB, stream);
  mr.deallocate(stream, p, 64 * KiB, 256);
}

// --- device_host_pool_pair -----------------------------------------------------------------------

TEST_CASE("pool pair: defaults", "[gpu][sdk][pool_pair]") {
  device_host_pool_pair pair;
  constexpr std::size_t initial = rmm::mr::sdk_default_initial_pool_size;
  CHECK(pair.device() == rmm::get_current_cuda_device());
  CHECK(pair.sizes().device.initial == initial);
  CHECK(pair.sizes().host.maximum == 2 * initial);
  auto device_pool = pair.device_memory_resource();
  auto host_pool   = pair.host_memory_resource();
  CHECK(device_pool.pool_size() == initial);
  CHECK(device_pool.maximum_pool_size() == 2 * initial);
  CHECK(host_pool.pool_size() == initial);
  CHECK(host_pool.maximum_pool_size() == 2 * initial);
  CHECK(device_pool != host_pool);
  auto copy = pair;
  CHECK(copy == pair);
  CHECK(copy.device_memory_resource() == device_pool);
  CHECK(device_host_pool_pair{} != pair);
}

TEST_CASE("pool pair: allocate by storage type", "[gpu][sdk][pool_pair]") {
  rmm::mr::device_host_pool_config config;
  config.device_memory_initial_size = "4MB";
  config.host_memory_initial_size   = "1000 KB";
  config.dev_id                     = rmm::get_current_cuda_device().value();
  device_host_pool_pair pair{config};
  CHECK(pair.sizes().host.initial == 1000 * KiB);
  rmm::cuda_stream stream;
  void* d = pair.allocate(stream, MiB, storage_type::device);
  cudaPointerAttributes attributes{};
  REQUIRE(cudaPointerGetAttributes(&attributes, d) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeDevice);
  check_device(d, MiB, 1, stream);
  void* h = pair.allocate(stream, 512 * KiB, storage_type::pinned_host);
  REQUIRE(cudaPointerGetAttributes(&attributes, h) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeHost);
  check_host_and_device(h, 512 * KiB, stream);
  CHECK_THROWS_AS(pair.allocate(stream, 10, storage_type::system), rmm::logic_error);
  CHECK_THROWS_WITH(pair.allocate(stream, 10, storage_type::system),
                    Contains("storage_type system is not served"));
  pair.deallocate(stream, d, MiB, storage_type::device);
  pair.deallocate(stream, h, 512 * KiB, storage_type::pinned_host);
  CHECK(pair.device_memory_resource().free_bytes() == 4 * MiB);
  CHECK(pair.host_memory_resource().free_bytes() == 1000 * KiB);
}

TEST_CASE("pool pair: a pool never exceeds its maximum",
          "[gpu][sdk][pool_pair][expected_api_errors]") {
  rmm::mr::device_host_pool_config config;
  config.device_memory_initial_size = "1MB";
  config.device_memory_max_size     = "2MB";
  config.host_memory_initial_size   = "1MB";
  config.host_memory_max_size       = "1MB";
  device_host_pool_pair pair{config};
  rmm::cuda_stream stream;
  void* a = pair.allocate(stream, MiB, storage_type::device);  // the initial pool
  void* b = pair.allocate(stream, MiB, storage_type::device);  // grows to the maximum
  CHECK(pair.device_memory_resource().pool_size() == 2 * MiB);
  CHECK_THROWS_AS(pair.allocate(stream, 256, storage_type::device), rmm::out_of_memory);
  CHECK_THROWS_WITH(pair.allocate(stream, 256, storage_type::device),
                    Contains("out_of_memory") && Contains("maximum 2097152 bytes"));
  CHECK(pair.device_memory_resource().pool_size() <= 2 * MiB);
  void* h = pair.allocate(stream, MiB, storage_type::pinned_host);
  CHECK_THROWS_AS(pair.allocate(stream, 1, storage_type::pinned_host), rmm::out_of_memory);
  pair.deallocate(stream, a, MiB, storage_type::device);
  pair.deallocate(stream, b, MiB, storage_type::device);
  pair.deallocate(stream, h, MiB, storage_type::pinned_host);
}

TEST_CASE("pool pair: bad configuration", "[gpu][sdk][pool_pair]") {
  rmm::mr::device_host_pool_config config;
  config.device_memory_initial_size = "16 mb";
  CHECK_THROWS_AS(device_host_pool_pair{config}, rmm::invalid_argument);
  CHECK_THROWS_WITH(device_host_pool_pair{config},
                    Contains("device_memory_initial_size: invalid memory size \"16 mb\""));
  rmm::mr::device_host_pool_config bad_device;
  bad_device.dev_id = rmm::get_num_cuda_devices();
  CHECK_THROWS_AS(device_host_pool_pair{bad_device}, rmm::out_of_range);
}

// --- make_stream_ordered_allocator ---------------------------------------------------------------

TEST_CASE("stream-ordered allocator: defaults", "[gpu][sdk][stream_ordered]") {
  auto mr = rmm::mr::make_stream_ordered_allocator();
  CHECK(mr.get_limit() == 2 * rmm::mr::sdk_default_initial_pool_size);
  rmm::cuda_stream stream;
  void* p = mr.allocate(stream, MiB, 256);
  check_device(p, MiB, 4, stream);
  mr.deallocate(stream, p, MiB, 256);
  stream.synchronize();
}

TEST_CASE("stream-ordered allocator: initial size kept up to the release threshold",
          "[gpu][sdk][stream_ordered]") {
  rmm::mr::stream_ordered_allocator_config config;
  // The driver reserves in chunks larger than a small request (on the H100 an 8 MiB priming
  // left 0 bytes under a 16 MiB threshold: the chunk it reserved exceeded the threshold and was
  // released at the synchronisation), so the threshold here is far above any chunk.
  config.device_memory_initial_size = "8MB";
  config.device_memory_max_size     = "1GB";
  config.release_threshold          = "512MB";
  config.dev_id                     = rmm::get_current_cuda_device().value();
  auto mr                           = rmm::mr::make_stream_ordered_allocator(config);
  CHECK(mr.reserved_bytes() >= 8 * MiB);
  CHECK(mr.get_limit() == 1024 * MiB);
}

TEST_CASE("stream-ordered allocator: the maximum is enforced",
          "[gpu][sdk][stream_ordered][expected_api_errors]") {
  rmm::mr::stream_ordered_allocator_config config;
  config.device_memory_initial_size = "1MB";
  config.device_memory_max_size     = "4MB";
  config.release_threshold          = "0B";
  auto mr                           = rmm::mr::make_stream_ordered_allocator(config);
  rmm::cuda_stream stream;
  void* a = mr.allocate(stream, 3 * MiB, 256);
  CHECK_THROWS_AS(mr.allocate(stream, 2 * MiB, 256), rmm::out_of_memory);
  void* b = mr.allocate(stream, MiB, 256);  // exactly up to the maximum
  check_device(b, MiB, 6, stream);
  mr.deallocate(stream, a, 3 * MiB, 256);
  mr.deallocate(stream, b, MiB, 256);
  stream.synchronize();
}

TEST_CASE("stream-ordered allocator: bad configuration", "[gpu][sdk][stream_ordered]") {
  rmm::mr::stream_ordered_allocator_config config;
  config.release_threshold = "4 mb";
  CHECK_THROWS_AS(rmm::mr::make_stream_ordered_allocator(config), rmm::invalid_argument);
  rmm::mr::stream_ordered_allocator_config bad_device;
  bad_device.dev_id = -1;
  CHECK_THROWS_AS(rmm::mr::make_stream_ordered_allocator(bad_device), rmm::out_of_range);
}
