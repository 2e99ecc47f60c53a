/* cohtb-ingest: a gem5 Ruby MESI_Two_Level ProtocolTrace (plain or gzip, file or pipe) -> a cohtb event
 * file (docs/event-format.md), streaming, in constant memory.
 *
 *   cohtb-ingest TRACE|- OUT --socket-map S0,S1,... [--line-size 64] [--source JSON] [--pagemap FILE]
 *
 * --socket-map gives the socket of each core (L1 controller version), in core order: the machine's own
 * map, which cohtb takes from the run's manifest. The file layout and the kinds come from the contract
 * (cohtb_contract.h, generated from the RTL's definitions).
 *
 * Lines of gem5's other debug flags ("<tick>: <object>: message") are skipped, except the x86 TLB's
 * "Mapping <vaddr> to <paddr>", which go to --pagemap as "vaddr paddr" lines (virtual -> physical
 * pages of the workload's set-up, to place its layout map in Ruby's physical addresses).
 *
 * Kept, from L1Cache transitions (docs/event-format.md): Load in NP/I -> READ; Store in NP/I/S -> WRITE;
 * L1_Replacement in S/E/M -> EVICT; and gem5's evidence at the old holder: Fwd_GETS, Fwd_GETX, Inv.
 * Dropped: hits, Seq lines, L2/directory transitions, instruction fetches, stalled (retried) transitions.
 * Prints counts as JSON on stdout. On any error: a message naming the line, exit 1, no output file. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cohtb_contract.h"

static char tmp_path[4096], map_tmp_path[4096];
static const char *trace_name;

static void fail(uint64_t lineno, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void fail(uint64_t lineno, const char *fmt, ...) {
  va_list ap;
  if (lineno) fprintf(stderr, "cohtb-ingest: %s:%" PRIu64 ": ", trace_name, lineno);
  else fprintf(stderr, "cohtb-ingest: %s: ", trace_name);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  if (tmp_path[0]) unlink(tmp_path);
  if (map_tmp_path[0]) unlink(map_tmp_path);
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

static int state_is(const char *s, size_t len, const char *a) { return strlen(a) == len && !memcmp(s, a, len); }

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: cohtb-ingest TRACE|- OUT --socket-map S0,S1,... [--line-size %d] [--source JSON] [--pagemap FILE]\n",
            COHTB_DEFAULT_LINE_SIZE);
    return 2;
  }
  trace_name = strcmp(argv[1], "-") ? argv[1] : "<stdin>";
  const char *out_path = argv[2];
  static uint8_t socket_of[COHTB_MAX_CORES];
  long cores = 0, sockets = 0, line_size = COHTB_DEFAULT_LINE_SIZE;
  const char *source = "{}", *pagemap_path = NULL;
  for (int i = 3; i < argc; i++) {
    if (i + 1 >= argc) { fprintf(stderr, "cohtb-ingest: %s needs a value\n", argv[i]); return 2; }
    if (!strcmp(argv[i], "--socket-map")) {
      for (char *p = argv[++i], *end; *p; p = end + (*end == ',')) {
        long s = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || s < 0 || s >= COHTB_MAX_SOCKETS || cores >= COHTB_MAX_CORES) {
          fprintf(stderr, "cohtb-ingest: --socket-map wants comma-separated socket numbers, one per core\n");
          return 2;
        }
        socket_of[cores++] = (uint8_t)s;
        if (s + 1 > sockets) sockets = s + 1;
      }
    }
    else if (!strcmp(argv[i], "--line-size")) line_size = atol(argv[++i]);
    else if (!strcmp(argv[i], "--source")) source = argv[++i];
    else if (!strcmp(argv[i], "--pagemap")) pagemap_path = argv[++i];
    else { fprintf(stderr, "cohtb-ingest: unknown argument %s\n", argv[i]); return 2; }
  }
  if (cores < 1 || line_size < 1 || (line_size & (line_size - 1))) {
    fprintf(stderr, "cohtb-ingest: need --socket-map with at least one core, and a power-of-two --line-size\n");
    return 2;
  }
  int line_shift = __builtin_ctzl(line_size);

  gzFile in = strcmp(argv[1], "-") ? gzopen(argv[1], "rb") : gzdopen(dup(0), "rb");
  if (!in) fail(0, "cannot open: %s", strerror(errno));
  gzbuffer(in, 1 << 20);

  snprintf(tmp_path, sizeof tmp_path, "%s.XXXXXX", out_path);
  int fd = mkstemp(tmp_path);
  if (fd < 0) { tmp_path[0] = 0; fail(0, "cannot create %s: %s", out_path, strerror(errno)); }
  FILE *out = fdopen(fd, "wb");
  FILE *pagemap = NULL;
  if (pagemap_path) {
    snprintf(map_tmp_path, sizeof map_tmp_path, "%s.XXXXXX", pagemap_path);
    int mfd = mkstemp(map_tmp_path);
    if (mfd < 0) { map_tmp_path[0] = 0; fail(0, "cannot create %s: %s", pagemap_path, strerror(errno)); }
    pagemap = fdopen(mfd, "w");
  }
  static char obuf[1 << 20];
  setvbuf(out, obuf, _IOFBF, sizeof obuf);

  /* Header (docs/event-format.md); num_records is patched at the end. */
  size_t src_len = strlen(source);
  size_t body = sizeof(struct cohtb_header) + cores + src_len;
  size_t header_len = (body + COHTB_HEADER_ALIGN - 1) / COHTB_HEADER_ALIGN * COHTB_HEADER_ALIGN;
  if (header_len > 65535) fail(0, "header too large");
  struct cohtb_header h = {.version = COHTB_VERSION, .header_len = (uint16_t)header_len, .line_size = (uint16_t)line_size,
                           .num_cores = (uint16_t)cores, .num_sockets = (uint16_t)sockets,
                           .record_size = sizeof(struct cohtb_record), .source_len = (uint32_t)src_len};
  memcpy(h.magic, COHTB_MAGIC, sizeof h.magic);
  uint64_t nrec = 0;
  fwrite(&h, sizeof h, 1, out);
  fwrite(socket_of, 1, cores, out);
  fwrite(source, 1, src_len, out);
  for (size_t i = body; i < header_len; i++) fputc(0, out);

  /* Large gzread chunks split on newlines in place: gzgets per line costs more than inflating. */
  static char chunk[(1 << 22) + 1];
  size_t have = 0, pos = 0;
  int at_eof = 0;
  char *tok[16];
  uint64_t lineno = 0, l1 = 0, kept[COHTB_NUM_KINDS] = {0}, hits = 0, seq = 0, other_machines = 0, stalls = 0, ifetch = 0, ignored = 0;
  uint64_t first_tick = UINT64_MAX, last_tick = 0, debug_lines = 0, mappings = 0;
  for (;;) {
    char *nl = pos < have ? memchr(chunk + pos, '\n', have - pos) : NULL;
    if (!nl) {
      if (at_eof) {
        if (pos >= have) break;
        nl = chunk + have;   /* a last line without newline */
      } else {
        memmove(chunk, chunk + pos, have - pos);
        have -= pos;
        pos = 0;
        if (have == sizeof chunk - 1) fail(lineno + 1, "line longer than 4 MB: not a ProtocolTrace");
        int got = gzread(in, chunk + have, (unsigned)(sizeof chunk - 1 - have));
        if (got <= 0) {
          int err;
          const char *why = gzerror(in, &err);
          if (err != Z_OK && err != Z_STREAM_END)
            fail(lineno + 1, "read error (truncated or corrupt compressed trace?): %s", why);
          at_eof = 1;
        }
        if (got < 0) got = 0;
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
    if (strcmp(tok[2], "L1Cache") != 0) {
      if (!strcmp(tok[2], "Seq")) seq++;
      else other_machines++;
      continue;
    }
    /* L1Cache: tick version L1Cache Event From>To [0xADDR, line 0xLINE] [comment] */
    if (n < 8 || strcmp(tok[6], "line") != 0 || tok[5][0] != '[')
      fail(lineno, "malformed L1Cache transition (expected 'Event From>To [0x.., line 0x..]')");
    l1++;
    if (version >= (uint64_t)cores) fail(lineno, "L1Cache %" PRIu64 " but the socket map has %ld cores", version, cores);
    if (n > 8 && strstr(tok[n - 1], "Stall")) { stalls++; continue; }
    const char *ev = tok[3], *arrow = strchr(tok[4], '>');
    if (!arrow) fail(lineno, "malformed state change '%s' (expected From>To)", tok[4]);
    const char *from = tok[4];
    size_t flen = arrow - from;
    uint64_t line_addr;
    if (parse_u64(tok[7], 16, &line_addr) < 3) fail(lineno, "malformed line address '%s'", tok[7]);
    int kind = -1;
    if (!strcmp(ev, "Load")) {
      if (state_is(from, flen, "NP") || state_is(from, flen, "I")) kind = COHTB_READ; else hits++;
    } else if (!strcmp(ev, "Store")) {
      if (state_is(from, flen, "NP") || state_is(from, flen, "I") || state_is(from, flen, "S")) kind = COHTB_WRITE; else hits++;
    } else if (!strcmp(ev, "L1_Replacement")) {
      if (state_is(from, flen, "S") || state_is(from, flen, "E") || state_is(from, flen, "M")) kind = COHTB_EVICT; else ignored++;
    } else if (!strcmp(ev, "Fwd_GETS")) kind = COHTB_FWD_GETS;
    else if (!strcmp(ev, "Fwd_GETX")) kind = COHTB_FWD_GETX;
    else if (!strcmp(ev, "Inv")) kind = COHTB_INV;
    else if (!strcmp(ev, "Ifetch")) ifetch++;
    else ignored++;
    if (kind < 0) continue;
    struct cohtb_record r = {tick, line_addr >> line_shift, (uint16_t)version, socket_of[version], (uint8_t)kind, 0};
    if (fwrite(&r, sizeof r, 1, out) != 1) fail(lineno, "write failed: %s", strerror(errno));
    kept[kind]++;
    nrec++;
    if (tick < first_tick) first_tick = tick;
    if (tick > last_tick) last_tick = tick;
  }
  int gzerr;
  const char *msg = gzerror(in, &gzerr);
  if (gzerr != Z_OK && gzerr != Z_STREAM_END) fail(lineno + 1, "read error (truncated or corrupt compressed trace?): %s", msg);
  if (!gzeof(in)) fail(lineno + 1, "read stopped before the end of the input");
  gzclose(in);
  if (lineno > 0 && l1 == 0 && seq == 0 && mappings == 0) fail(0, "no Ruby transitions in %" PRIu64 " lines: not a ProtocolTrace", lineno);

  if (fflush(out) || fseek(out, offsetof(struct cohtb_header, num_records), SEEK_SET) || fwrite(&nrec, 8, 1, out) != 1 || fclose(out))
    fail(0, "writing %s failed: %s", out_path, strerror(errno));
  if (pagemap) {
    if (fclose(pagemap) || rename(map_tmp_path, pagemap_path) != 0) fail(0, "writing %s failed: %s", pagemap_path, strerror(errno));
    map_tmp_path[0] = 0;
  }
  if (rename(tmp_path, out_path) != 0) fail(0, "rename to %s failed: %s", out_path, strerror(errno));
  tmp_path[0] = 0;
  printf("{\"lines\": %" PRIu64 ", \"l1_transitions\": %" PRIu64 ", \"events\": %" PRIu64 ", \"read\": %" PRIu64
         ", \"write\": %" PRIu64 ", \"evict\": %" PRIu64 ", \"fwd_gets\": %" PRIu64 ", \"fwd_getx\": %" PRIu64 ", \"inv\": %" PRIu64
         ", \"hits\": %" PRIu64 ", \"seq\": %" PRIu64 ", \"other_machines\": %" PRIu64 ", \"stalls\": %" PRIu64
         ", \"ifetch\": %" PRIu64 ", \"ignored\": %" PRIu64 ", \"debug_lines\": %" PRIu64 ", \"mappings\": %" PRIu64 ", \"first_tick\": %" PRIu64 ", \"last_tick\": %" PRIu64 "}\n",
         lineno, l1, nrec, kept[0], kept[1], kept[2], kept[3], kept[4], kept[5], hits, seq, other_machines, stalls, ifetch,
         ignored, debug_lines, mappings, nrec ? first_tick : 0, last_tick);
  return 0;
}
