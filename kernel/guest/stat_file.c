/* The full-system benchmark: N pinned threads call stat(2) -- or open(2)+close(2) -- on one file on
 * tmpfs, through the real kernel (seed 004's will-it-scale stat2: 20-way stat of one tmpfs file;
 * seed 000's open/close through dget_parent/dput). It runs natively too (any Linux, any file system).
 *
 * The measurement is the SE workloads' harness (common/bench.h): warm-up, window, per-thread ops per
 * interval, seeded start skew, m5 work-begin/end around the window with --m5. The file is named
 * "cohtb-<op>.<pid>" so the project's kernel patch (dcache-report-objects.patch) prints where its
 * dentry, its directory's dentry and its inode are; on a stock kernel nothing is printed.
 *
 *   --op   stat | open_close   what each operation is
 *   --dir  D                   where the file is created (default /tmp: tmpfs in the guest)
 */
#include "common/bench.h"   /* first: it defines _GNU_SOURCE */

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ops_kinds[] = {"stat", "open_close", NULL};
static struct flag flags[] = {
    FLAG_THREADS,
    FLAG_MEASURE("system calls (stat, or open+close pairs)"),
    {"op", "what each operation is", ops_kinds, "stat"},
    {"dir", "directory of the file (tmpfs in the guest)", NULL, "/tmp"},
    FLAG_M5,
};
enum { F_THREADS, F_OPS, F_WARMUP, F_WINDOW, F_INTERVAL, F_SEED, F_SKEW, F_OP, F_DIR, F_M5 };

static struct bench_run run;
static char path[256];
static int open_close;
static uint64_t failures[MAX_THREADS][8] __aligned_line;

static void worker(int id, void *arg) {
  (void)arg;
  struct stat st;
  for (struct bench_loop l = bench_loop(&run, id); bench_next(&l);) {
    if (open_close) {
      int fd = open(path, O_RDONLY);   /* path_openat: the RCU walk, do_dentry_open, fsnotify_parent */
      if (fd < 0 || close(fd) != 0) failures[id][0]++;   /* __fput: dput, fsnotify_parent */
    } else if (stat(path, &st) != 0) {   /* vfs_fstatat: the RCU walk, vfs_getattr, dput */
      failures[id][0]++;
    }
  }
}

int main(int argc, char **argv) {
  run = bench_start(argc, argv, flags, NFLAGS(flags), F_THREADS, F_OPS, F_M5);
  open_close = !strcmp(flags[F_OP].value, "open_close");
  snprintf(path, sizeof path, "%s/cohtb-%s.%d", flags[F_DIR].value, flags[F_OP].value, (int)getpid());
  int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);   /* shmem_mknod -> d_instantiate: the kernel reports it */
  if (fd < 0) { fprintf(stderr, "stat_file: cannot create %s: %s\n", path, strerror(errno)); return 3; }
  close(fd);

  run_threads(&run, worker, NULL, 0, NULL, NULL);

  uint64_t failed = 0;
  for (int i = 0; i < run.threads; i++) failed += failures[i][0];
  unlink(path);
  json_begin();
  json_run("stat_file", &run, flags, NFLAGS(flags));
  json_str("path", path);
  json_u64("failures", failed);
  json_str("invariants", failed ? "violated" : "ok");
  json_end();
  return failed ? 1 : 0;
}
