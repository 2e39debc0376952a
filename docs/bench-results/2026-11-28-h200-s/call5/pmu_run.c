// pmu_run: counts hardware events of a command (user space only), each event on its own counter
// (the kernel multiplexes and the counts are scaled). Usage: pmu_run -- cmd args...
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct ev { const char* name; uint32_t type; uint64_t config; };
#define RAW(e, u, c, edge) ((uint64_t)(e) | ((uint64_t)(u) << 8) | ((uint64_t)(edge) << 18) | ((uint64_t)(c) << 24))
static struct ev evs[] = {
  {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
  {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
  {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
  {"machine_clears.count", PERF_TYPE_RAW, RAW(0xc3, 0x01, 1, 1)},
  {"machine_clears.memory_ordering", PERF_TYPE_RAW, RAW(0xc3, 0x02, 0, 0)},
  {"ld_blocks.store_forward", PERF_TYPE_RAW, RAW(0x03, 0x82, 0, 0)},
  {"ld_blocks.address_alias", PERF_TYPE_RAW, RAW(0x03, 0x04, 0, 0)},
  {"cycle_activity.stalls_l1d_miss", PERF_TYPE_RAW, RAW(0xa3, 0x0c, 12, 0)},
  {"cycle_activity.stalls_total", PERF_TYPE_RAW, RAW(0xa3, 0x04, 4, 0)},
  {"mem_load_retired.l1_miss", PERF_TYPE_RAW, RAW(0xd1, 0x08, 0, 0)},
  {"mem_load_retired.l2_miss", PERF_TYPE_RAW, RAW(0xd1, 0x10, 0, 0)},
  {"resource_stalls.sb", PERF_TYPE_RAW, RAW(0xa2, 0x08, 0, 0)},
  {"int_misc.recovery_cycles", PERF_TYPE_RAW, RAW(0xad, 0x01, 0, 0)},
  {"exe_activity.bound_on_stores", PERF_TYPE_RAW, RAW(0xa6, 0x40, 2, 0)},
};
#define NEV (sizeof evs / sizeof evs[0])

int main(int argc, char** argv) {
  int a = 1;
  if (a < argc && strcmp(argv[a], "--") == 0) ++a;
  if (a >= argc) { fprintf(stderr, "usage: pmu_run -- cmd args\n"); return 2; }
  int go[2];
  if (pipe(go) != 0) return 2;
  pid_t child = fork();
  if (child == 0) {
    char c; close(go[1]);
    if (read(go[0], &c, 1) != 1) _exit(3);
    execvp(argv[a], argv + a);
    _exit(127);
  }
  close(go[0]);
  int fds[NEV];
  for (size_t i = 0; i < NEV; ++i) {
    struct perf_event_attr at; memset(&at, 0, sizeof at);
    at.size = sizeof at; at.type = evs[i].type; at.config = evs[i].config;
    at.disabled = 1; at.enable_on_exec = 1; at.inherit = 1; at.exclude_kernel = 1; at.exclude_hv = 1;
    at.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    fds[i] = (int)syscall(__NR_perf_event_open, &at, child, -1, -1, 0);
    if (fds[i] < 0) fprintf(stderr, "pmu_run: %s: perf_event_open failed: %s\n", evs[i].name, strerror(errno));
  }
  if (write(go[1], "g", 1) != 1) return 2;
  int st = 0; waitpid(child, &st, 0);
  for (size_t i = 0; i < NEV; ++i) {
    if (fds[i] < 0) continue;
    uint64_t v[3] = {0, 0, 0};
    if (read(fds[i], v, sizeof v) != sizeof v) { fprintf(stderr, "pmu_run: %s: read failed\n", evs[i].name); continue; }
    double scaled = v[2] ? (double)v[0] * (double)v[1] / (double)v[2] : 0.0;
    printf("PMU %-32s %16.0f  (running %.0f%%)\n", evs[i].name, scaled, v[1] ? 100.0 * (double)v[2] / (double)v[1] : 0.0);
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
