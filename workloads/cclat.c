/* How long one operation on one cache line takes, by the line's state and by where its holder is: the
 * calibration benchmark of the simulated machines (docs/machine.md), ccbench's method (trigonak/ccbench) in
 * cohtb's harness. Every repetition of a cell takes a line no one has touched; the owner thread (thread 0 unless
 * told) brings it to the cell's state -- M: it stores; E: it loads; S: it loads and the sharer loads (a clean
 * shared line, as ccbench's LOAD_FROM_SHARED builds it); I: nothing, the line comes from memory -- and the target
 * thread then times one operation on it with the time-stamp counter
 * (gem5 counts core cycles). Thread i runs on CPU i, so --owner, --target and --sharer choose the distances; with
 * --interleave S --home H only lines whose home is socket H are used (gem5 spreads lines over the sockets by
 * address, line L at socket L mod S). Fixed work only: one op is one repetition of every chosen cell. */
#define BENCH_OPS_DEFAULT "100"
#include "common/bench.h"

#include <sys/mman.h>

static const char testcase_description[] =
    "the latency of a load, store or atomic on a line in state M, E, S or I held by another core";

static const char *operations[] = {"all", "load", "store", "cas", "fai", "tas", "swap", NULL};
static const char *states[] = {"all", "M", "E", "S", "I", NULL};
#define TESTCASE_FLAGS(X)                                                                                       \
  X(policy, "policy", "the timed operation (cas: lock cmpxchg, fai: lock xadd, tas: xchgb, swap: xchgq), or all", \
    operations, "all")                                                                                          \
  X(layout, "layout", "the line's state when the target's operation starts, or all", states, "all")             \
  X(owner, "owner", "the thread (CPU) that brings the line to its state", NULL, "0")                           \
  X(target, "target", "the thread (CPU) that times the operation", NULL, "1")                                   \
  X(sharer, "sharer", "the thread (CPU) that shares the line in state S", NULL, "2")                            \
  X(interleave, "interleave", "lines are spread over this many homes by address (the machine's sockets)", NULL, "1") \
  X(home, "home", "use only lines whose home is this one (line number mod --interleave)", NULL, "0")

enum { NOPS = 6, NSTATES = 4, SETTLE_LOOPS = 2000 };
BENCH_TESTCASE("cclat", "repetitions of every chosen cell", TESTCASE_FLAGS)

/* Waits while *word == value (until_equal: until *word == value), spinning; after a long spin it yields the CPU, so a
 * host with fewer CPUs than participants goes on (in gem5 a wait lasts microseconds and never gets there). */
static void wait_on(uint64_t *word, uint64_t value, int until_equal) {
  for (uint64_t spins = 0; (__atomic_load_n(word, __ATOMIC_ACQUIRE) == value) != until_equal; spins++) {
    cpu_relax();
    if (spins > (1u << 16)) sched_yield();
  }
}

/* A barrier of the participants (owner, target, sharer), a generation count on its own line. */
static struct { uint64_t arrived __aligned_line; uint64_t generation __aligned_line; uint64_t done __aligned_line; } sync_lines;
static int participants, owner, target, sharer, first_op, last_op, first_state, last_state;
static uint64_t interleave, home, reps, timer_overhead, wrong_values;
static char *pool;             /* fresh lines: no one touched them but the page's first line (mapping it) */
static size_t pool_lines, pool_bytes;
static uint32_t *samples;      /* [cell][repetition], target's cycles, timer included */

static void barrier(void) {
  uint64_t g = __atomic_load_n(&sync_lines.generation, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&sync_lines.arrived, 1, __ATOMIC_ACQ_REL) == (uint64_t)participants) {
    __atomic_store_n(&sync_lines.arrived, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sync_lines.generation, g + 1, __ATOMIC_RELEASE);
  } else {
    wait_on(&sync_lines.generation, g, 0);
  }
}

/* The time-stamp counter, fenced so that nothing moves across it. */
static inline uint64_t tsc(void) {
  uint32_t lo, hi;
  __asm__ __volatile__("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi)::"memory");
  return (uint64_t)hi << 32 | lo;
}

/* The n-th fresh line of the chosen home: never the first line of a page (touched to map it), whose home is 0. */
static uint64_t lines_per_page(void) { return 64 / interleave - (home == 0); }
static volatile uint64_t *fresh_line(uint64_t n) {
  uint64_t page = n / lines_per_page(), k = n % lines_per_page() + (home == 0);
  return (volatile uint64_t *)(pool + page * 4096 + (k * interleave + home) * CACHE_LINE);
}

static int by_value(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* The owner's write: a value of this line alone (its number, low byte never 0), so the target's operation shows
 * it found this very write, not an older line's or none. */
static uint64_t stamp(uint64_t n) { return n << 8 | 1; }

static void owner_sets(int state, volatile uint64_t *line, uint64_t value) {
  if (state == 0) { *line = value; __asm__ __volatile__("mfence" ::: "memory"); }   /* M */
  else if (state == 1 || state == 2) (void)*line;                                   /* E; S: the sharer loads next */
}

/* One timed operation; the value it found (a store: the one expected), to check it ran on the state it was
 * given. Only the operation lies between the two reads of the counter: each case times itself, so the switch
 * and its jump table are outside. */
#define TIMED(operation) do { t0 = tsc(); operation; t1 = tsc(); } while (0)
static inline uint64_t timed_op(int op, volatile uint64_t *line, uint64_t expect, uint32_t *cycles) {
  uint64_t v = expect, t0 = 0, t1 = 0;
  switch (op) {
    case 0: TIMED(v = *line); break;
    case 1: TIMED(*line = 2; __asm__ __volatile__("mfence" ::: "memory")); break;
    case 2: TIMED(v = __sync_val_compare_and_swap((uint64_t *)line, expect, 2)); break;
    case 3: TIMED(v = __atomic_fetch_add((uint64_t *)line, 1, __ATOMIC_SEQ_CST)); break;
    case 4: TIMED(v = __atomic_exchange_n((volatile uint8_t *)line, 0xff, __ATOMIC_SEQ_CST)); expect &= 0xff; break;
    case 5: TIMED(v = __atomic_exchange_n((uint64_t *)line, 2, __ATOMIC_SEQ_CST)); break;
  }
  *cycles = (uint32_t)(t1 - t0);
  return v == expect;
}

/* The counter's own cost on this core: the median of back-to-back reads (a constant in gem5). */
static uint64_t measure_timer(void) {
  uint32_t t[1001];
  for (int i = 0; i < 1001; i++) { uint64_t a = tsc(); t[i] = (uint32_t)(tsc() - a); }
  qsort(t, 1001, sizeof t[0], by_value);
  return t[500];
}

static void testcase(int id) {
  int role = id == owner || id == target || (id == sharer && first_state <= 2 && last_state >= 2);
  uint64_t rep = 0, n = 0;
  if (id == target) timer_overhead = measure_timer();   /* on the core that times, before its first cell */
  int cells = (last_state - first_state + 1) * (last_op - first_op + 1);
  for (struct bench_loop l = bench_loop(&run, id); bench_next(&l); rep++) {
    if (!role) continue;
    for (int s = first_state, cell = 0; s <= last_state; s++)
      for (int op = first_op; op <= last_op; op++, cell++, n++) {
        volatile uint64_t *line = fresh_line(rep * cells + cell);
        uint64_t value = stamp(rep * cells + cell);
        barrier();
        if (id == owner) owner_sets(s, line, value);
        barrier();
        if (s == 2 && id == sharer) (void)*line;
        barrier();
        if (id == target) {
          /* The page's first line (never measured) maps the page in this core's TLB before the timing. */
          (void)*(volatile char *)((uintptr_t)line & ~(uintptr_t)4095);
          for (volatile int i = 0; i < SETTLE_LOOPS; i++) {}   /* the barrier's own traffic drains first */
          uint64_t want = s == 0 ? value : 0;   /* M: the owner's stamp; E, S and I: never written */
          wrong_values += !timed_op(op, line, want, &samples[cell * reps + rep]);
          __atomic_store_n(&sync_lines.done, n + 1, __ATOMIC_RELEASE);
        } else {
          wait_on(&sync_lines.done, n + 1, 1);
        }
      }
  }
}

static int choice(const char **list, const char *v) {
  for (int i = 0; list[i]; i++)
    if (!strcmp(list[i], v)) return i;
  return -1;
}

static int testcase_prepare(void) {
  if (!run.measure.ops) usage("cclat measures fixed work: --ops repetitions of every cell, not a timed window");
  owner = (int)flag_num(owner);
  target = (int)flag_num(target);
  sharer = (int)flag_num(sharer);
  interleave = flag_num(interleave);
  home = flag_num(home);
  reps = run.measure.ops;
  int op = choice(operations, flag_text(policy)) - 1, state = choice(states, flag_text(layout)) - 1;
  first_op = op < 0 ? 0 : op, last_op = op < 0 ? NOPS - 1 : op;
  first_state = state < 0 ? 0 : state, last_state = state < 0 ? NSTATES - 1 : state;
  int shared = first_state <= 2 && last_state >= 2;
  if (owner < 0 || owner >= run.threads) usage("--owner must be a thread under --threads");
  if (target < 0 || target >= run.threads || target == owner)
    usage("--target must be a thread other than the owner, under --threads");
  if (shared && (sharer < 0 || sharer >= run.threads || sharer == target || sharer == owner))
    usage("state S needs --sharer: a thread other than the owner and the target, under --threads");
  if (interleave < 1 || 64 % interleave || home >= interleave || (home == 0 && interleave == 64))
    usage("--interleave must divide 64 and --home be under it (and not the first line of every page)");
  participants = 2 + shared;
  uint64_t cells = (uint64_t)(last_state - first_state + 1) * (last_op - first_op + 1);
  pool_lines = cells * reps;
  pool_bytes = (pool_lines / lines_per_page() + 1) * 4096;
  pool = mmap(NULL, pool_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  samples = calloc(cells * reps, sizeof *samples);
  if (pool == MAP_FAILED || !samples) { fprintf(stderr, "cclat: no memory for %zu lines\n", pool_lines); return 3; }
  for (size_t i = 0; i < pool_bytes; i += 4096) pool[i] = 0;   /* every page mapped now, through its first line only */
  return 0;
}

static int testcase_report(void) {
  json_str("unit", "time-stamp counter ticks (gem5: core cycles), the timer's own cost included");
  json_u64("timer_overhead", timer_overhead);
  json_u64("owner", owner);
  json_u64("target", target);
  json_u64("sharer", sharer);
  json_u64("interleave", interleave);
  json_u64("home", home);
  json_open("cells", '[');
  for (int s = first_state, cell = 0; s <= last_state; s++)
    for (int op = first_op; op <= last_op; op++, cell++) {
      uint32_t *x = &samples[cell * reps];
      double sum = 0;
      qsort(x, reps, sizeof *x, by_value);
      for (uint64_t i = 0; i < reps; i++) sum += x[i];
      json_sep();
      json_first = 1;
      putchar('{');
      json_str("state", states[s + 1]);
      json_str("operation", operations[op + 1]);
      json_u64("n", reps);
      json_u64("min", x[0]);
      json_u64("p10", x[reps / 10]);
      json_u64("median", x[reps / 2]);
      json_u64("p90", x[reps * 9 / 10]);
      json_u64("max", x[reps - 1]);
      json_f("mean", sum / reps);
      json_close('}');
    }
  json_close(']');
  json_u64("wrong_values", wrong_values);
  json_str("invariants", wrong_values == 0 ? "ok" : "violated");   /* every operation found the state it was given */
  json_layout_begin(flag_text(layout));
  json_object_begin("lines", pool, pool_bytes);
  for (uint64_t i = 0; i < pool_lines && i < 64; i++) {   /* the first fresh lines, as every workload names its fields */
    char name[32];
    snprintf(name, sizeof name, "line[%" PRIu64 "]", i);
    json_field(name, (const void *)fresh_line(i), sizeof(uint64_t));
  }
  json_object_end();
  json_layout_end();
  return wrong_values == 0 ? 0 : 1;
}
