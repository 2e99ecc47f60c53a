/* cohtb-ingest: a gem5 Ruby ProtocolTrace of MESI_Two_Level or CHI (plain or gzip, file or pipe) -> a cohtb
 * event file (docs/event-format.md), streaming, in constant memory.
 *
 *   cohtb-ingest TRACE|- OUT --socket-map S0,S1,...|@FILE [--cores-from-trace] [--chi-l1d V0,V1,...|@FILE]
 *                [--line-size 64] [--source JSON] [--pagemap FILE] [--tee FILE] [--copy-input FILE.gz]
 *
 * In a MESI_Two_Level trace (machine `L1Cache`) a core is an L1 controller (the trace's "version" column). CHI
 * names every controller `Cache`: --chi-l1d gives the version of each core's L1D in core order (the run's
 * controller map), and its transactions are read by chi.c; the other versions (L1Is, socket caches, homes) are
 * counted only. --socket-map gives the socket of every core
 * in core order, inline or in a file of the same comma-separated list (cores the trace never shows are
 * allowed); with --cores-from-trace the file keeps only cores 0 up to the highest the trace shows (the map
 * may then be longer: cohtb's --cores-per-socket passes one for as many cores as could be). The file layout,
 * the kinds and the L1 state codes come from the contract (cohtb_contract.h, generated from the RTL's
 * definitions).
 *
 * Lines of gem5's other debug flags ("<tick>: <object>: message") are skipped, except the x86 TLB's
 * "Mapping <vaddr> to <paddr>", which go to --pagemap as "vaddr paddr" lines (virtual -> physical
 * pages of the workload's set-up, to place its layout map in Ruby's physical addresses).
 *
 * Events are completion-time (docs/gem5.md, "Which transitions are events"): a READ when a load's data
 * arrives, a WRITE when the L1 obtains M, an EVICT when the copy is gone, so they follow the order in which
 * the L2 granted the line. Each record carries the L1 state before its transition (l1_state).
 * --tee also writes every record, as it is made, to FILE (a pipe: the live monitor reads it while gem5 runs);
 * --copy-input keeps the trace it reads, gzip-compressed (a live run's --keep-trace).
 * Prints counts as JSON on stdout. On any error: a message naming the line, exit 1, no output file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "cohtb_contract.h"
#include "ingest.h"

static char tmp_path[4096], map_tmp_path[4096], copy_tmp_path[4096];
static const char *trace_name;

void fail(uint64_t lineno, const char *fmt, ...) {
  va_list ap;
  if (lineno) fprintf(stderr, "cohtb-ingest: %s:%" PRIu64 ": ", trace_name, lineno);
  else fprintf(stderr, "cohtb-ingest: %s: ", trace_name);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  if (tmp_path[0]) unlink(tmp_path);
  if (map_tmp_path[0]) unlink(map_tmp_path);
  if (copy_tmp_path[0]) unlink(copy_tmp_path);
  exit(1);
}

/* Splits a line into whitespace-separated tokens (in place). */
static int tokenize(char *s, char **tok, int max) {
  int n = 0;
  while (*s && n < max) {
    while (*s == ' ' || *s == '\t') s++;
    if (!*s || *s == '\n') break;
    tok[n++] = s;
    while (*s && *s != ' ' && *s != '\t' && *s != '\n') s++;
    if (*s) *s++ = 0;
  }
  return n;
}

static int parse_u64(const char *s, int base, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, base);
  if (errno || end == s) return 0;
  *out = v;
  return end - s;
}

int state_is(const char *s, size_t len, const char *a) { return strlen(a) == len && !memcmp(s, a, len); }

/* The contract's code of an L1 state name (0, "other", for a state the contract does not list). */
static uint16_t state_code(const char *s, size_t len) {
  for (int i = 1; i < COHTB_NUM_L1_STATES; i++)
    if (state_is(s, len, COHTB_L1_STATE_NAMES[i])) return (uint16_t)i;
  return 0;
}

/* Instruction fetches in flight, by (core, line): their IS completions are not READs. A miss is in flight
 * for a few hundred ns, so the set stays small; open addressing with backward-shift deletion. */
#define PENDING_SLOTS (1u << 16)
static struct { uint64_t line; uint32_t core; uint8_t used; } pending[PENDING_SLOTS];
static uint32_t pending_count;
static uint32_t pending_slot(uint32_t core, uint64_t line) {
  uint64_t h = (line * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)core * 0xC2B2AE3D27D4EB4Full);
  uint32_t i = (uint32_t)(h >> 40) & (PENDING_SLOTS - 1);
  while (pending[i].used && !(pending[i].core == core && pending[i].line == line)) i = (i + 1) & (PENDING_SLOTS - 1);
  return i;
}
static int pending_add(uint32_t core, uint64_t line) {
  if (pending_count >= PENDING_SLOTS / 2) return 0;
  uint32_t i = pending_slot(core, line);
  if (!pending[i].used) { pending[i].used = 1; pending[i].core = core; pending[i].line = line; pending_count++; }
  return 1;
}
static int pending_take(uint32_t core, uint64_t line) {
  uint32_t i = pending_slot(core, line);
  if (!pending[i].used) return 0;
  pending[i].used = 0;
  pending_count--;
  for (uint32_t j = (i + 1) & (PENDING_SLOTS - 1); pending[j].used; j = (j + 1) & (PENDING_SLOTS - 1)) {
    uint32_t home = pending_slot(pending[j].core, pending[j].line);  /* re-place entries after the hole */
    if (home != j) { pending[home] = pending[j]; pending[j].used = 0; }
  }
  return 1;
}

static mode_t current_umask(void) {
  mode_t m = umask(0);
  umask(m);
  return m;
}

/* A file beside `final`, under a temporary name kept in tmp (fail() removes it), with the usual mode: renamed
 * to `final` once whole, so nothing half-written is ever seen under that name. */
static int create_temp(const char *final, char *tmp, size_t n) {
  snprintf(tmp, n, "%s.XXXXXX", final);
  int fd = mkstemp(tmp);
  if (fd < 0) { tmp[0] = 0; fail(0, "cannot create %s: %s", final, strerror(errno)); }
  fchmod(fd, 0644 & ~current_umask());
  return fd;
}

static uint8_t socket_of[COHTB_MAX_CORES];
/* Where the records go: straight after the header in the output when the cores are known up front, else
 * (--cores-from-trace) a temporary file copied behind the header once the trace has shown them. */
static FILE *body, *tee_out;
static uint64_t nrec, kept[COHTB_NUM_KINDS], first_tick = UINT64_MAX, last_tick;

void emit(uint64_t lineno, uint64_t tick, uint64_t line, uint32_t core, int kind, uint16_t l1_state) {
  struct cohtb_record r = {.tick = tick, .line = line, .core = (uint16_t)core, .socket = socket_of[core],
                           .kind = (uint8_t)kind, .l1_state = l1_state};
  if (fwrite(&r, sizeof r, 1, body) != 1) fail(lineno, "write failed: %s", strerror(errno));
  if (tee_out && fwrite(&r, sizeof r, 1, tee_out) != 1)
    fail(lineno, "the live monitor stopped reading its records (--tee): %s", strerror(errno));
  kept[kind]++;
  nrec++;
  if (tick < first_tick) first_tick = tick;
  if (tick > last_tick) last_tick = tick;
}

/* Sockets of the first `cores` cores of the map. The caller (cohtb/trace/ingest.py) has checked the map numbers
 * them 0..S-1 with none empty (cohtb/trace/events.py: check_socket_map), and every prefix of the block map it
 * passes with --cores-from-trace does; the event file's reader checks it again. */
static long count_sockets(long cores) {
  long sockets = 0;
  for (long c = 0; c < cores; c++)
    if (socket_of[c] + 1 > sockets) sockets = socket_of[c] + 1;
  return sockets;
}

/* The output, under a temporary name, with its header (docs/event-format.md); num_records is patched at the end. */
static FILE *open_output(const char *out_path, long cores, long sockets, long line_size, const char *source) {
  FILE *out = fdopen(create_temp(out_path, tmp_path, sizeof tmp_path), "wb");
  static char obuf[1 << 20];
  setvbuf(out, obuf, _IOFBF, sizeof obuf);
  size_t src_len = strlen(source);
  size_t hbody = sizeof(struct cohtb_header) + cores + src_len;
  size_t header_len = (hbody + COHTB_HEADER_ALIGN - 1) / COHTB_HEADER_ALIGN * COHTB_HEADER_ALIGN;
  if (header_len > 65535) fail(0, "header too large");
  struct cohtb_header h = {.version = COHTB_VERSION, .header_len = (uint16_t)header_len, .line_size = (uint16_t)line_size,
                           .num_cores = (uint16_t)cores, .num_sockets = (uint16_t)sockets,
                           .record_size = sizeof(struct cohtb_record), .source_len = (uint32_t)src_len};
  memcpy(h.magic, COHTB_MAGIC, sizeof h.magic);
  fwrite(&h, sizeof h, 1, out);
  fwrite(socket_of, 1, cores, out);
  fwrite(source, 1, src_len, out);
  for (size_t i = hbody; i < header_len; i++) fputc(0, out);
  return out;
}

/* A comma-separated list given inline or, as @FILE, in a file (a list of thousands of cores is too long for an
 * argument); the file's trailing newline and spaces dropped. NULL (and a message) if the file cannot be read. */
static const char *list_argument(const char *text) {
  static char out[12 * COHTB_MAX_CORES];   /* each list is parsed before the next is read */
  if (text[0] != '@') return text;
  FILE *f = fopen(text + 1, "r");
  size_t got = f ? fread(out, 1, sizeof out - 1, f) : 0;
  if (!f || ferror(f)) { fprintf(stderr, "cohtb-ingest: cannot read %s: %s\n", text + 1, strerror(errno)); return NULL; }
  fclose(f);
  while (got && (out[got - 1] == '\n' || out[got - 1] == ' ')) got--;
  out[got] = 0;
  return out;
}

int main(int argc, char **argv) {
  static const char usage[] = "usage: cohtb-ingest TRACE|- OUT --socket-map S0,S1,...|@FILE [--cores-from-trace] "
                              "[--chi-l1d V0,V1,...|@FILE] [--line-size 64] [--source JSON] [--pagemap FILE] [--tee FILE] "
                              "[--copy-input FILE.gz]\n";
  if (argc < 3) { fputs(usage, stderr); return 2; }
  trace_name = strcmp(argv[1], "-") ? argv[1] : "<stdin>";
  const char *out_path = argv[2];
  long chi_cores = 0;
  long map_cores = 0, line_size = COHTB_DEFAULT_LINE_SIZE;
  int cores_from_trace = 0;
  const char *source = "{}", *pagemap_path = NULL, *tee_path = NULL, *copy_path = NULL;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--cores-from-trace")) { cores_from_trace = 1; continue; }
    if (i + 1 >= argc) { fprintf(stderr, "cohtb-ingest: %s needs a value\n", argv[i]); return 2; }
    if (!strcmp(argv[i], "--socket-map")) {
      const char *text = list_argument(argv[++i]);
      if (!text) return 2;
      for (char *p = (char *)text, *end; *p; p = end + (*end == ',')) {
        long s = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || s < 0 || s >= COHTB_MAX_SOCKETS || map_cores >= COHTB_MAX_CORES) {
          fprintf(stderr, "cohtb-ingest: --socket-map wants comma-separated socket numbers (0..%d), one per core\n",
                  COHTB_MAX_SOCKETS - 1);
          return 2;
        }
        socket_of[map_cores++] = (uint8_t)s;
      }
    }
    else if (!strcmp(argv[i], "--chi-l1d")) {
      const char *text = list_argument(argv[++i]);
      if (!text) return 2;
      for (char *p = (char *)text, *end; *p; p = end + (*end == ',')) {
        long v = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || v < 0 || chi_cores >= COHTB_MAX_CORES ||
            !chi_map_core((uint64_t)v, (uint32_t)chi_cores)) {
          fprintf(stderr, "cohtb-ingest: --chi-l1d wants comma-separated controller versions, one per core, each once\n");
          return 2;
        }
        chi_cores++;
      }
    }
    else if (!strcmp(argv[i], "--line-size")) line_size = atol(argv[++i]);
    else if (!strcmp(argv[i], "--source")) source = argv[++i];
    else if (!strcmp(argv[i], "--pagemap")) pagemap_path = argv[++i];
    else if (!strcmp(argv[i], "--tee")) tee_path = argv[++i];
    else if (!strcmp(argv[i], "--copy-input")) copy_path = argv[++i];
    else { fprintf(stderr, "cohtb-ingest: unknown argument %s\n", argv[i]); fputs(usage, stderr); return 2; }
  }
  if (map_cores < 1) { fprintf(stderr, "cohtb-ingest: need --socket-map with at least one core\n"); return 2; }
  if (chi_cores && (cores_from_trace || chi_cores != map_cores)) {
    fprintf(stderr, "cohtb-ingest: --chi-l1d needs a --socket-map of its %ld cores (not --cores-from-trace)\n", chi_cores);
    return 2;
  }
  if (line_size < 1 || (line_size & (line_size - 1))) {
    fprintf(stderr, "cohtb-ingest: --line-size must be a power of two\n");
    return 2;
  }
  int line_shift = __builtin_ctzl(line_size);
  chi_set_line_size(line_size);

  /* A named pipe (a live run's) is read as it comes, with plain read()s: gzread waits for a whole chunk,
   * which would hold a live monitor, and a refused line, back by megabytes. gem5 writes plain text there. */
  int pipe_fd = -1;
  struct stat st_in;
  if (strcmp(argv[1], "-") && stat(argv[1], &st_in) == 0 && S_ISFIFO(st_in.st_mode)) {
    pipe_fd = open(argv[1], O_RDONLY);
    if (pipe_fd < 0) fail(0, "cannot open: %s", strerror(errno));
    /* gem5 flushes every line: with the default 64 KiB a pipe fills in ~3 ms of trace. As much as an unprivileged
     * process may have (1 MiB by default), and less if refused: it only spares gem5 waits. */
    for (int size = 1 << 20; size >= 1 << 16 && fcntl(pipe_fd, F_SETPIPE_SZ, size) < 0; size >>= 1) {}
  }
  gzFile in = pipe_fd >= 0 ? NULL : strcmp(argv[1], "-") ? gzopen(argv[1], "rb") : gzdopen(dup(0), "rb");
  if (!in && pipe_fd < 0) fail(0, "cannot open: %s", strerror(errno));
  if (in) gzbuffer(in, 1 << 20);
  FILE *out = NULL;
  long sockets = 0;
  if (cores_from_trace) {
    body = tmpfile();
    if (!body) fail(0, "cannot create a temporary file: %s", strerror(errno));
    static char bbuf[1 << 20];
    setvbuf(body, bbuf, _IOFBF, sizeof bbuf);
  } else {
    sockets = count_sockets(map_cores);
    body = out = open_output(out_path, map_cores, sockets, line_size, source);
  }
  FILE *pagemap = NULL;
  if (pagemap_path) {
    pagemap = fdopen(create_temp(pagemap_path, map_tmp_path, sizeof map_tmp_path), "w");
  }

  if (tee_path) {
    signal(SIGPIPE, SIG_IGN);   /* a reader gone: EPIPE and a message, not a silent death */
    tee_out = fopen(tee_path, "wb");
    if (!tee_out) fail(0, "cannot open --tee %s: %s", tee_path, strerror(errno));
    static char tbuf[1 << 16];
    setvbuf(tee_out, tbuf, _IOFBF, sizeof tbuf);
  }
  gzFile copy = NULL;
  if (copy_path) {
    copy = gzdopen(create_temp(copy_path, copy_tmp_path, sizeof copy_tmp_path), "wb1");
    if (!copy) fail(0, "cannot compress into %s", copy_path);
  }

  /* Large gzread chunks split on newlines in place: gzgets per line costs more than inflating. */
  static char chunk[(1 << 22) + 1];
  size_t have = 0, pos = 0;
  int at_eof = 0;
  char *tok[16];
  uint64_t lineno = 0, l1 = 0, hits = 0, requests = 0, seq = 0, other_machines = 0, stalls = 0, ifetch = 0, ignored = 0;
  uint64_t no_copy = 0, recalls = 0, debug_lines = 0, mappings = 0, max_core = 0, chi = 0;
  for (;;) {
    char *nl = pos < have ? memchr(chunk + pos, '\n', have - pos) : NULL;
    if (!nl) {
      if (at_eof) {
        if (pos >= have) break;
        /* gem5 ends every line: a last line without one is where a copy or a pipe was cut */
        fail(lineno + 1, "the last line has no newline: a truncated trace?");
      } else {
        memmove(chunk, chunk + pos, have - pos);
        have -= pos;
        pos = 0;
        if (have == sizeof chunk - 1) fail(lineno + 1, "line longer than 4 MB: not a ProtocolTrace");
        int got;
        if (pipe_fd >= 0) {
          /* gem5 writes a line at a time (it flushes each). A reader that waits in read() is woken by every
           * write that finds the pipe empty, one wake-up of this process per line for gem5 to pay; one that
           * sleeps while the pipe fills takes thousands of lines per read and gem5 pays none. The monitor
           * counts ~1 ms later than the line was written, which nothing live needs sooner. */
          static const struct timespec fill = {0, 1000000};
          static ssize_t last = -1;
          if (last >= 0 && last < (1 << 16)) nanosleep(&fill, NULL);
          ssize_t r;
          do r = read(pipe_fd, chunk + have, sizeof chunk - 1 - have); while (r < 0 && errno == EINTR);
          last = r;
          if (r < 0) fail(lineno + 1, "read error: %s", strerror(errno));
          got = (int)r;
          if (got == 0) at_eof = 1;
        } else {
          got = gzread(in, chunk + have, (unsigned)(sizeof chunk - 1 - have));
          if (got <= 0) {
            int err;
            const char *why = gzerror(in, &err);
            if (err != Z_OK && err != Z_STREAM_END)
              fail(lineno + 1, "read error (truncated or corrupt compressed trace?): %s", why);
            at_eof = 1;
          }
        }
        if (got < 0) got = 0;
        if (copy && got > 0 && gzwrite(copy, chunk + have, (unsigned)got) != got)
          fail(lineno + 1, "writing %s failed", copy_path);
        have += got;
        continue;
      }
    }
    *nl = 0;
    char *buf = chunk + pos;
    pos = nl - chunk + 1;
    lineno++;
    int n = tokenize(buf, tok, 16);
    if (n == 0) continue;
    uint64_t tick, version;
    size_t t0len = strlen(tok[0]);
    if (n >= 2 && t0len > 1 && tok[0][t0len - 1] == ':' && tok[1][strlen(tok[1]) - 1] == ':') {
      /* "<tick>: <object>: message" from another debug flag */
      uint64_t vaddr, paddr;
      if (n == 6 && !strcmp(tok[2], "Mapping") && !strcmp(tok[4], "to") && parse_u64(tok[3], 16, &vaddr) && parse_u64(tok[5], 16, &paddr)) {
        if (pagemap) fprintf(pagemap, "%#" PRIx64 " %#" PRIx64 "\n", vaddr, paddr);
        mappings++;
      } else {
        debug_lines++;
      }
      continue;
    }
    if (n < 4 || !parse_u64(tok[0], 10, &tick) || tok[0][strspn(tok[0], "0123456789")] || !parse_u64(tok[1], 10, &version))
      fail(lineno, "not a ProtocolTrace line (expected: tick version machine event ...)");
    if (!strncmp(tok[2], "Cache", 5) && n < 16) {   /* n < 16: room in tok[] to split a glued event off */
      /* CHI: tick version Cache Event From>To [0xADDR, line 0xLINE] [comment]. gem5 pads the event to 20
       * columns, so an event of 20 characters or more follows "Cache" with no space: split it off. */
      if (tok[2][5]) {
        for (int j = n; j > 3; j--) tok[j] = tok[j - 1];
        tok[3] = tok[2] + 5;
        n++;
      }
      if (!chi_has_map()) fail(lineno, "a CHI trace (machine 'Cache') needs each core's L1D controller version: cohtb ingest "
                                      "--controllers RUN/manifest.json (cohtb-ingest --chi-l1d)");
      if (n < 8 || strcmp(tok[6], "line") != 0 || tok[5][0] != '[')
        fail(lineno, "malformed Cache transition (expected 'Event From>To [0x.., line 0x..]')");
      const char *arrow = strchr(tok[4], '>');
      if (!arrow) fail(lineno, "malformed state change '%s' (expected From>To)", tok[4]);
      uint64_t line_addr;
      if (parse_u64(tok[7], 16, &line_addr) < 3) fail(lineno, "malformed line address '%s'", tok[7]);
      chi_transition(lineno, tick, version, tok[3], tok[4], (size_t)(arrow - tok[4]), arrow + 1, strlen(arrow + 1),
                     line_addr >> line_shift, n > 8 && strstr(tok[n - 1], "Stall") != NULL);
      chi++;
      continue;
    }
    if (strcmp(tok[2], "L1Cache") != 0) {
      if (!strcmp(tok[2], "Seq")) seq++;
      else other_machines++;
      continue;
    }
    /* L1Cache: tick version L1Cache Event From>To [0xADDR, line 0xLINE] [comment] */
    if (n < 8 || strcmp(tok[6], "line") != 0 || tok[5][0] != '[')
      fail(lineno, "malformed L1Cache transition (expected 'Event From>To [0x.., line 0x..]')");
    l1++;
    if (version >= (uint64_t)map_cores)
      fail(lineno, "L1Cache %" PRIu64 " but the socket map has %ld cores", version, map_cores);
    if (version > max_core) max_core = version;
    if (n > 8 && strstr(tok[n - 1], "Stall")) { stalls++; continue; }
    const char *ev = tok[3], *arrow = strchr(tok[4], '>');
    if (!arrow) fail(lineno, "malformed state change '%s' (expected From>To)", tok[4]);
    const char *from = tok[4], *to = arrow + 1;
    size_t flen = arrow - from, tlen = strlen(to);
    uint64_t line_addr;
    if (parse_u64(tok[7], 16, &line_addr) < 3) fail(lineno, "malformed line address '%s'", tok[7]);
    uint64_t line = line_addr >> line_shift;
    uint32_t core = (uint32_t)version;
    uint16_t st = state_code(from, flen);
    int in_is = state_is(from, flen, "IS") || state_is(from, flen, "IS_I");

    /* The transitions that are events (docs/gem5.md, "Which transitions are events"). */
    if (!strcmp(ev, "Load") || !strcmp(ev, "Store") || !strcmp(ev, "Ifetch")) {
      if (!strcmp(ev, "Store") && state_is(from, flen, "E")) emit(lineno, tick, line, core, COHTB_WRITE, st);  /* silent E->M */
      else if (state_is(from, flen, "NP") || state_is(from, flen, "I") || (!strcmp(ev, "Store") && state_is(from, flen, "S"))) {
        requests++;   /* a miss or upgrade issued: its event is its completion */
        if (!strcmp(ev, "Ifetch")) {
          ifetch++;
          if (!pending_add(core, line)) fail(lineno, "more than %u instruction fetches in flight", PENDING_SLOTS / 2);
        }
      } else hits++;
    } else if (in_is && (!strcmp(ev, "Data_all_Acks") || !strcmp(ev, "DataS_fromL1") || !strcmp(ev, "Data_Exclusive"))) {
      if (!pending_take(core, line)) {
        emit(lineno, tick, line, core, COHTB_READ, st);
        /* IS_I>I: the load used the data but the copy is not kept */
        if (state_is(to, tlen, "I")) emit(lineno, tick, line, core, COHTB_EVICT, st);
      }
    } else if ((!strcmp(ev, "Data_all_Acks") && state_is(from, flen, "IM")) || (!strcmp(ev, "Ack_all") && state_is(from, flen, "SM"))) {
      emit(lineno, tick, line, core, COHTB_WRITE, st);
    } else if ((!strcmp(ev, "L1_Replacement") && state_is(from, flen, "S")) ||
               (!strcmp(ev, "WB_Ack") && (state_is(from, flen, "M_I") || state_is(from, flen, "SINK_WB_ACK")))) {
      emit(lineno, tick, line, core, COHTB_EVICT, st);
    } else if (!strcmp(ev, "Fwd_GETS")) emit(lineno, tick, line, core, COHTB_FWD_GETS, st);
    else if (!strcmp(ev, "Fwd_GETX")) emit(lineno, tick, line, core, COHTB_FWD_GETX, st);
    else if (!strcmp(ev, "Inv")) {
      /* The L2 sends Inv to an E/M owner only when it replaces the line (a GETX there is a Fwd_GETX): a recall,
       * an EVICT the owner did not choose. In S or SM it is a write's invalidation (or a recall of a shared
       * line): gem5's evidence. Elsewhere the core holds no copy. */
      if (state_is(from, flen, "E") || state_is(from, flen, "M")) { emit(lineno, tick, line, core, COHTB_EVICT, st); recalls++; }
      else if (state_is(from, flen, "S") || state_is(from, flen, "SM")) emit(lineno, tick, line, core, COHTB_INV, st);
      else no_copy++;
    } else ignored++;
  }
  if (in) {
    int gzerr;
    const char *msg = gzerror(in, &gzerr);
    if (gzerr != Z_OK && gzerr != Z_STREAM_END) fail(lineno + 1, "read error (truncated or corrupt compressed trace?): %s", msg);
    if (!gzeof(in)) fail(lineno + 1, "read stopped before the end of the input");
    gzclose(in);
  } else {
    close(pipe_fd);
  }
  if (lineno == 0) fail(0, "empty trace (no lines)");
  if (l1 == 0 && chi == 0 && seq == 0 && mappings == 0) fail(0, "no Ruby transitions in %" PRIu64 " lines: not a ProtocolTrace", lineno);

  /* With --cores-from-trace: the cores up to the highest the trace shows; the header, then the records copied. */
  long cores = map_cores;
  if (cores_from_trace) {
    cores = l1 ? (long)max_core + 1 : map_cores;
    sockets = count_sockets(cores);
    out = open_output(out_path, cores, sockets, line_size, source);
    if (fflush(body) || fseek(body, 0, SEEK_SET)) fail(0, "temporary file: %s", strerror(errno));
    static struct cohtb_record recs[4096];
    size_t got;
    while ((got = fread(recs, sizeof recs[0], sizeof recs / sizeof recs[0], body)) > 0)
      if (fwrite(recs, sizeof recs[0], got, out) != got) fail(0, "writing %s failed: %s", out_path, strerror(errno));
    if (ferror(body)) fail(0, "temporary file: %s", strerror(errno));
  }
  if (fflush(out) || fseek(out, offsetof(struct cohtb_header, num_records), SEEK_SET) || fwrite(&nrec, 8, 1, out) != 1 ||
      fflush(out) || fsync(fileno(out)) || fclose(out))
    fail(0, "writing %s failed: %s", out_path, strerror(errno));
  if (pagemap) {
    if (fclose(pagemap) || rename(map_tmp_path, pagemap_path) != 0) fail(0, "writing %s failed: %s", pagemap_path, strerror(errno));
    map_tmp_path[0] = 0;
  }
  if (tee_out && fclose(tee_out) != 0) fail(0, "the live monitor stopped reading its records (--tee): %s", strerror(errno));
  if (copy) {
    if (gzclose(copy) != Z_OK || rename(copy_tmp_path, copy_path) != 0) fail(0, "writing %s failed", copy_path);
    copy_tmp_path[0] = 0;
  }
  if (rename(tmp_path, out_path) != 0) fail(0, "rename to %s failed: %s", out_path, strerror(errno));
  tmp_path[0] = 0;
  printf("{\"lines\": %" PRIu64 ", \"l1_transitions\": %" PRIu64 ", \"events\": %" PRIu64 ", \"read\": %" PRIu64
         ", \"write\": %" PRIu64 ", \"evict\": %" PRIu64 ", \"fwd_gets\": %" PRIu64 ", \"fwd_getx\": %" PRIu64 ", \"inv\": %" PRIu64
         ", \"cores\": %ld, \"sockets\": %ld, \"requests\": %" PRIu64 ", \"hits\": %" PRIu64 ", \"recalls\": %" PRIu64 ", \"inv_without_copy\": %" PRIu64
         ", \"seq\": %" PRIu64 ", \"other_machines\": %" PRIu64 ", \"stalls\": %" PRIu64 ", \"ifetch\": %" PRIu64
         ", \"ignored\": %" PRIu64 ", \"debug_lines\": %" PRIu64 ", \"mappings\": %" PRIu64 ", \"first_tick\": %" PRIu64
         ", \"last_tick\": %" PRIu64,
         lineno, l1, nrec, kept[COHTB_READ], kept[COHTB_WRITE], kept[COHTB_EVICT], kept[COHTB_FWD_GETS], kept[COHTB_FWD_GETX],
         kept[COHTB_INV], cores, sockets, requests, hits, recalls, no_copy, seq, other_machines, stalls, ifetch, ignored, debug_lines,
         mappings, nrec ? first_tick : 0, last_tick);
  if (chi) chi_print_counts(stdout);
  puts("}");
  return 0;
}
