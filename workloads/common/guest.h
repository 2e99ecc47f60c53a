/* What a workload needs in the full-system guest (kernel/guest/init runs it from the run's payload, with
 * --guest): the result handed to the host with m5 writefile, since the serial console costs tens of
 * microseconds of simulated time per character, and the page table its layout map needs. */
#ifndef COHTB_GUEST_H
#define COHTB_GUEST_H

#include "bench.h"   /* first: it defines _GNU_SOURCE */

#include <fcntl.h>
#include <sys/klog.h>
#include <unistd.h>

/* Hands the file to the host: m5 writefile into gem5's output directory. */
static int write_back(const char *file, const char *name) {
  static char buf[1 << 20];
  fflush(stdout);
  FILE *f = fopen(file, "r");
  size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (!f || !feof(f)) { fprintf(stderr, "%s: cannot read back %s\n", bench_name, file); return 1; }
  fclose(f);
  return m5_write_file(buf, n, 0, name) == n ? 0 : 1;
}

/* printk to the kernel log only (the console is slow), and the result (stdout) into /result.json, which
 * guest_write_back_result hands to the host; nonzero if stdout cannot be moved. */
static int guest_result_to_host(void) {
  klogctl(8 /* SYSLOG_ACTION_CONSOLE_LEVEL */, NULL, 1);
  if (!freopen("/result.json", "w", stdout)) {
    fprintf(stderr, "%s: /result.json: %s\n", bench_name, strerror(errno));
    return 1;
  }
  return 0;
}

/* A bench_run cleanup: the result, once printed, to gem5's output directory as workload.json (exit status 3 if
 * that fails). */
static int guest_write_back_result(int status) {
  return write_back("/result.json", "workload.json") != 0 ? 3 : status;
}

/* The guest's page table for ranges [addr, addr + size) (each page once): "guest_pages": {"<virtual page>":
 * <physical page>, ...} from /proc/self/pagemap (root sees page frames), which the host applies to the layout
 * map as it applies gem5's page table log to an SE run's: a full-system trace has physical addresses. A page
 * that is not in memory stops the workload (exit 3): every object the layout map names was touched before the
 * run. */
struct guest_range { const void *addr; size_t size; };

static void json_guest_pages(const struct guest_range *ranges, int n) {
  int fd = open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0) {
    fprintf(stderr, "%s: /proc/self/pagemap: %s\n", bench_name, strerror(errno));
    exit(3);
  }
  uint64_t done[64];
  int ndone = 0;
  json_open("guest_pages", '{');
  for (int r = 0; r < n; r++)
    for (uint64_t page = (uintptr_t)ranges[r].addr / 4096;
         page <= ((uintptr_t)ranges[r].addr + ranges[r].size - 1) / 4096; page++) {
      int seen = 0;
      for (int i = 0; i < ndone; i++) seen |= done[i] == page;
      if (seen) continue;
      uint64_t entry = 0, frame_mask = (1ull << 55) - 1;
      if (pread(fd, &entry, sizeof entry, (off_t)(page * sizeof entry)) != sizeof entry || !(entry >> 63) ||
          !(entry & frame_mask)) {
        fprintf(stderr, "%s: /proc/self/pagemap: no page frame for virtual page %#lx\n", bench_name,
                (unsigned long)page * 4096);
        exit(3);
      }
      if (ndone == (int)(sizeof done / sizeof done[0])) {
        fprintf(stderr, "%s: more than %zu pages for the layout map\n", bench_name, sizeof done / sizeof done[0]);
        exit(3);
      }
      done[ndone++] = page;
      char key[32];
      snprintf(key, sizeof key, "%lu", (unsigned long)page * 4096);
      json_u64(key, (entry & frame_mask) * 4096);
    }
  json_close('}');
  close(fd);
}

/* What a workload does in the gem5 guest (its --guest flag): the console quiet and the result handed to the
 * host (guest_result_to_host, guest_write_back_result), and the switch to timing CPUs at the start gate. A
 * workload with a layout map of its own also prints its pages (json_guest_pages). Nonzero: the exit status
 * to stop with. */
static int guest_mode(struct bench_run *run) {
  if (guest_result_to_host()) return 3;
  run->cleanup = guest_write_back_result;
  run->switch_cpu = 1;   /* cohtb_fs.py restores its checkpoint into atomic CPUs: the set-up is fast */
  return 0;
}

#endif
