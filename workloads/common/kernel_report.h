/* The kernel's reports of where a file's objects are (the "cohtb-object" lines of kernel/patches/
 * dcache-report-objects.patch, in the kernel log), and files that place the next dentry in a chosen slab slot:
 * what stat_file needs in the guest to name the dentry it works on. */
#ifndef COHTB_KERNEL_REPORT_H
#define COHTB_KERNEL_REPORT_H

#include "guest.h"

#include <sys/klog.h>

/* The kernel log's "cohtb-object <name> ..." lines for this file, as a JSON array of strings. */
static void json_kernel_objects(const char *name) {
  static char log[1 << 20];
  int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof log - 1);
  json_open("kernel_objects", '[');
  for (char *line = log, *end; n > 0 && line < log + n; line = end + 1) {
    end = memchr(line, '\n', log + n - line);
    if (!end) end = log + n;
    *end = 0;
    char *at = strstr(line, "cohtb-object ");
    if (at && !strncmp(at + 13, name, strlen(name)) && at[13 + strlen(name)] == ' ') { json_key(NULL); printf("\"%s\"", at); }
  }
  json_close(']');
}

/* The address and size of the dentry the kernel reported for the file `name` ("cohtb-object <name> dentry file
 * <hex address> <size>"); 0 if none. */
static uint64_t reported_dentry(const char *name, uint64_t *size) {
  static char log[1 << 20];
  char key[300];
  snprintf(key, sizeof key, "cohtb-object %s dentry file ", name);
  int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof log - 1);
  if (n <= 0) return 0;
  log[n] = 0;
  uint64_t addr = 0;
  for (char *at = strstr(log, key); at; at = strstr(at + 1, key))
    if (sscanf(at + strlen(key), "%lx %lu", &addr, size) != 2) addr = 0;   /* the last report wins */
  return addr;
}

static void unlink_pads(const char *dir, int pads) {
  for (int i = 0; i < pads; i++) {
    char pad[300];
    snprintf(pad, sizeof pad, "%s/cohtb-pad.%d.%d", dir, (int)getpid(), i);
    unlink(pad);
  }
}

/* Creates pad i (cohtb-pad.<pid>.<i>, its name in `pad`); on failure says why, removes pads 0..i-1, returns 0. */
static int create_pad(const char *dir, int i, char *pad, size_t size) {
  snprintf(pad, size, "%s/cohtb-pad.%d.%d", dir, (int)getpid(), i);
  int fd = open(pad, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    fprintf(stderr, "%s: cannot create %s: %s\n", bench_name, pad, strerror(errno));
    unlink_pads(dir, i);
    return 0;
  }
  close(fd);
  return 1;
}

/* Creates the files cohtb-pad.<pid>.<0..n-1>; returns n, or -1. */
static int pad_files(const char *dir, int n) {
  char pad[300];
  for (int i = 0; i < n; i++)
    if (!create_pad(dir, i, pad, sizeof pad)) return -1;
  return n;
}

/* Creates cohtb-pad.<pid>.<i> files until the next dentry of this CPU's slab starts `want` bytes into a line;
 * returns how many, or -1. */
static int pad_dentries(const char *dir, int want) {
  for (int i = 0; i < 64; i++) {
    char pad[300];
    uint64_t size = 0;
    if (!create_pad(dir, i, pad, sizeof pad)) return -1;
    uint64_t addr = reported_dentry(strrchr(pad, '/') + 1, &size);
    if (!addr) {
      fprintf(stderr, "%s: --dentry-line-offset: the kernel reports no dentry address (it needs cohtb's "
                      "dcache-report-objects patch)\n", bench_name);
      unlink_pads(dir, i + 1);
      return -1;
    }
    if ((addr + size) % 64 == (uint64_t)want) return i + 1;
  }
  fprintf(stderr, "%s: --dentry-line-offset %d: no slab slot there after 64 dentries\n", bench_name, want);
  unlink_pads(dir, 64);
  return -1;
}

#endif
