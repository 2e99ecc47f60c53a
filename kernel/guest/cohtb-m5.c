/* The guest's m5 tool: the gem5 pseudo-instructions /init needs, from the shared m5ops.h (no /dev/mem:
 * gem5 decodes the instructions itself). Project-written in place of gem5's util/m5, which would have to
 * be built from gem5's sources.
 *
 *   cohtb-m5 checkpoint         ask gem5 for a checkpoint (cohtb_fs.py saves it and ends the boot run)
 *   cohtb-m5 exit               end the simulation
 *   cohtb-m5 readfile           copy the host file gem5 was given (--script) to stdout
 *   cohtb-m5 writefile NAME     copy stdin to NAME in gem5's output directory
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/m5ops.h"

static int readfile(void) {
  char buf[4096];
  uint64_t offset = 0, n;
  while ((n = m5_read_file(buf, sizeof buf, offset)) > 0) {
    if (fwrite(buf, 1, n, stdout) != n) return 1;
    offset += n;
  }
  return fflush(stdout) != 0;
}

static int writefile(const char *name) {
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, stdin);
  if (!feof(stdin)) { fprintf(stderr, "cohtb-m5 writefile: more than %zu bytes on stdin\n", sizeof buf); return 1; }
  return m5_write_file(buf, n, 0, name) != n;
}

int main(int argc, char **argv) {
  const char *cmd = argc > 1 ? argv[1] : "";
  if (!strcmp(cmd, "checkpoint")) { m5_checkpoint(0, 0); return 0; }
  if (!strcmp(cmd, "exit")) { m5_exit(0); return 0; }
  if (!strcmp(cmd, "readfile")) return readfile();
  if (!strcmp(cmd, "writefile") && argc == 3) return writefile(argv[2]);
  fprintf(stderr, "usage: cohtb-m5 checkpoint | exit | readfile | writefile NAME\n");
  return 2;
}
