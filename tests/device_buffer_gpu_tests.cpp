// rmm::device_buffer: sizes (0 allocates nothing), contents through the host after every kind of
// reallocation, capacity rules, moves, the deallocation stream, the resource it reports and keeps
// alive, explicit alignment, and that every free matches its allocation exactly.
#include "utilities/device_kernels.hpp"
#include "utilities/messages.hpp"
#include "utilities/test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda_runtime_api.h>
#include <catch2/catch.hpp>
#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace {

using Catch::Matchers::Contains;
using rmm::device_buffer;
using rmm::mr::cuda_memory_resource;
using rmm::test::counting_resource;
using rmm::test::verifying_resource;

constexpr std::size_t MiB = std::size_t{1} << 20U;

/// Sizes that exercise the empty case, a single byte, an odd size and a large one.
std::vector<std::size_t> const sizes{0, 1, 7, 4097, 3 * MiB + 5};

/// Host bytes following the test pattern of @p seed.
std::vector<std::uint8_t> pattern(std::size_t bytes, std::uint32_t seed) {
  std::vector<std::uint8_t> host(bytes);
  if (bytes > 0) {
    rmm::test::fill_pattern_host(host.data(), bytes, seed);
  }
  return host;
}

/// The first @p bytes of @p buf, copied to the host after @p stream has finished.
std::vector<std::uint8_t> to_host(device_buffer const& buf,
                                  std::size_t bytes,
                                  rmm::cuda_stream_view stream) {
  stream.synchronize();
  std::vector<std::uint8_t> host(bytes);
  if (bytes > 0) {
    RMM_CUDA_TRY(cudaMemcpy(host.data(), buf.data(), bytes, cudaMemcpyDeviceToHost));
  }
  return host;
}

}  // namespace

// A named namespace: clang reports the hidden friend get_property of a class with internal
// linkage as never emitted (-Wunneeded-internal-declaration).
namespace device_buffer_tests {

/// Records the stream of every deallocation (copies share the record); forwards to CUDA.
class stream_recording_resource {
 public:
  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment) {
    return upstream_.allocate(stream, bytes, alignment);
  }
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept {
    frees_->push_back(stream.get());
    upstream_.deallocate(stream, ptr, bytes, alignment);
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) {
    return upstream_.allocate_sync(bytes, alignment);
  }
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept {
    frees_->push_back(cudaStream_t{});
    upstream_.deallocate_sync(ptr, bytes, alignment);
  }
  [[nodiscard]] std::vector<cudaStream_t> const& frees() const noexcept { return *frees_; }
  bool operator==(stream_recording_resource const& other) const noexcept {
    return frees_ == other.frees_;
  }
  bool operator!=(stream_recording_resource const& other) const noexcept {
    return !(*this == other);
  }
  friend void get_property(stream_recording_resource const&, cuda::mr::device_accessible) noexcept {
  }

 private:
  cuda_memory_resource upstream_;
  std::shared_ptr<std::vector<cudaStream_t>> frees_ = std::make_shared<std::vector<cudaStream_t>>();
};

}  // namespace device_buffer_tests

using device_buffer_tests::stream_recording_resource;

TEST_CASE("device_buffer: sizes 0, 1, odd and large", "[gpu][device_buffer]") {
  rmm::cuda_stream stream;
  counting_resource counter{cuda_memory_resource{}};
  for (auto const size : sizes) {
    INFO("size " << size);
    auto const before = counter.counts().allocations.load();
    {
      device_buffer buf(size, stream, counter);
      CHECK(buf.size() == size);
      CHECK(buf.capacity() == size);
      CHECK(buf.ssize() == static_cast<std::int64_t>(size));
      CHECK(buf.is_empty() == (size == 0));
      CHECK(buf.stream() == stream.view());
      CHECK(buf.alignment() == rmm::CUDA_ALLOCATION_ALIGNMENT);
      if (size == 0) {
        CHECK(buf.data() == nullptr);
        CHECK(counter.counts().allocations == before);
      } else {
        REQUIRE(buf.data() != nullptr);
        CHECK(rmm::is_pointer_aligned(buf.data(), rmm::CUDA_ALLOCATION_ALIGNMENT));
        CHECK(counter.counts().allocations == before + 1);
        CHECK(counter.counts().bytes_outstanding == size);
        rmm::test::fill_pattern(buf.data(), size, 1, stream.value());
        CHECK(rmm::test::count_pattern_mismatches(buf.data(), size, 1, stream.value()) == 0);
      }
    }
    CHECK(counter.counts().bytes_outstanding == 0);
  }
}

TEST_CASE("device_buffer: the default constructor is empty and uses the current resource",
          "[gpu][device_buffer]") {
  device_buffer buf;
  CHECK(buf.data() == nullptr);
  CHECK(buf.size() == 0);
  CHECK(buf.capacity() == 0);
  CHECK(buf.is_empty());
  CHECK(buf.memory_resource() == rmm::mr::get_current_device_resource_ref());
  rmm::cuda_stream stream;
  buf.resize(1000, stream);  // an empty buffer is usable
  CHECK(buf.size() == 1000);
  CHECK(buf.data() != nullptr);
}

TEST_CASE("device_buffer: construction from host data round trips", "[gpu][device_buffer]") {
  rmm::cuda_stream stream;
  for (auto const size : sizes) {
    INFO("size " << size);
    auto const host = pattern(size, 2);
    device_buffer buf(host.data(), size, stream);
    CHECK(buf.size() == size);
    CHECK(to_host(buf, size, stream) == host);
  }
  device_buffer from_null(nullptr, 0, stream);
  CHECK(from_null.data() == nullptr);
  CHECK_THAT(rmm::test::logic_error_message([&] { device_buffer bad(nullptr, 5, stream); }),
             Contains("source_data is null") && Contains("5 bytes"));
}

TEST_CASE("device_buffer: the copy constructor copies size() bytes into a fitting allocation",
          "[gpu][device_buffer]") {
  rmm::cuda_stream stream;
  verifying_resource verifier{cuda_memory_resource{}};
  auto const host = pattern(1000, 3);
  device_buffer original(host.data(), host.size(), stream);
  original.reserve(5000, stream);
  REQUIRE(original.capacity() == 5000);
  device_buffer copy(original, stream, verifier);
  CHECK(copy.size() == 1000);
  CHECK(copy.capacity() == 1000);
  CHECK(copy.data() != original.data());
  CHECK(copy.alignment() == original.alignment());
  CHECK(copy.memory_resource() == rmm::device_async_resource_ref{verifier});
  CHECK(to_host(copy, 1000, stream) == host);
  device_buffer empty_copy(device_buffer{0, stream}, stream);
  CHECK(empty_copy.data() == nullptr);
}

TEST_CASE("device_buffer: resize, reserve and shrink_to_fit keep the contents",
          "[gpu][device_buffer]") {
  rmm::cuda_stream stream;
  counting_resource counter{cuda_memory_resource{}};
  auto const host = pattern(4097, 4);
  device_buffer buf(host.data(), host.size(), stream, counter);

  SECTION("resize within the capacity only changes the size") {
    void const* const before = buf.data();
    buf.resize(100, stream);
    CHECK(buf.size() == 100);
    CHECK(buf.capacity() == 4097);
    CHECK(buf.data() == before);
    CHECK(counter.counts().allocations == 1);
    buf.resize(4097, stream);  // back up to the capacity: still no allocation
    CHECK(counter.counts().allocations == 1);
    CHECK(to_host(buf, 4097, stream) == host);
  }
  SECTION("resize beyond the capacity reallocates exactly and copies") {
    buf.resize(3 * MiB + 1, stream);
    CHECK(buf.size() == 3 * MiB + 1);
    CHECK(buf.capacity() == 3 * MiB + 1);
    CHECK(counter.counts().allocations == 2);
    CHECK(counter.counts().deallocations == 1);
    CHECK(counter.counts().bytes_outstanding == 3 * MiB + 1);
    CHECK(to_host(buf, host.size(), stream) == host);
  }
  SECTION("reserve changes the capacity only") {
    buf.reserve(100, stream);  // smaller: nothing happens
    CHECK(buf.capacity() == 4097);
    CHECK(counter.counts().allocations == 1);
    buf.reserve(10000, stream);
    CHECK(buf.size() == 4097);
    CHECK(buf.capacity() == 10000);
    CHECK(counter.counts().allocations == 2);
    CHECK(counter.counts().bytes_outstanding == 10000);
    CHECK(to_host(buf, host.size(), stream) == host);
  }
  SECTION("shrink_to_fit reallocates to the size") {
    buf.resize(1000, stream);
    buf.shrink_to_fit(stream);
    CHECK(buf.size() == 1000);
    CHECK(buf.capacity() == 1000);
    CHECK(counter.counts().bytes_outstanding == 1000);
    CHECK(to_host(buf, 1000, stream) ==
          std::vector<std::uint8_t>(host.begin(), host.begin() + 1000));
    auto const allocations = counter.counts().allocations.load();
    buf.shrink_to_fit(stream);  // already fitting: nothing happens
    CHECK(counter.counts().allocations == allocations);
    buf.resize(0, stream);
    buf.shrink_to_fit(stream);  // size 0: the allocation is freed
    CHECK(buf.data() == nullptr);
    CHECK(buf.capacity() == 0);
    CHECK(counter.counts().bytes_outstanding == 0);
  }
}

TEST_CASE("device_buffer: moves leave the source empty", "[gpu][device_buffer]") {
  rmm::cuda_stream stream;
  counting_resource counter{cuda_memory_resource{}};
  auto const host = pattern(777, 5);
  device_buffer source(host.data(), host.size(), stream, counter);
  void const* const ptr = source.data();

  device_buffer moved(std::move(source));
  CHECK(moved.data() == ptr);
  CHECK(moved.size() == 777);
  CHECK(moved.stream() == stream.view());
  CHECK(moved.memory_resource() == rmm::device_async_resource_ref{counter});
  CHECK(source.data() == nullptr);  // NOLINT(bugprone-use-after-move): the documented state
  CHECK(source.size() == 0);
  CHECK(source.capacity() == 0);
  CHECK(source.stream() == rmm::cuda_stream_view{});

  device_buffer target(100, stream, counter);
  CHECK(counter.counts().allocations == 2);
  target = std::move(moved);  // frees the 100 bytes
  CHECK(counter.counts().deallocations == 1);
  CHECK(counter.counts().bytes_outstanding == 777);
  CHECK(target.data() == ptr);
  CHECK(moved.data() == nullptr);  // NOLINT(bugprone-use-after-move)
  CHECK(to_host(target, 777, stream) == host);

  // A moved-from buffer can be used again.
  source.resize(10, stream);
  CHECK(source.data() != nullptr);
}

TEST_CASE("device_buffer: frees on the stream set last", "[gpu][device_buffer]") {
  rmm::cuda_stream first;
  rmm::cuda_stream second;
  rmm::cuda_stream third;
  stream_recording_resource recorder;
  {
    device_buffer buf(1000, first, recorder);
    buf.set_stream(second);
    CHECK(buf.stream() == second.view());
  }
  REQUIRE(recorder.frees().size() == 1);
  CHECK(recorder.frees().back() == second.value());
  {
    device_buffer buf(1000, first, recorder);
    buf.resize(2000, third);  // reallocation frees the old block on the new stream
    REQUIRE(recorder.frees().size() == 2);
    CHECK(recorder.frees().back() == third.value());
    CHECK(buf.stream() == third.view());
  }
  CHECK(recorder.frees().back() == third.value());
}

TEST_CASE("device_buffer: memory_resource() is the resource given, or the current one",
          "[gpu][device_buffer]") {
  rmm::cuda_stream stream;
  cuda_memory_resource cuda_mr;
  counting_resource counter{cuda_memory_resource{}};
  device_buffer by_default(10, stream);
  CHECK(by_default.memory_resource() == rmm::mr::get_current_device_resource_ref());
  device_buffer by_value(10, stream, counter);
  CHECK(by_value.memory_resource() == rmm::device_async_resource_ref{counter});
  CHECK(by_value.memory_resource() != rmm::device_async_resource_ref{cuda_mr});
  device_buffer by_ref(10, stream, rmm::device_async_resource_ref{counter});
  CHECK(by_ref.memory_resource() == rmm::device_async_resource_ref{counter});
}

TEST_CASE("device_buffer: keeps its resource alive after the caller's handle is gone",
          "[gpu][device_buffer]") {
  rmm::cuda_stream stream;
  counting_resource upstream{cuda_memory_resource{}};
  auto const host = pattern(MiB, 6);
  device_buffer buf;
  {
    rmm::mr::pool_memory_resource pool{upstream, 2 * MiB};
    buf = device_buffer(host.data(), host.size(), stream, pool);
  }  // the caller's pool handle is gone; the buffer's copy keeps the pool
  CHECK(upstream.counts().bytes_outstanding >= 2 * MiB);
  CHECK(to_host(buf, host.size(), stream) == host);
  buf.resize(3 * MiB, stream);  // the pool still serves the buffer
  CHECK(to_host(buf, host.size(), stream) == host);
  buf = device_buffer{};  // the last owner of the pool goes: it returns everything upstream
  CHECK(upstream.counts().bytes_outstanding == 0);
}

TEST_CASE("device_buffer: every free matches its allocation and nothing leaks",
          "[gpu][device_buffer]") {
  rmm::cuda_stream stream;
  // 4096-byte alignment: cuda_memory_resource gives 256, the adaptor more.
  verifying_resource verifier{rmm::mr::aligned_resource_adaptor{cuda_memory_resource{}, 4096, 0}};
  counting_resource counter{verifier};
  {
    device_buffer a(1000, stream, counter);
    a.resize(5000, stream);
    a.reserve(8000, stream);
    a.resize(10, stream);
    a.shrink_to_fit(stream);
    device_buffer b(a, stream, counter);
    device_buffer c(std::move(a));
    b = std::move(c);
    device_buffer d(100, 4096, stream, counter);
    d.resize(300, stream);
    device_buffer e(d, stream, counter);
    CHECK(e.alignment() == 4096);
  }
  CHECK(verifier.failures().empty());
  CHECK(verifier.live_allocations() == 0);
  CHECK(counter.counts().allocations == counter.counts().deallocations);
  CHECK(counter.counts().bytes_outstanding == 0);
}

TEST_CASE("device_buffer: explicit alignment", "[gpu][device_buffer]") {
  rmm::cuda_stream stream;
  // 4096-byte alignment: cuda_memory_resource gives 256, the adaptor more.
  verifying_resource verifier{rmm::mr::aligned_resource_adaptor{cuda_memory_resource{}, 4096, 0}};
  {
    device_buffer buf(1000, 4096, stream, verifier);
    CHECK(buf.alignment() == 4096);
    CHECK(rmm::is_pointer_aligned(buf.data(), 4096));
    auto const host = pattern(333, 7);
    device_buffer copied(host.data(), host.size(), 1024, stream, verifier);
    CHECK(copied.alignment() == 1024);
    CHECK(to_host(copied, host.size(), stream) == host);
  }
  CHECK(verifier.failures().empty());
  CHECK(verifier.live_allocations() == 0);
  // A view, not the rmm::cuda_stream: overload resolution would otherwise ask CCCL whether the
  // (non-copyable) cuda_stream converts to the any_resource of the 3-argument constructor, which
  // CCCL 3.5 answers with a hard error instead of "no".
  rmm::cuda_stream_view const view{stream};
  CHECK_THROWS_AS(device_buffer(10, 3, view), rmm::invalid_argument);
  CHECK_THROWS_WITH(device_buffer(10, 0, view), Contains("alignment 0"));
}
