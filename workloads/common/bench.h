/* The harness of the cohtb workloads, in will-it-scale's shape: this header owns main() and the flags;
 * a workload (workloads/<name>.c) is its testcase and its description. It defines
 *
 *   static const char testcase_description[]   one line, shown by --help
 *   #define TESTCASE_FLAGS(X)                   its own flags, one X(...) line each (flags below)
 *   BENCH_TESTCASE(name, ops_help, TESTCASE_FLAGS)
 *   static int testcase_prepare(void)           set-up from the parsed flags: 0, or an exit status
 *   static void testcase(int id)                thread id's measured loop (bench_loop/bench_next below)
 *   static int testcase_report(void)            its fields of the result JSON: 0, or 1 if its checks failed
 *
 * and main() parses the flags, prepares, runs the threads from a start barrier, measures, and prints the
 * common head of the JSON before the workload's fields. Header-only, one translation unit per workload, so
 * the measured loop compiles exactly as if it were written out in the workload. */
#ifndef COHTB_BENCH_H
#define COHTB_BENCH_H

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CACHE_LINE 64
#define MAX_THREADS 256
#define __aligned_line __attribute__((aligned(CACHE_LINE)))

static inline void cpu_relax(void) { __asm__ __volatile__("pause" ::: "memory"); }
#define READ_ONCE(x) (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#include "m5ops.h"

/* ---------------------------------------------------------------- flags */
/* A flag is one line of an X-macro table, X(id, name, help, choices, default):
 *   id       the flag in C: flag_text(id), flag_num(id), flag_on(id), flag_is(id, "text")
 *   name     on the command line, without the leading --
 *   choices  a NULL-terminated list, NULL for a non-negative whole number, or FLAG_TEXT for any text
 *   default  its text, or NULL for a switch (off unless given; it takes no value)
 * Every workload has BENCH_HEAD_FLAGS first and BENCH_TAIL_FLAGS last, with its own TESTCASE_FLAGS between:
 * the order of --help, --describe and the result's "flags". Code names a flag by its id, never by its
 * position, so a workload adds or moves a flag on one line. */
struct flag {
  const char *name;
  const char *help;
  const char **choices;
  const char *value;  /* the default, then the parsed text */
};
static const char *FLAG_TEXT[] __attribute__((unused)) = {NULL};   /* no choices listed: any text (a path) */

#ifndef BENCH_OPS_DEFAULT   /* a workload that measures fixed work only (cclat) defines its own first */
#define BENCH_OPS_DEFAULT "0"
#endif
#ifndef BENCH_THREADS_HELP   /* a workload whose threads differ (rwsem: readers and writers) defines its own first */
#define BENCH_THREADS_HELP "worker threads (thread 0 is the main thread)"
#endif

/* The threads, and how a run is measured (will-it-scale's way by default: every thread runs for a warm-up
 * and then a window of time, ops counted per thread and per interval; --ops N is fixed work instead).
 * ops_help says what one op of the workload is. */
#define BENCH_HEAD_FLAGS(X, ops_help)                                                                                \
  X(threads, "threads", BENCH_THREADS_HELP, NULL, "2")                                                               \
  X(ops, "ops", ops_help " per thread, fixed work (0: run for --warmup-us + --window-us instead)", NULL,         \
    BENCH_OPS_DEFAULT)                                                                                               \
  X(warmup_us, "warmup-us", "time every thread runs before the window (microseconds)", NULL, "100000")              \
  X(window_us, "window-us", "the measured window (microseconds; simulated time in gem5)", NULL, "1000000")          \
  X(interval_us, "interval-us", "ops are counted per interval of this length within the window", NULL, "100000")    \
  X(seed, "seed", "perturbs the start: thread i waits a seeded-random 0..--skew-ns before its first op (0: none)", NULL, "0") \
  X(skew_ns, "skew-ns", "largest start skew with --seed", NULL, "1000")
#define BENCH_TAIL_FLAGS(X) X(m5, "m5", "mark the region of interest with gem5 work-begin/work-end", NULL, NULL)

#define BENCH_FLAG_ID(id, name, help, choices, def) F_##id,
#define BENCH_FLAG_ENTRY(id, name, help, choices, def) {name, help, choices, def},

/* A workload's flags by id (macros: the ids F_<id> are the workload's, from BENCH_TESTCASE). */
#define flag_text(id) (flags[F_##id].value)
#define flag_num(id) flag_value_num(&flags[F_##id])
#define flag_on(id) flag_value_on(&flags[F_##id])
#define flag_is(id, text) (!strcmp(flags[F_##id].value, (text)))

static long long flag_value_num(const struct flag *f) { return f->value ? atoll(f->value) : 0; }
static int flag_value_on(const struct flag *f) { return f->value != NULL && strcmp(f->value, "off") != 0; }

/* The running workload's table and description (main() sets them before anything else). */
static struct flag *bench_flags;
static int bench_nflags;
static const char *bench_description;
static const char *bench_name;

/* A flag the harness itself reads, by name: this code comes before the workload's table and its ids. */
static struct flag *bench_flag(const char *name) {
  for (int i = 0; i < bench_nflags; i++)
    if (!strcmp(bench_flags[i].name, name)) return &bench_flags[i];
  fprintf(stderr, "%s: no flag --%s in the table\n", bench_name, name);
  exit(3);
}

/* A bad command line: why, then the flags; exit status 2. */
static void usage(const char *why, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", bench_name);
  va_start(ap, why);
  vfprintf(stderr, why, ap);
  va_end(ap);
  fprintf(stderr, "\nusage: %s [flags]\n  %s\n", bench_name, bench_description);
  for (int i = 0; i < bench_nflags; i++) {
    const struct flag *f = &bench_flags[i];
    fprintf(stderr, "  --%-18s %s (default %s", f->name, f->help, f->value ? f->value : "off");
    if (f->choices && *f->choices) {
      fprintf(stderr, "; one of");
      for (const char **c = f->choices; *c; c++) fprintf(stderr, " %s", *c);
    }
    fprintf(stderr, ")\n");
  }
  exit(2);
}

/* --describe: the flags as JSON, so cohtb takes policies, layouts and defaults from the binary itself. */
static void describe(void) {
  printf("{\"benchmark\": \"%s\", \"flags\": [", bench_name);
  for (int i = 0; i < bench_nflags; i++) {
    const struct flag *f = &bench_flags[i];
    printf("%s{\"name\": \"%s\", \"help\": \"%s\", ", i ? ", " : "", f->name, f->help);
    if (f->value) printf("\"default\": \"%s\", ", f->value); else printf("\"default\": null, ");
    printf("\"choices\": ");
    if (!f->choices) printf("null}");
    else {
      printf("[");
      for (const char **c = f->choices; *c; c++) printf("%s\"%s\"", c == f->choices ? "" : ", ", *c);
      printf("]}");
    }
  }
  printf("]}\n");
  exit(0);
}

/* Parses --name value / --name=value; switches (default NULL, no choices) take no value. */
static void parse_flags(int argc, char **argv) {
  bench_name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  struct flag *flags = bench_flags;
  int n = bench_nflags;
  for (int a = 1; a < argc; a++) {
    if (strncmp(argv[a], "--", 2) != 0) usage("unexpected argument '%s'", argv[a]);
    if (!strcmp(argv[a], "--help")) usage("help");
    if (!strcmp(argv[a], "--describe")) describe();
    char *name = argv[a] + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    int i;
    for (i = 0; i < n; i++)
      if (strlen(flags[i].name) == len && !strncmp(flags[i].name, name, len)) break;
    if (i == n) usage("unknown flag '%s'", argv[a]);
    if (flags[i].value == NULL && !flags[i].choices && !eq) { flags[i].value = "on"; continue; }
    const char *v = eq ? eq + 1 : (a + 1 < argc ? argv[++a] : NULL);
    if (!v) usage("--%s needs a value", flags[i].name);
    if (flags[i].choices) {
      const char **c;
      for (c = flags[i].choices; *c && strcmp(*c, v); c++) {}
      if (!*c && *flags[i].choices) usage("--%s: '%s' is not a choice", flags[i].name, v);
    } else {
      char *end;
      errno = 0;
      long long x = strtoll(v, &end, 10);
      if (errno || *end || x < 0) usage("--%s: '%s' is not a non-negative whole number", flags[i].name, v);
    }
    flags[i].value = v;
  }
}

/* Writes every page of an object once, so its pages are mapped (and logged by gem5's TLB flag) during
 * set-up: a zero-initialized static object is otherwise first touched inside the measured region. */
static inline void touch_object(volatile void *p, size_t size) {
  volatile char *c = p;
  for (size_t i = 0; i < size; i += 4096) c[i] = c[i];
  if (size) c[size - 1] = c[size - 1];
}

/* ---------------------------------------------------------------- time, affinity */
static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Pin thread i to CPU i modulo the CPUs we may use; a host (or gem5 SE) that refuses is fine. */
static int pin_thread(pthread_t t, int i) {
  cpu_set_t allowed, one;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 0;
  int n = CPU_COUNT(&allowed);
  if (n <= 0) return 0;
  int k = i % n, cpu = -1;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &allowed) && k-- == 0) { cpu = c; break; }
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return pthread_setaffinity_np(t, sizeof one, &one) == 0;
}

/* ---------------------------------------------------------------- start barrier and threads */
/* A spinning barrier: every thread is created and waiting before any is released, and all are
 * released by one store, so the measured region is truly concurrent (pthread_create in gem5 is slow). */
struct start_gate {
  volatile int arrived __aligned_line;
  volatile int go __aligned_line;
};

#define MAX_INTERVALS 512   /* one 4 KiB page of counts per thread */

/* How the run is measured: fixed work (ops > 0), or will-it-scale's timed window. */
struct bench_measure {
  uint64_t ops;                          /* per thread; 0: timed */
  uint64_t warmup_ns, window_ns, interval_ns;
  int intervals;
  uint64_t seed, skew_ns;
};

struct bench_run {
  int threads;
  int m5;
  int switch_cpu;   /* full system: the set-up ran on atomic CPUs; switch to timing ones at the gate */
  struct bench_measure measure;
  struct start_gate gate;
  uint64_t t_start, t_end;   /* of the measured part: the window, or the whole fixed-work run */
  uint64_t t_release;
  int pinned;
  int window_mark;   /* the m5 markers of a timed window: WINDOW_* below */
  /* Set by a workload's testcase_prepare, if it needs them (after the fields above, which the measured loop
   * reads, so their lines stay as they were): */
  void (*intruder)(int id);       /* one more thread beside the workers, released with them (a lock holder) */
  volatile int *stop_intruder;    /* set once the workers are done, so the intruder leaves */
  int (*cleanup)(int status);     /* after the result is printed; returns the exit status */
};

/* A timed window's m5 markers: the first thread to finish an op at or after the window's start marks it
 * (work-begin), the first at or after its end closes it (work-end), once each and in that order. Any thread,
 * not thread 0 alone: a thread starved through the whole window (32 threads on one line) would mark none. */
enum { WINDOW_UNMARKED, WINDOW_OPENING, WINDOW_OPEN, WINDOW_CLOSED };

static void mark_window(struct bench_run *run, int at_end) {
  int s = WINDOW_UNMARKED;
  if (__atomic_compare_exchange_n(&run->window_mark, &s, WINDOW_OPENING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    m5_work_begin(0, 0);
    __atomic_store_n(&run->window_mark, WINDOW_OPEN, __ATOMIC_RELEASE);
  }
  if (!at_end) return;
  while ((s = __atomic_load_n(&run->window_mark, __ATOMIC_ACQUIRE)) == WINDOW_OPENING) cpu_relax();
  if (s == WINDOW_OPEN &&
      __atomic_compare_exchange_n(&run->window_mark, &s, WINDOW_CLOSED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    m5_work_end(0, 0);
}

/* Each thread's counts sit on its own page, so counting is never coherence traffic. */
static uint64_t interval_ops[MAX_THREADS][MAX_INTERVALS] __attribute__((aligned(4096)));
static uint64_t interval_aux[MAX_THREADS][MAX_INTERVALS] __attribute__((aligned(4096)));
static struct { uint64_t all_ops, window_ops, warmup_ops, skew_ns; } __aligned_line thread_ops[MAX_THREADS];
static const char *aux_name;   /* what interval_aux counts, if the workload counts something */

/* Parses the command line and starts a run from the head and tail flags; bad values end the program with
 * the usage text. */
static void bench_start(struct bench_run *run, int argc, char **argv) {
  parse_flags(argc, argv);
  *run = (struct bench_run){.threads = (int)flag_value_num(bench_flag("threads")), .m5 = flag_value_on(bench_flag("m5"))};
  if (run->threads < 1 || run->threads >= MAX_THREADS) usage("--threads must be 1..%d", MAX_THREADS - 1);
  struct bench_measure *ms = &run->measure;
  ms->ops = flag_value_num(bench_flag("ops"));
  ms->warmup_ns = flag_value_num(bench_flag("warmup-us")) * 1000;
  ms->window_ns = flag_value_num(bench_flag("window-us")) * 1000;
  ms->interval_ns = flag_value_num(bench_flag("interval-us")) * 1000;
  ms->seed = flag_value_num(bench_flag("seed"));
  ms->skew_ns = flag_value_num(bench_flag("skew-ns"));
  if (ms->ops == 0) {
    if (ms->window_ns == 0 || ms->interval_ns == 0) usage("--window-us and --interval-us must be positive (or give --ops)");
    if (ms->window_ns % ms->interval_ns) usage("--window-us must be a whole number of --interval-us");
    if (ms->window_ns / ms->interval_ns > MAX_INTERVALS) usage("at most %d intervals per window", MAX_INTERVALS);
    if (ms->seed && ms->skew_ns >= ms->warmup_ns) usage("--skew-ns must be shorter than the warm-up");
    ms->intervals = (int)(ms->window_ns / ms->interval_ns);
  } else {
    if (ms->seed) usage("--seed perturbs a timed run; with --ops there is no warm-up to absorb it");
    ms->intervals = 1;
  }
  touch_object(interval_ops, sizeof interval_ops[0] * run->threads);
  touch_object(interval_aux, sizeof interval_aux[0] * run->threads);
  touch_object(thread_ops, sizeof thread_ops[0] * run->threads);
}

/* splitmix64: the seeded start skew of each thread, the same on every machine. */
static inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* One thread's measurement loop:  for (struct bench_loop l = bench_loop(run, id); bench_next(&l);) { op }
 * An op belongs to the phase (warm-up, window, after) and interval in which it started. With --m5 the
 * first thread to see the window open marks it for gem5, and the first to see it close ends it (mark_window). */
struct bench_loop {
  struct bench_run *run;
  int id, started, in_window, window_opened;
  uint64_t op_start;   /* when the op in progress started */
  uint64_t begin, end; /* the window */
};

static inline struct bench_loop bench_loop(struct bench_run *run, int id) {
  return (struct bench_loop){.run = run, .id = id};
}

/* Ends the op in progress, if any, and says whether to start another: 0 stop, 1 go on, 2 go on, and this
 * op is the thread's first in the window (a workload resets its own per-op statistics there). */
static inline int bench_next(struct bench_loop *l) {
  struct bench_run *run = l->run;
  const struct bench_measure *ms = &run->measure;
  int id = l->id;
  if (ms->ops) {   /* fixed work: every op is measured */
    if (l->started) { interval_ops[id][0]++; thread_ops[id].all_ops++; thread_ops[id].window_ops++; }
    l->started = l->in_window = 1;
    return thread_ops[id].all_ops < ms->ops;
  }
  uint64_t t = now_ns();
  if (!l->started) {
    l->begin = __atomic_load_n(&run->t_release, __ATOMIC_ACQUIRE) + ms->warmup_ns;
    l->end = l->begin + ms->window_ns;
    if (ms->seed) {
      thread_ops[id].skew_ns = splitmix64(ms->seed * MAX_THREADS + (uint64_t)id) % (ms->skew_ns + 1);
      uint64_t until = t + thread_ops[id].skew_ns;
      while ((t = now_ns()) < until) cpu_relax();
    }
  } else {
    thread_ops[id].all_ops++;
    if (l->op_start < l->begin) thread_ops[id].warmup_ops++;
    else if (l->op_start < l->end) { thread_ops[id].window_ops++; interval_ops[id][(l->op_start - l->begin) / ms->interval_ns]++; }
  }
  l->started = 1;
  l->op_start = t;
  if (t >= l->end) {
    if (run->m5) mark_window(run, 1);
    l->in_window = 0;
    return 0;
  }
  if (t >= l->begin && !l->window_opened) {
    l->window_opened = l->in_window = 1;
    if (run->m5) mark_window(run, 0);
    return 2;
  }
  return 1;
}

/* Counts n of the workload's own events (aux_name) in the interval of the op in progress. */
static inline void bench_count_aux(struct bench_loop *l, uint64_t n) {
  const struct bench_measure *ms = &l->run->measure;
  if (ms->ops) interval_aux[l->id][0] += n;
  else if (l->in_window) interval_aux[l->id][(l->op_start - l->begin) / ms->interval_ns] += n;
}

typedef void (*worker_fn)(int id);

struct worker_ctx {
  struct bench_run *run;
  worker_fn fn;
  int id;
  int cpu;      /* the thread's index: it pins itself to CPU cpu modulo the allowed ones */
  int pinned;   /* whether that worked */
};

static void *worker_trampoline(void *p) {
  struct worker_ctx *w = p;
  /* Pin before arriving: a thread spinning at the gate on its creator's CPU would hold that CPU until
   * the scheduler's tick (10 ms in the full-system guest) and hold up the creation of the next one. */
  w->pinned = pin_thread(pthread_self(), w->cpu);
  __atomic_add_fetch(&w->run->gate.arrived, 1, __ATOMIC_SEQ_CST);
  while (!READ_ONCE(w->run->gate.go)) cpu_relax();
  w->fn(w->id);
  return NULL;
}

/* Runs fn(0..threads-1) concurrently: thread 0 is the main thread, so N threads need N CPUs in gem5.
 * The intruder, if the workload set one, is one more thread, released with the rest; *stop_intruder is set
 * once the workers are done so it can leave. */
static void run_threads(struct bench_run *run, worker_fn fn) {
  int total = run->threads + (run->intruder ? 1 : 0);
  int fixed = run->measure.ops != 0;
  pthread_t tid[MAX_THREADS];
  /* First marker (id 1): the contended objects are set up and their pages mapped; gem5's config stops
   * logging TLB mappings here, before thread creation and the start barrier flood the TLB log. */
  if (run->m5) m5_work_begin(1, 0);
  struct worker_ctx ctx[MAX_THREADS];
  run->pinned = 0;
  for (int i = 1; i < total; i++) {
    ctx[i] = (struct worker_ctx){run, i < run->threads ? fn : run->intruder, i < run->threads ? i : i - run->threads, i, 0};
    int rc = pthread_create(&tid[i], NULL, worker_trampoline, &ctx[i]);
    if (rc != 0) {
      fprintf(stderr, "%s: pthread_create of thread %d failed: %s (in gem5 SE each thread needs its own CPU)\n",
              bench_name, i, strerror(rc));
      exit(3);
    }
  }
  run->pinned += pin_thread(pthread_self(), 0);
  while (READ_ONCE(run->gate.arrived) != total - 1) cpu_relax();
  for (int i = 1; i < total; i++) run->pinned += ctx[i].pinned;
  /* Every thread waits at the gate: the set-up (process start, thread creation, pinning) is over, and
   * the full-system machine leaves its atomic CPUs for timing ones here, with cold caches; the warm-up
   * that follows warms them. */
  if (run->m5 && run->switch_cpu) m5_switch_cpu();
  /* With fixed work the region of interest is the whole run; a timed run's is the window, which
   * thread 0 marks from bench_next. */
  if (run->m5 && fixed) m5_work_begin(0, 0);
  __atomic_store_n(&run->t_release, now_ns(), __ATOMIC_RELEASE);   /* before the gate opens */
  WRITE_ONCE(run->gate.go, 1);
  fn(0);
  for (int i = 1; i < run->threads; i++) pthread_join(tid[i], NULL);
  if (fixed) {
    run->t_start = run->t_release;
    run->t_end = now_ns();
    if (run->m5) m5_work_end(0, 0);
  } else {
    run->t_start = run->t_release + run->measure.warmup_ns;
    run->t_end = run->t_start + run->measure.window_ns;
  }
  if (run->stop_intruder) WRITE_ONCE(*run->stop_intruder, 1);
  for (int i = run->threads; i < total; i++) pthread_join(tid[i], NULL);
}

/* ---------------------------------------------------------------- JSON */
static int json_first = 1;
static void json_sep(void) { if (!json_first) fputs(", ", stdout); json_first = 0; }
static void json_begin(void) { fputs("{", stdout); json_first = 1; }
static void json_end(void) { fputs("}\n", stdout); json_first = 0; }
/* A NULL key is an array element. */
static void json_key(const char *k) { json_sep(); if (k) printf("\"%s\": ", k); }
static void json_str(const char *k, const char *v) { json_key(k); printf("\"%s\"", v); }
static void json_u64(const char *k, uint64_t v) { json_key(k); printf("%" PRIu64, v); }
static void json_f(const char *k, double v) { json_key(k); printf("%.6g", v); }
static void json_open(const char *k, char bracket) { json_key(k); putchar(bracket); json_first = 1; }
static void json_close(char bracket) { putchar(bracket); json_first = 0; }

/* A layout-map entry: a named field of a named object. */
static void json_field(const char *name, const void *addr, size_t size) {
  json_sep();
  printf("{\"name\": \"%s\", \"address\": %" PRIuPTR ", \"size\": %zu}", name, (uintptr_t)addr, size);
  json_first = 0;
}

/* Layout-map entries name[0..n-1] for the elements of an array, stride bytes apart (the first 64: enough to
 * see which share a line). */
static __attribute__((unused)) void json_indexed_fields(const char *name, const void *first, size_t stride, size_t size, int n) {
  for (int i = 0; i < n && i < 64; i++) {
    char field[64];
    snprintf(field, sizeof field, "%s[%d]", name, i);
    json_field(field, (const char *)first + i * stride, size);
  }
}

/* The layout map: {"cache_line", "layout", "objects": [{"name", "address", "size", "fields": [...]}]}. */
static void json_layout_begin(const char *layout) {
  json_open("layout_map", '{');
  json_u64("cache_line", CACHE_LINE);
  json_str("layout", layout);
  json_open("objects", '[');
}
static void json_layout_end(void) { json_close(']'); json_close('}'); }
static void json_object_begin(const char *name, const void *addr, size_t size) {
  json_sep();
  json_first = 1;
  putchar('{');
  json_str("name", name);
  json_u64("address", (uintptr_t)addr);
  json_u64("size", size);
  json_open("fields", '[');
}
static void json_object_end(void) { json_close(']'); json_close('}'); }

static void json_u64_array(const char *k, const uint64_t *v, int n) {
  json_open(k, '[');
  for (int i = 0; i < n; i++) { json_sep(); printf("%" PRIu64, v[i]); }
  json_close(']');
}

/* Per interval of the window: will-it-scale's `min: max: total:` over the threads' ops. */
static void json_intervals(const char *k, uint64_t (*counts)[MAX_INTERVALS], struct bench_run *run) {
  int n = run->measure.intervals;
  uint64_t total[MAX_INTERVALS], min[MAX_INTERVALS], max[MAX_INTERVALS];
  for (int j = 0; j < n; j++) {
    total[j] = 0; min[j] = UINT64_MAX; max[j] = 0;
    for (int i = 0; i < run->threads; i++) {
      uint64_t c = counts[i][j];
      total[j] += c;
      if (c < min[j]) min[j] = c;
      if (c > max[j]) max[j] = c;
    }
  }
  json_open(k, '{');
  json_u64_array("total", total, n);
  json_u64_array("min", min, n);
  json_u64_array("max", max, n);
  json_close('}');
}

/* The common head of every benchmark's JSON: what ran, how it was measured, and the ops of the measured
 * part (the window, or all of a fixed-work run) in total, per thread and per interval. */
static void json_run(const char *benchmark, struct bench_run *run) {
  const struct bench_measure *ms = &run->measure;
  uint64_t ops = 0, all = 0, per_thread[MAX_THREADS];
  for (int i = 0; i < run->threads; i++) { per_thread[i] = thread_ops[i].window_ops; ops += per_thread[i]; all += thread_ops[i].all_ops; }
  double secs = (run->t_end - run->t_start) / 1e9;
  json_str("benchmark", benchmark);
  json_open("flags", '{');
  for (int i = 0; i < bench_nflags; i++) json_str(bench_flags[i].name, bench_flags[i].value ? bench_flags[i].value : "off");
  json_close('}');
  json_u64("threads", run->threads);
  json_open("measure", '{');
  json_str("mode", ms->ops ? "fixed-ops" : "window");
  json_u64("warmup_ns", ms->ops ? 0 : ms->warmup_ns);
  json_u64("window_ns", ms->ops ? run->t_end - run->t_start : ms->window_ns);
  json_u64("interval_ns", ms->ops ? run->t_end - run->t_start : ms->interval_ns);
  json_u64("intervals", ms->intervals);
  json_u64("seed", ms->seed);
  json_u64("skew_ns", ms->seed ? ms->skew_ns : 0);
  json_close('}');
  json_u64("ops", ops);
  json_u64("all_ops", all);
  json_f("elapsed_s", secs);
  json_f("ops_per_s", secs > 0 ? ops / secs : 0);
  json_u64_array("per_thread_ops", per_thread, run->threads);
  for (int i = 0; i < run->threads; i++) per_thread[i] = thread_ops[i].skew_ns;
  json_u64_array("start_skew_ns", per_thread, run->threads);
  json_intervals("intervals", interval_ops, run);
  if (aux_name) {   /* "<aux_name>_intervals" */
    char key[64];
    snprintf(key, sizeof key, "%s_intervals", aux_name);
    json_intervals(key, interval_aux, run);
  }
  json_open("per_thread_interval_ops", '[');
  for (int i = 0; i < run->threads; i++) json_u64_array(NULL, interval_ops[i], ms->intervals);
  json_close(']');
  json_u64("pinned_threads", run->pinned);
  json_u64("cache_line", CACHE_LINE);
}

/* ---------------------------------------------------------------- main */
/* What main() does for every workload: flags, the workload's set-up, the threads, then one JSON object on
 * stdout (the common head, then the workload's fields). Exit status: the workload's (0 ok, 1 a check failed,
 * 3 a set-up failure), 2 for bad flags. */
static int bench_main(int argc, char **argv, const char *name, const char *description, struct flag *flags, int nflags,
                      struct bench_run *run, int (*prepare)(void), worker_fn testcase, int (*report)(void)) {
  bench_flags = flags;
  bench_nflags = nflags;
  bench_description = description;
  bench_start(run, argc, argv);
  int status = prepare();
  if (status) return status;
  run_threads(run, testcase);
  json_begin();
  json_run(name, run);
  status = report();
  json_end();
  return run->cleanup ? run->cleanup(status) : status;
}

/* A workload's table and main(): the ids F_<id> of its flags (head, its own, tail), the table, the run, and
 * main() for the testcase_* functions it defines below. BENCH_TESTCASE stands among the workload's statics
 * where `run` belongs: the compiler lays out a file's zero-initialized statics by their order in it, and
 * gem5's home socket of a line is its address modulo the sockets, so a workload keeps its objects where its
 * runs had them by keeping this line where it is. */
#define BENCH_TESTCASE(name, ops_help, TABLE)                                                                      \
  enum { BENCH_HEAD_FLAGS(BENCH_FLAG_ID, ops_help) TABLE(BENCH_FLAG_ID) BENCH_TAIL_FLAGS(BENCH_FLAG_ID) BENCH_NFLAGS };  \
  static struct flag flags[BENCH_NFLAGS] = {BENCH_HEAD_FLAGS(BENCH_FLAG_ENTRY, ops_help) TABLE(BENCH_FLAG_ENTRY)     \
                                                BENCH_TAIL_FLAGS(BENCH_FLAG_ENTRY)};                                    \
  static struct bench_run run;                                                                                       \
  static int testcase_prepare(void);                                                                                 \
  static void testcase(int id);                                                                                      \
  static int testcase_report(void);                                                                                  \
  int main(int argc, char **argv) {                                                                                  \
    return bench_main(argc, argv, name, testcase_description, flags, BENCH_NFLAGS, &run, testcase_prepare, testcase,   \
                      testcase_report);                                                                              \
  }

#endif
