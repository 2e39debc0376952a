// A CPU sampling profiler for machines without perf or nsys (the GPU machine has neither).
//
//   LD_PRELOAD=librmm_sampler.so RMM_SAMPLER_OUT=prof.txt RMM_SAMPLER_HZ=4000 ./program ...
//   python3 scripts/profile_report.py prof.txt --binary-dir <folder with unstripped binaries>
//
// Wall-clock sampling, per thread: every thread of the program (the main thread, and each thread
// it starts through pthread_create, which this library wraps; threads that the CUDA libraries
// start are left out) gets a CLOCK_MONOTONIC timer that sends it SIGPROF. The handler stores the
// interrupted program counter in a fixed array (async-signal-safe: one atomic increment and a
// store). A thread blocked on a lock is sampled too, inside the wait, so lock contention shows
// as time in the futex wait. (CPU-time timers, ITIMER_PROF, do not fire on the GPU machine's
// virtual machine, whose process CPU time reads as almost zero.) At exit the samples are
// aggregated, every distinct address is named with dladdr (module and nearest exported symbol)
// and written with /proc/self/maps and the wall time.
//
// Inline frames are resolved afterwards, on the development machine, by addr2line on the same
// binaries built with -g (scripts/profile_report.py).
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

// Each sample: the interrupted program counter, then up to `depth - 1` return addresses above it
// (glibc's backtrace through the signal frame), zero-padded. The callers let the report charge
// time spent inside libc or the CUDA driver (a futex wait, an ioctl) to the function of ours that
// called it.
constexpr std::size_t depth    = 12;
constexpr std::size_t capacity = std::size_t{1} << 21;  // 2 M samples, 192 MiB
std::uintptr_t* samples{nullptr};
std::atomic<std::size_t> count{0};
std::chrono::steady_clock::time_point started;
char const* out_path{nullptr};

void on_sigprof(int, siginfo_t*, void* context) {
  auto const* uc      = static_cast<ucontext_t const*>(context);
  std::size_t const i = count.fetch_add(1, std::memory_order_relaxed);
  if (i < capacity) {
    std::uintptr_t* slot = samples + i * depth;
    slot[0]              = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
    void* frames[depth + 2];
    int const got = backtrace(frames, static_cast<int>(depth + 2));
    // frames[0] is this handler and frames[1] the signal trampoline.
    for (int f = 2; f < got && static_cast<std::size_t>(f - 1) < depth; ++f) {
      slot[f - 1] = reinterpret_cast<std::uintptr_t>(frames[f]);
    }
  }
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto const secs = [](timeval t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

long interval_ns = 250000;  // 4 kHz by default

// Starts a timer that interrupts the calling thread every interval (wall clock).
bool sample_this_thread(timer_t& timer) {
  if (out_path == nullptr) {
    return false;
  }
  sigevent ev{};
  ev.sigev_notify   = SIGEV_THREAD_ID;
  ev.sigev_signo    = SIGPROF;
  ev._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) {
    return false;
  }
  itimerspec spec{};
  spec.it_interval.tv_nsec = interval_ns;
  spec.it_value            = spec.it_interval;
  timer_settime(timer, 0, &spec, nullptr);
  return true;
}

struct start_args {
  void* (*routine)(void*);
  void* arg;
};

void* sampled_start(void* p) {
  start_args a = *static_cast<start_args*>(p);
  delete static_cast<start_args*>(p);
  timer_t timer{};
  bool const sampled = sample_this_thread(timer);
  void* result       = a.routine(a.arg);
  if (sampled) {
    timer_delete(timer);  // a thread that leaves through pthread_exit keeps its timer: rare
  }
  return result;
}

bool from_cuda_library(void const* caller) {
  Dl_info info{};
  if (dladdr(caller, &info) == 0 || info.dli_fname == nullptr) {
    return false;
  }
  return std::strstr(info.dli_fname, "libcuda") != nullptr ||
         std::strstr(info.dli_fname, "libcudart") != nullptr ||
         std::strstr(info.dli_fname, "libnv") != nullptr;
}

__attribute__((constructor)) void start() {
  out_path = std::getenv("RMM_SAMPLER_OUT");
  if (out_path == nullptr) {
    return;
  }
  samples = static_cast<std::uintptr_t*>(std::calloc(capacity * depth, sizeof(std::uintptr_t)));
  void* warm[2];
  backtrace(warm, 2);  // loads the unwinder now, not inside the first signal
  if (samples == nullptr) {
    out_path = nullptr;
    return;
  }
  if (char const* h = std::getenv("RMM_SAMPLER_HZ")) {
    interval_ns = 1000000000L / std::max(1L, std::atol(h));
  }
  struct sigaction sa {};
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags     = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, nullptr);
  started = std::chrono::steady_clock::now();
  static timer_t main_timer{};
  sample_this_thread(main_timer);
}

__attribute__((destructor)) void finish() {
  if (out_path == nullptr) {
    return;
  }
  signal(SIGPROF, SIG_IGN);
  double const wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::size_t const n = std::min(count.load(), capacity);
  std::map<std::uintptr_t, std::size_t> hist;  // every address seen -> samples it is the pc of
  std::map<std::vector<std::uintptr_t>, std::size_t> stacks;
  for (std::size_t i = 0; i < n; ++i) {
    std::uintptr_t const* slot = samples + i * depth;
    std::vector<std::uintptr_t> stack;
    for (std::size_t f = 0; f < depth && slot[f] != 0; ++f) {
      stack.push_back(slot[f]);
      hist.try_emplace(slot[f], 0);
    }
    ++hist[slot[0]];
    ++stacks[stack];
  }
  std::ofstream out{out_path};
  out << "# rmm sampler\nwall_seconds " << wall << "\ncpu_seconds " << cpu_seconds() << "\nsamples "
      << n << "\ndropped " << (count.load() - n) << "\n# maps\n";
  std::ifstream maps{"/proc/self/maps"};
  for (std::string line; std::getline(maps, line);) {
    out << "map " << line << "\n";
  }
  out << "# pc count module symbol+offset\n";
  for (auto const& [pc, c] : hist) {
    Dl_info info{};
    std::string module = "?";
    std::string symbol = "?";
    if (dladdr(reinterpret_cast<void*>(pc), &info) != 0) {
      if (info.dli_fname != nullptr) {
        module = info.dli_fname;
      }
      if (info.dli_sname != nullptr) {
        symbol = std::string{info.dli_sname} + "+" +
                 std::to_string(pc - reinterpret_cast<std::uintptr_t>(info.dli_saddr));
      }
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%#lx", static_cast<unsigned long>(pc));
    out << "pc " << buf << " " << c << " " << (module.empty() ? "?" : module) << " " << symbol
        << "\n";
  }
  out << "# stack count pc caller caller...\n";
  for (auto const& [stack, c] : stacks) {
    out << "stack " << c;
    for (std::uintptr_t const a : stack) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%#lx", static_cast<unsigned long>(a));
      out << " " << buf;
    }
    out << "\n";
  }
}

}  // namespace

// Wraps pthread_create so that the program's own threads are sampled too.
extern "C" int pthread_create(pthread_t* thread,
                              pthread_attr_t const* attr,
                              void* (*routine)(void*),
                              void* arg) {
  using create_fn  = int (*)(pthread_t*, pthread_attr_t const*, void* (*)(void*), void*);
  static auto real = reinterpret_cast<create_fn>(dlsym(RTLD_NEXT, "pthread_create"));
  if (out_path == nullptr || from_cuda_library(__builtin_return_address(0))) {
    return real(thread, attr, routine, arg);
  }
  auto* a = new start_args{routine, arg};
  int rc  = real(thread, attr, sampled_start, a);
  if (rc != 0) {
    delete a;
  }
  return rc;
}
