// The ResNet-50 log replayed through the pool over a fake upstream (as in resource_model.cpp): ns
// per event of the second of two passes over a new pool, median of the repetitions.
//   ./replay <log.csv> repetitions
#include <rmm/mr/pool_memory_resource.hpp>
#include <cuda/stream_ref>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>
struct fake_upstream {
  struct state { std::uintptr_t cursor = std::uintptr_t{1} << 40U; };
  std::shared_ptr<state> s = std::make_shared<state>();
  void* allocate(cuda::stream_ref, std::size_t b, std::size_t a) { return allocate_sync(b, a); }
  void deallocate(cuda::stream_ref, void*, std::size_t, std::size_t) noexcept {}
  void* allocate_sync(std::size_t b, std::size_t = 256) { auto p = s->cursor; s->cursor += (b + 255) / 256 * 256; return reinterpret_cast<void*>(p); }
  void deallocate_sync(void*, std::size_t, std::size_t = 256) noexcept {}
  bool operator==(fake_upstream const& o) const noexcept { return s == o.s; }
  bool operator!=(fake_upstream const& o) const noexcept { return s != o.s; }
  friend void get_property(fake_upstream const&, cuda::mr::device_accessible) noexcept {}
};
struct ev { bool alloc; std::size_t id; std::size_t size; };
int main(int argc, char** argv) {
  std::ifstream in(argv[1]); std::string line; std::getline(in, line);
  std::unordered_map<std::string, std::size_t> ids; std::vector<ev> evs; std::size_t next = 0;
  while (std::getline(in, line)) {
    std::stringstream ss(line); std::string t, tm, act, ptr, size;
    std::getline(ss, t, ','); std::getline(ss, tm, ','); std::getline(ss, act, ','); std::getline(ss, ptr, ','); std::getline(ss, size, ',');
    bool const a = act == "allocate";
    if (a) { ids[ptr] = next; evs.push_back({true, next++, std::stoul(size)}); }
    else { auto it = ids.find(ptr); if (it == ids.end()) continue; evs.push_back({false, it->second, std::stoul(size)}); ids.erase(it); }
  }
  int reps = std::atoi(argv[2]);
  cuda::stream_ref const stream{cudaStream_t{nullptr}};
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) {
    rmm::mr::pool_memory_resource pool{fake_upstream{}, std::size_t{0}};
    std::vector<void*> ptrs(next);
    for (int pass = 0; pass < 2; ++pass) {
      auto t0 = std::chrono::steady_clock::now();
      for (auto const& e : evs) {
        if (e.alloc) ptrs[e.id] = pool.allocate(stream, e.size, 256); else pool.deallocate(stream, ptrs[e.id], e.size, 256);
      }
      if (pass == 1) v.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e9 / double(evs.size()));
      // free what the log left allocated
      std::vector<bool> live(next, false); for (auto const& e : evs) live[e.id] = e.alloc;
      for (auto const& e : evs) if (e.alloc && live[e.id]) { pool.deallocate(stream, ptrs[e.id], e.size, 256); live[e.id] = false; }
    }
  }
  std::sort(v.begin(), v.end());
  std::printf("%zu events, median %.1f ns/event\n", evs.size(), v[v.size() / 2]);
}
