#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/system_memory_resource.hpp>

#include <catch2/catch.hpp>

using Catch::Matchers::Contains;

TEST_CASE("system_memory_resource refuses devices without pageable memory access",
          "[gpu][system_memory_resource]") {
  auto const device = rmm::get_current_cuda_device();
  if (rmm::mr::detail::is_system_memory_supported(device)) {
    rmm::mr::system_memory_resource mr;
    void* ptr = mr.allocate_sync(4096);
    CHECK(rmm::is_pointer_aligned(ptr, 256));
    mr.deallocate_sync(ptr, 4096);
    WARN("device supports system allocated memory: the refusal path is not exercised here");
    return;
  }
  CHECK_THROWS_AS(rmm::mr::system_memory_resource{}, rmm::logic_error);
  CHECK_THROWS_WITH(rmm::mr::system_memory_resource{},
                    Contains("device " + std::to_string(device.value())) &&
                        Contains("cudaDevAttrPageableMemoryAccess") && Contains("HMM or ATS"));
}
