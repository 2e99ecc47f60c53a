/* Shared harness of the cohtb workloads: flags, a start barrier, timing, affinity, gem5 region-of-
 * interest markers and JSON output (one object on stdout). Header-only so each benchmark is one file. */
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
struct flag {
  const char *name;   /* without the leading -- */
  const char *help;
  const char **choices; /* NULL-terminated, or NULL for a number, or FLAG_TEXT for any text */
  const char *value;  /* default, then the parsed text */
};
static const char *FLAG_TEXT[] __attribute__((unused)) = {NULL};   /* no choices listed: any text (a path) */

/* The flags every workload has, in one wording. */
#define FLAG_THREADS {"threads", "worker threads (thread 0 is the main thread)", NULL, "2"}
#define FLAG_M5 {"m5", "mark the region of interest with gem5 work-begin/work-end", NULL, NULL}
/* How a run is measured (will-it-scale's way by default: every thread runs for a warm-up and then a
 * window of time, ops counted per thread and per interval; --ops N is fixed work instead). */
#define FLAG_MEASURE(ops_help)                                                                              \
  {"ops", ops_help " per thread, fixed work (0: run for --warmup-us + --window-us instead)", NULL, "0"},    \
  {"warmup-us", "time every thread runs before the window (microseconds)", NULL, "100000"},                 \
  {"window-us", "the measured window (microseconds; simulated time in gem5)", NULL, "1000000"},             \
  {"interval-us", "ops are counted per interval of this length within the window", NULL, "100000"},         \
  {"seed", "perturbs the start: thread i waits a seeded-random 0..--skew-ns before its first op (0: none)", NULL, "0"}, \
  {"skew-ns", "largest start skew with --seed", NULL, "1000"}

static const char *bench_name;

static void usage(struct flag *flags, int n, const char *why, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", bench_name);
  va_start(ap, why);
  vfprintf(stderr, why, ap);
  va_end(ap);
  fprintf(stderr, "\nusage: %s [flags]\n", bench_name);
  for (int i = 0; i < n; i++) {
    fprintf(stderr, "  --%-18s %s (default %s", flags[i].name, flags[i].help, flags[i].value ? flags[i].value : "off");
    if (flags[i].choices && *flags[i].choices) {
      fprintf(stderr, "; one of");
      for (const char **c = flags[i].choices; *c; c++) fprintf(stderr, " %s", *c);
    }
    fprintf(stderr, ")\n");
  }
  exit(2);
}

/* --describe: the flags as JSON, so cohtb takes policies, layouts and defaults from the binary itself. */
static void describe(struct flag *flags, int n) {
  printf("{\"benchmark\": \"%s\", \"flags\": [", bench_name);
  for (int i = 0; i < n; i++) {
    printf("%s{\"name\": \"%s\", \"help\": \"%s\", ", i ? ", " : "", flags[i].name, flags[i].help);
    if (flags[i].value) printf("\"default\": \"%s\", ", flags[i].value); else printf("\"default\": null, ");
    printf("\"choices\": ");
    if (!flags[i].choices) printf("null}");
    else {
      printf("[");
      for (const char **c = flags[i].choices; *c; c++) printf("%s\"%s\"", c == flags[i].choices ? "" : ", ", *c);
      printf("]}");
    }
  }
  printf("]}\n");
  exit(0);
}

/* Parses --name value / --name=value; boolean flags (value NULL by default) take no value. */
static void parse_flags(int argc, char **argv, struct flag *flags, int n) {
  bench_name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  for (int a = 1; a < argc; a++) {
    if (strncmp(argv[a], "--", 2) != 0) usage(flags, n, "unexpected argument '%s'", argv[a]);
    if (!strcmp(argv[a], "--help")) usage(flags, n, "help");
    if (!strcmp(argv[a], "--describe")) describe(flags, n);
    char *name = argv[a] + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    int i;
    for (i = 0; i < n; i++)
      if (strlen(flags[i].name) == len && !strncmp(flags[i].name, name, len)) break;
    if (i == n) usage(flags, n, "unknown flag '%s'", argv[a]);
    if (flags[i].value == NULL && !flags[i].choices && !eq) { flags[i].value = "on"; continue; }
    const char *v = eq ? eq + 1 : (a + 1 < argc ? argv[++a] : NULL);
    if (!v) usage(flags, n, "--%s needs a value", flags[i].name);
    if (flags[i].choices) {
      const char **c;
      for (c = flags[i].choices; *c && strcmp(*c, v); c++) {}
      if (!*c && *flags[i].choices) usage(flags, n, "--%s: '%s' is not a choice", flags[i].name, v);
    } else {
      char *end;
      errno = 0;
      long long x = strtoll(v, &end, 10);
      if (errno || *end || x < 0) usage(flags, n, "--%s: '%s' is not a non-negative whole number", flags[i].name, v);
    }
    flags[i].value = v;
  }
}

static long long flag_num(struct flag *f) { return f->value ? atoll(f->value) : 0; }
static int flag_on(struct flag *f) { return f->value != NULL && strcmp(f->value, "off") != 0; }

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

/* Parses the command line and starts a run from its FLAG_THREADS, FLAG_MEASURE and FLAG_M5 entries (at
 * f_threads, f_measure and f_m5 of flags); bad values end the program with the usage text. */
static struct bench_run bench_start(int argc, char **argv, struct flag *flags, int nflags, int f_threads, int f_measure, int f_m5) {
  parse_flags(argc, argv, flags, nflags);
  struct bench_run run = {.threads = (int)flag_num(&flags[f_threads]), .m5 = flag_on(&flags[f_m5])};
  if (run.threads < 1 || run.threads >= MAX_THREADS) usage(flags, nflags, "--threads must be 1..%d", MAX_THREADS - 1);
  struct flag *m = &flags[f_measure];
  struct bench_measure *ms = &run.measure;
  ms->ops = flag_num(&m[0]);
  ms->warmup_ns = flag_num(&m[1]) * 1000;
  ms->window_ns = flag_num(&m[2]) * 1000;
  ms->interval_ns = flag_num(&m[3]) * 1000;
  ms->seed = flag_num(&m[4]);
  ms->skew_ns = flag_num(&m[5]);
  if (ms->ops == 0) {
    if (ms->window_ns == 0 || ms->interval_ns == 0) usage(flags, nflags, "--window-us and --interval-us must be positive (or give --ops)");
    if (ms->window_ns % ms->interval_ns) usage(flags, nflags, "--window-us must be a whole number of --interval-us");
    if (ms->window_ns / ms->interval_ns > MAX_INTERVALS) usage(flags, nflags, "at most %d intervals per window", MAX_INTERVALS);
    if (ms->seed && ms->skew_ns >= ms->warmup_ns) usage(flags, nflags, "--skew-ns must be shorter than the warm-up");
    ms->intervals = (int)(ms->window_ns / ms->interval_ns);
  } else {
    if (ms->seed) usage(flags, nflags, "--seed perturbs a timed run; with --ops there is no warm-up to absorb it");
    ms->intervals = 1;
  }
  touch_object(interval_ops, sizeof interval_ops[0] * run.threads);
  touch_object(interval_aux, sizeof interval_aux[0] * run.threads);
  touch_object(thread_ops, sizeof thread_ops[0] * run.threads);
  return run;
}

/* splitmix64: the seeded start skew of each thread, the same on every machine. */
static inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* One thread's measurement loop:  for (struct bench_loop l = bench_loop(run, id); bench_next(&l);) { op }
 * An op belongs to the phase (warm-up, window, after) and interval in which it started. Thread 0 marks
 * the window for gem5 (m5 work-begin when it first sees the window open, work-end when it sees it close). */
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

typedef void (*worker_fn)(int id, void *arg);

struct worker_ctx {
  struct bench_run *run;
  worker_fn fn;
  void *arg;
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
  w->fn(w->id, w->arg);
  return NULL;
}

/* Runs fn(0..threads-1) concurrently: thread 0 is the main thread, so N threads need N CPUs in gem5.
 * `extra` more threads (an intruder) run extra_fn and are released with the rest; stop_extra is set
 * once the workers are done so the extras can leave. */
static void run_threads(struct bench_run *run, worker_fn fn, void *arg, int extra, worker_fn extra_fn, volatile int *stop_extra) {
  int total = run->threads + extra;
  int fixed = run->measure.ops != 0;
  pthread_t tid[MAX_THREADS];
  /* First marker (id 1): the contended objects are set up and their pages mapped; gem5's config stops
   * logging TLB mappings here, before thread creation and the start barrier flood the TLB log. */
  if (run->m5) m5_work_begin(1, 0);
  struct worker_ctx ctx[MAX_THREADS];
  run->pinned = 0;
  for (int i = 1; i < total; i++) {
    ctx[i] = (struct worker_ctx){run, i < run->threads ? fn : extra_fn, arg, i < run->threads ? i : i - run->threads, i, 0};
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
  fn(0, arg);
  for (int i = 1; i < run->threads; i++) pthread_join(tid[i], NULL);
  if (fixed) {
    run->t_start = run->t_release;
    run->t_end = now_ns();
    if (run->m5) m5_work_end(0, 0);
  } else {
    run->t_start = run->t_release + run->measure.warmup_ns;
    run->t_end = run->t_start + run->measure.window_ns;
  }
  if (stop_extra) WRITE_ONCE(*stop_extra, 1);
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
static void json_run(const char *benchmark, struct bench_run *run, struct flag *flags, int nflags) {
  const struct bench_measure *ms = &run->measure;
  uint64_t ops = 0, all = 0, per_thread[MAX_THREADS];
  for (int i = 0; i < run->threads; i++) { per_thread[i] = thread_ops[i].window_ops; ops += per_thread[i]; all += thread_ops[i].all_ops; }
  double secs = (run->t_end - run->t_start) / 1e9;
  json_str("benchmark", benchmark);
  json_open("flags", '{');
  for (int i = 0; i < nflags; i++) json_str(flags[i].name, flags[i].value ? flags[i].value : "off");
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

#define NFLAGS(a) ((int)(sizeof(a) / sizeof((a)[0])))

#endif
