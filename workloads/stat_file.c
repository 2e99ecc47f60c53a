/* The full-system workload: N pinned threads call stat(2) -- or open(2)+close(2) -- on one file on tmpfs,
 * through the real kernel (seed 004's will-it-scale stat2: 20-way stat of one tmpfs file; seed 000's
 * open/close through dget_parent/dput). It runs natively too (any Linux, any file system). Built for the guest
 * by kernel/guest/Makefile (static, into build/guest/), not with the SE workloads: cohtb hands it to each
 * full-system run in the run's payload (cohtb/fs/initramfs.py).
 *
 * The file is named "cohtb-<op>.<pid>" so the project's kernel patch (dcache-report-objects.patch) prints
 * where its dentry, its directory's dentry and its inode are; on a stock kernel nothing is printed.
 *
 * --dentry-line-offset K (guest): a 184-byte dentry (hybrid184) starts at any 8-byte offset of a line, and
 * which lookup fields share d_lockref's line depends on it (a 192-byte one starts a line). Pads
 * cohtb-pad.<pid>.<i> are made until the kernel's report says the next object of the CPU's slab starts at K
 * (slab objects are handed out in order); removed at the end. --pad-files N makes N pads first, so the file's
 * dentry comes N slab objects later: another address, another home socket for its lines (a source of
 * variation between repetitions).
 *
 * --guest: printk off the serial console (klogctl), the kernel's cohtb-object lines for the file put into the
 * JSON, and the JSON written back to the host with m5 writefile (workload.json) instead of stdout: every extra
 * process would cost milliseconds of simulated time. Once every thread waits at the start gate, m5 switchcpu
 * (cohtb_fs.py: atomic CPUs run the set-up, timing CPUs and Ruby the warm-up and window). */
#include "common/guest.h"
#include "common/kernel_report.h"

#include <sched.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static const char testcase_description[] = "every thread stat(2)s, or opens and closes, one file through the real kernel";

static const char *ops_kinds[] = {"stat", "open_close", NULL};
static const char *line_offsets[] = {"any", "0", "8", "16", "24", "32", "40", "48", "56", NULL};
#define TESTCASE_FLAGS(X)                                                                                                   \
  X(op, "op", "what each operation is", ops_kinds, "stat")                                                                  \
  X(dir, "dir", "directory of the file (tmpfs in the guest)", FLAG_TEXT, "/tmp")                                            \
  X(dentry_line_offset, "dentry-line-offset", "the file's dentry starts this many bytes into a cache line (guest only)", line_offsets, "any") \
  X(pad_files, "pad-files", "create this many other files first: the file's dentry comes that many slab objects later", NULL, "0") \
  X(intruder_period_us, "intruder-period-us", "one more thread lists the file's directory (getdents64, as ls does) every P microseconds (0: none)", NULL, "0") \
  X(intruder_listings, "intruder-listings", "how many times the intruder lists the directory (0: every period until the end)", NULL, "0") \
  X(idle_intruder, "idle-intruder", "the intruder runs on its CPU but never lists: the control of a run that lists, the same threads without a listing", NULL, NULL) \
  X(own_files, "own-files", "each thread its own file in the directory, and its own descriptor table (no shared file_lock): only the directory is shared", NULL, NULL) \
  X(watch_dir, "watch-dir", "an inotify watch on the directory (IN_ATTRIB): every open and close of a file in it then takes the directory dentry's reference (fsnotify_parent: dget_parent, dput)", NULL, NULL) \
  X(guest, "guest", "in the gem5 guest: quiet console, the kernel's object lines in the JSON, JSON via m5 writefile", NULL, NULL)

BENCH_TESTCASE("stat_file", "system calls (stat, or open+close pairs)", TESTCASE_FLAGS)
static char path[256];
static char thread_path[MAX_THREADS][256];   /* --own-files: thread i's file (thread 0's is `path`) */
static int guest, pads, own_files, watch_fd = -1;
static int open_close;
static uint64_t failures[MAX_THREADS][8] __aligned_line;
static uint64_t lister_period_ns, max_listings, listings, listing_failures;
static volatile int stop_lister;
static int lister_idle;

/* The intruder of seed 004's collapse: `ls` of the directory now and then. getdents64 on tmpfs (6.6 on) is
 * offset_readdir, which takes each child dentry's d_lock (find_positive_dentry: spin_lock_nested, dget_dlock)
 * and puts the reference it took with dput: the file's d_lock held for a moment by a CPU that does not stat.
 * --intruder-listings N stops it after N listings, as the seed typed `ls` a few times: whether a collapse
 * lasts is seen after the last. --idle-intruder keeps it on its CPU without a listing: the control, whose
 * threads are those of the run that lists, and whose listings the report counts as 0 to the end. */
static void lister(int id) {
  (void)id;
  char buf[4096];
  uint64_t next = now_ns() + lister_period_ns;
  while (!READ_ONCE(stop_lister)) {
    /* after its last listing it stays, idle, until the end: its CPU does the same in every arm */
    if (lister_idle || now_ns() < next || (max_listings && listings >= max_listings)) { cpu_relax(); continue; }
    int fd = open(flag_text(dir), O_RDONLY | O_DIRECTORY);
    long got = 0;
    while (fd >= 0 && (got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {}
    if (fd < 0 || got < 0) listing_failures++;
    if (fd >= 0) close(fd);
    listings++;
    next += lister_period_ns;
  }
}

/* The benchmark's files: `path`, the first n-1 threads' own files after it, and the pads. */
static void remove_files(int n) {
  unlink(path);
  for (int i = 1; own_files && i < n; i++) unlink(thread_path[i]);
  unlink_pads(flag_text(dir), pads);
}

static void testcase(int id) {
  struct stat st;
  const char *mine = own_files ? thread_path[id] : path;
  /* Threads share one descriptor table, whose file_lock every open and close takes: with --own-files each
   * thread unshares it (a copy of a few descriptors, in the warm-up), as the seed's AIM7 processes had theirs. */
  if (own_files && unshare(CLONE_FILES) != 0) failures[id][0]++;
  for (struct bench_loop l = bench_loop(&run, id); bench_next(&l);) {
    if (open_close) {
      int fd = open(mine, O_RDONLY);   /* path_openat: the RCU walk, do_dentry_open, fsnotify_parent */
      if (fd < 0 || close(fd) != 0) failures[id][0]++;   /* __fput: dput, fsnotify_parent */
    } else if (stat(mine, &st) != 0) {   /* vfs_fstatat: the RCU walk, vfs_getattr, dput */
      failures[id][0]++;
    }
  }
}

static int testcase_prepare(void) {
  guest = flag_on(guest);
  if (guest && guest_mode(&run)) return 3;
  open_close = flag_is(op, "open_close");
  snprintf(path, sizeof path, "%s/cohtb-%s.%d", flag_text(dir), flag_text(op), (int)getpid());
  int want = flag_is(dentry_line_offset, "any") ? -1 : atoi(flag_text(dentry_line_offset));
  int extra_files = (int)flag_num(pad_files);
  if (want >= 0 && extra_files) usage("--pad-files and --dentry-line-offset both place the dentry");
  if (want >= 0 && (pads = pad_dentries(flag_text(dir), want)) < 0) return 3;
  if (extra_files && (pads = pad_files(flag_text(dir), extra_files)) < 0) return 3;
  int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);   /* shmem_mknod -> d_instantiate: the kernel reports it */
  if (fd < 0) { fprintf(stderr, "stat_file: cannot create %s: %s\n", path, strerror(errno)); return 3; }
  close(fd);
  uint64_t dentry_size = 0, dentry = want >= 0 ? reported_dentry(strrchr(path, '/') + 1, &dentry_size) : 0;
  if (want >= 0 && (!dentry || dentry % 64 != (uint64_t)want)) {
    fprintf(stderr, "stat_file: --dentry-line-offset %d: the file's dentry came at %#lx (offset %lu), not in the "
                    "slab slot after the last pad\n", want, (unsigned long)dentry, (unsigned long)(dentry % 64));
    remove_files(1);
    return 3;
  }
  own_files = flag_on(own_files);
  for (int i = 0; i < run.threads; i++) {
    snprintf(thread_path[i], sizeof thread_path[i], own_files && i ? "%s.t%d" : "%s", path, i);
    if (!own_files || !i) continue;
    if ((fd = open(thread_path[i], O_CREAT | O_EXCL | O_RDWR, 0600)) < 0) {
      fprintf(stderr, "stat_file: cannot create %s: %s\n", thread_path[i], strerror(errno));
      remove_files(i);
      return 3;
    }
    close(fd);
  }
  /* A watch for an event the benchmark never causes: the directory's children are marked as watched, so
   * fsnotify_parent takes the parent's reference on every open and close, and then finds nothing to report. */
  if (flag_on(watch_dir) && ((watch_fd = inotify_init1(IN_CLOEXEC)) < 0 ||
                             inotify_add_watch(watch_fd, flag_text(dir), IN_ATTRIB) < 0)) {
    fprintf(stderr, "stat_file: --watch-dir %s: %s\n", flag_text(dir), strerror(errno));
    if (watch_fd >= 0) close(watch_fd);
    remove_files(run.threads);
    return 3;
  }

  /* Thread 0 (this one) moves to CPU 0 and then allows every CPU again: the threads it creates inherit the
   * full mask, start on idle CPUs and move to their own as their first act (bench.h). Neither a thread that
   * spins at the start gate on this thread's CPU (which holds it until the scheduler's tick, 10 ms in the
   * guest) nor one that inherited CPU 0 alone and waits for it. (The pads and the file come first, from the
   * slab of the CPU the shell started this on: CPU 0's holds objects freed at boot, handed out last-freed
   * first, and a pad's successor is no longer the next object in memory.) */
  cpu_set_t every;
  if (sched_getaffinity(0, sizeof every, &every) == 0 && pin_thread(pthread_self(), 0))
    sched_setaffinity(0, sizeof every, &every);
  lister_period_ns = flag_num(intruder_period_us) * 1000;
  max_listings = flag_num(intruder_listings);
  if (max_listings && !lister_period_ns) usage("--intruder-listings needs --intruder-period-us");
  lister_idle = flag_on(idle_intruder);
  if (lister_idle && !lister_period_ns) usage("--idle-intruder needs --intruder-period-us (the lister it keeps idle)");
  if (lister_period_ns) { run.intruder = lister; run.stop_intruder = &stop_lister; }
  return 0;
}

static int testcase_report(void) {
  uint64_t failed = 0;
  for (int i = 0; i < run.threads; i++) failed += failures[i][0];
  if (watch_fd >= 0) close(watch_fd);
  remove_files(run.threads);
  json_u64("own_files", (uint64_t)own_files);
  json_u64("watched_dir", watch_fd >= 0);
  json_str("path", path);
  json_u64("pad_dentries", (uint64_t)pads);
  json_u64("failures", failed);
  json_u64("listings", listings);
  json_u64("listing_failures", listing_failures);
  failed += listing_failures;
  json_str("invariants", failed ? "violated" : "ok");
  if (guest) json_kernel_objects(strrchr(path, '/') + 1);
  return failed ? 1 : 0;
}
