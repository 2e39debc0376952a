#include <sched.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
using clk = std::chrono::steady_clock;
static volatile std::uint64_t sink;
static double ns_since(clk::time_point t, double n) { return std::chrono::duration<double, std::nano>(clk::now() - t).count() / n; }
// A: dependent multiply-add chain (latency bound).
static double loop_mul() { std::uint64_t x = sink + 1; auto t = clk::now(); for (int i = 0; i < 1000000; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL; sink = x; return ns_since(t, 1e6); }
// B: pointer chase over 256 KiB (L2 latency).
static std::vector<std::uint32_t> chain;
static double loop_chase() { std::uint32_t i = 0; auto t = clk::now(); for (int k = 0; k < 1000000; ++k) i = chain[i]; sink = i; return ns_since(t, 1e6); }
// C: open-addressing map churn (insert, find, erase) over 64 slots: loads, stores, branches.
struct slot { std::uint64_t key; std::uint32_t v; bool used; };
static double loop_map() {
  slot s[64] = {};
  auto home = [](std::uint64_t k) { return (k * 0x9E3779B97F4A7C15ULL >> 32) & 63; };
  std::uint64_t base = 0x7f0000000000ULL + (sink & 0xff000);
  auto t = clk::now();
  std::uint64_t acc = 0;
  for (int k = 0; k < 300000; ++k) {
    std::uint64_t key = base + (std::uint64_t(k & 15) << 12);
    std::size_t i = home(key); while (s[i].used) i = (i + 1) & 63; s[i] = slot{key, std::uint32_t(k), true};
    std::size_t j = home(key); while (s[j].used && s[j].key != key) j = (j + 1) & 63; acc += s[j].v;
    std::size_t hole = j; for (std::size_t m = (j + 1) & 63; s[m].used; m = (m + 1) & 63) { std::size_t h = home(s[m].key); if (((m - h) & 63) >= ((m - hole) & 63)) { s[hole] = s[m]; hole = m; } } s[hole] = slot{};
  }
  sink = acc; return ns_since(t, 3e5);
}
int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  chain.resize(65536); std::vector<std::uint32_t> perm(65536); for (std::uint32_t i = 0; i < 65536; ++i) perm[i] = i;
  std::uint64_t r = 88172645463325252ULL; for (std::size_t i = 65535; i > 0; --i) { r ^= r << 13; r ^= r >> 7; r ^= r << 17; std::swap(perm[i], perm[r % (i + 1)]); }
  for (std::size_t i = 0; i < 65536; ++i) chain[perm[i]] = perm[(i + 1) % 65536];
  cpu_set_t all; sched_getaffinity(0, sizeof all, &all);
  std::vector<int> cpus; for (int c = 0; c < CPU_SETSIZE; ++c) if (CPU_ISSET(c, &all)) cpus.push_back(c);
  std::vector<std::vector<double>> A(cpus.size()), B(cpus.size()), C(cpus.size());
  for (int rr = 0; rr < rounds; ++rr) for (std::size_t k = 0; k < cpus.size(); ++k) {
    cpu_set_t one; CPU_ZERO(&one); CPU_SET(cpus[k], &one); sched_setaffinity(0, sizeof one, &one);
    loop_map();
    A[k].push_back(loop_mul()); B[k].push_back(loop_chase()); C[k].push_back(loop_map());
  }
  auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  for (std::size_t k = 0; k < cpus.size(); ++k) std::printf("cpu %2d  mul %.3f  chase %.2f  map %.2f ns\n", cpus[k], med(A[k]), med(B[k]), med(C[k]));
}
