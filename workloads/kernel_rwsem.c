/* Seed 002 on the kernel's own rwsem (full system, kernel variant rspin): even threads read(2)
 * /proc/cohtb-rwsem, which takes the kernel's benchmark rwsem for reading around a short critical
 * section, odd threads write(2) it, which takes it for writing (kernel/patches/rwsem-bench.patch);
 * each call does --pairs lock/unlock pairs, so the lock, not the system call, is the operation's bulk.
 * --policy spin turns the kernel's reader optimistic spinning on (rwsem-reader-spin.patch's switch),
 * sleep turns it off: 6.12's rwsem, whose readers queue and sleep at once on a writer-owned lock.
 * --guest: each thread asks the benchmark's file where its task_struct and kernel stack are (the patch's
 * ioctl, in the warm-up), and the kernel's lines go into the JSON, so the host names the trace's lines on
 * them (a sleeping reader's state, wake queue and stack). */
#define BENCH_THREADS_HELP "threads; even ids read, odd ids write (thread 0 is the main thread)"
#include "common/guest.h"
#include "common/kernel_report.h"

#include <sys/ioctl.h>

static const char testcase_description[] = "readers and writers take the kernel's benchmark rwsem through /proc/cohtb-rwsem";

#define BENCH_FILE "/proc/cohtb-rwsem"
#define SWITCH "/sys/module/kernel/parameters/rwsem_reader_spin"
#define REPORT 0   /* a copy of the patch's COHTB_RWSEM_REPORT: the calling thread's objects into the kernel log */

static const char *policies[] = {"sleep", "spin", NULL};
static const char *layouts[] = {"shared", NULL};
#define TESTCASE_FLAGS(X)                                                                                     \
  X(policy, "policy", "what the kernel's readers do on a writer-owned rwsem (its reader-spinning switch)", policies, "sleep") \
  X(layout, "layout", "the kernel's struct rw_semaphore, as it is", layouts, "shared")                       \
  X(pairs, "pairs", "lock/unlock pairs per system call (one operation)", NULL, "16")                          \
  X(guest, "guest", "in the gem5 guest: JSON via m5 writefile", NULL, NULL)

BENCH_TESTCASE("kernel_rwsem", "lock/unlock pairs", TESTCASE_FLAGS)
static int fds[MAX_THREADS];
static char buf[4096];   /* the calls' buffer: its length is the number of pairs; the kernel never touches it */
static size_t pairs;
static struct { uint64_t reads, writes, failures, unreported; } __aligned_line stats[MAX_THREADS];

static void testcase(int id) {
  int writer = id & 1;
  /* its first act after the gate, in the warm-up: a printk, before the window opens */
  if (flag_on(guest) && ioctl(fds[id], REPORT, (unsigned long)id) != 0) stats[id].unreported++;
  for (struct bench_loop l = bench_loop(&run, id); bench_next(&l);) {
    if ((writer ? write(fds[id], buf, pairs) : read(fds[id], buf, pairs)) < 0) stats[id].failures++;
    else if (writer) stats[id].writes++;
    else stats[id].reads++;
  }
}

static int testcase_prepare(void) {
  if (flag_on(guest) && guest_mode(&run)) return 3;
  pairs = flag_num(pairs);
  if (pairs < 1 || pairs > sizeof buf) usage("--pairs must be 1 to %zu", sizeof buf);
  int fd = open(SWITCH, O_WRONLY);
  if (fd < 0) {
    fprintf(stderr, "kernel_rwsem: %s: %s%s\n", SWITCH, strerror(errno),
            errno == ENOENT ? " (a kernel without cohtb's rwsem-reader-spin patch: variant rspin has it)" : "");
    return 3;
  }
  ssize_t wrote = write(fd, flag_is(policy, "spin") ? "1" : "0", 1);
  int write_errno = errno;
  close(fd);
  if (wrote != 1) {
    fprintf(stderr, "kernel_rwsem: %s: %s\n", SWITCH, wrote < 0 ? strerror(write_errno) : "short write");
    return 3;
  }
  for (int i = 0; i < run.threads; i++)   /* a descriptor each: no thread waits on another's file position */
    if ((fds[i] = open(BENCH_FILE, O_RDWR)) < 0) {
      fprintf(stderr, "kernel_rwsem: %s: %s%s\n", BENCH_FILE, strerror(errno),
              errno == ENOENT ? " (a kernel without cohtb's rwsem-bench patch: variant rspin has it)" : "");
      while (i-- > 0) close(fds[i]);
      return 3;
    }
  return 0;
}

static int testcase_report(void) {
  uint64_t reads = 0, writes = 0, failures = 0, unreported = 0;
  for (int i = 0; i < run.threads; i++) {
    reads += stats[i].reads; writes += stats[i].writes; failures += stats[i].failures;
    unreported += stats[i].unreported;
    close(fds[i]);
  }
  if (flag_on(guest)) json_kernel_objects("kernel_rwsem");
  json_u64("unreported_threads", unreported);
  json_u64("reads", reads);
  json_u64("writes", writes);
  json_u64("pairs_per_op", pairs);
  json_u64("failures", failures);
  json_str("invariants", failures ? "violated" : "ok");
  return failures ? 1 : 0;
}
