/* How long a load takes from each level of the hierarchy: each thread chases pointers through its own --kib KiB,
 * the lines in a random cyclic order, so every load depends on the one before and no prefetcher can guess the next
 * (lmbench's lat_mem_rd, Chips and Cheese's latency test). Each op is --loads loads between two reads of the
 * time-stamp counter (gem5 counts core cycles), so the harness's own clock is not in them; a thread's counter ticks
 * per load in the window at a footprint that fits a level but not the one above it is that level's load-to-use
 * latency from its core: the calibration
 * figures a mesh part publishes (L2, L3), where ccbench's table of line states does not apply. Several threads give
 * it from several places on the mesh at once (their footprints must fit the level together). The warm-up must walk
 * each cycle at least once. */
#include "common/bench.h"

static const char testcase_description[] = "each thread chases pointers through its own buffer, its lines in a random cycle";

static const char *policies[] = {"random", NULL};
static const char *layouts[] = {"line", NULL};
#define TESTCASE_FLAGS(X)                                                                           \
  X(policy, "policy", "the order of the lines: a random cycle (a fixed seed per thread)", policies, "random")  \
  X(layout, "layout", "one pointer per cache line", layouts, "line")                                 \
  X(kib, "kib", "each thread's buffer, KiB (the footprint that picks the level)", NULL, "16")              \
  X(loads, "loads", "dependent loads per op, timed together", NULL, "1000")

BENCH_TESTCASE("chase", "batches of --loads dependent loads", TESTCASE_FLAGS)
static void **buffers[MAX_THREADS];
static size_t lines;
static uint64_t loads;
/* Per thread: where its chase stopped (keeps the loads), its loads before the window, and its window's counter
 * ticks and loads. */
static struct { uintptr_t last; uint64_t warm, ticks, loads; } chased[MAX_THREADS] __aligned_line;

static inline uint64_t tsc(void) {
  uint32_t lo, hi;
  __asm__ __volatile__("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi)::"memory");
  return (uint64_t)hi << 32 | lo;
}

static void testcase(int id) {
  void **p = buffers[id];
  uint64_t warm = 0, ticks = 0, done = 0;
  for (struct bench_loop l = bench_loop(&run, id); bench_next(&l);) {
    uint64_t t0 = tsc();
    for (uint64_t i = 0; i < loads; i++) p = (void **)*p;
    uint64_t t1 = tsc();
    if (l.in_window) ticks += t1 - t0, done += loads;
    else if (!l.window_opened) warm += loads;
  }
  chased[id].last = (uintptr_t)p;
  chased[id].warm = warm;
  chased[id].ticks = ticks;
  chased[id].loads = done;
}

/* A random cycle through the buffer's lines, each line's first word pointing at the next line's. */
static void **cycle(uint64_t seed, size_t *order) {
  void **buffer = aligned_alloc(4096, (lines * CACHE_LINE + 4095) / 4096 * 4096);   /* a whole number of pages */
  if (!buffer) return NULL;
  const size_t stride = CACHE_LINE / sizeof(void *);
  uint64_t x = 0x9e3779b97f4a7c15ull + seed;
  for (size_t i = 0; i < lines; i++) order[i] = i;
  for (size_t i = lines - 1; i > 0; i--) {   /* Fisher-Yates with xorshift64 */
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t j = x % (i + 1), t = order[i];
    order[i] = order[j], order[j] = t;
  }
  for (size_t i = 0; i < lines; i++) buffer[order[i] * stride] = &buffer[order[(i + 1) % lines] * stride];
  return buffer;
}

/* Whether the buffer's cycle covers every line once: from its start, `lines` steps come back to it. */
static int whole_cycle(void **buffer) {
  void **p = buffer;
  size_t steps = 0;
  do { p = (void **)*p; steps++; } while (p != buffer && steps <= lines);
  return steps == lines;
}

static int testcase_prepare(void) {
  lines = flag_num(kib) * 1024 / CACHE_LINE;
  loads = flag_num(loads);
  if (run.measure.ops) usage("chase times a window after a warm-up that walks each cycle: --ops 0 and a window");
  if (lines < 2) usage("--kib must hold at least two cache lines");
  if (loads < 1) usage("--loads must be at least 1");
  size_t *order = malloc(lines * sizeof *order);
  int made = 0;
  while (order && made < run.threads && (buffers[made] = cycle((uint64_t)made, order))) made++;
  free(order);
  if (made < run.threads) { fprintf(stderr, "chase: no memory for %d x %zu lines\n", run.threads, lines); return 3; }
  return 0;
}

static int testcase_report(void) {
  int ok = 1;
  json_u64("kib", flag_num(kib));
  json_u64("lines", lines);
  json_str("unit", "time-stamp counter ticks (gem5: core cycles) per load, over each thread's window");
  json_open("ticks_per_load", '[');
  for (int i = 0; i < run.threads; i++) {
    /* every cycle whole, walked once before the window (the warm-up), and timed in it */
    ok &= whole_cycle(buffers[i]) && chased[i].warm >= lines && chased[i].loads > 0;
    json_sep();
    printf("%.3f", chased[i].loads ? (double)chased[i].ticks / chased[i].loads : 0.0);
  }
  json_close(']');
  json_str("invariants", ok ? "ok" : "violated");   /* violated: a warm-up too short for the cycle, or no window */
  json_layout_begin(flag_text(layout));
  json_object_begin("buffer", buffers[0], lines * CACHE_LINE);
  json_field("buffer[0]", buffers[0], sizeof(void *));
  json_object_end();
  json_layout_end();
  return ok ? 0 : 1;
}
