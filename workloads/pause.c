/* What a spin-wait poll costs (issue 32: gem5 decodes x86 PAUSE as a no-op). Each operation is --polls polls of
 * a line the thread alone reads (an L1 hit), each followed by cpu_relax() (`pause`: the PAUSE instruction every
 * spin loop of the workloads and of the kernel uses) or by nothing but a compiler barrier (`plain`). Ops per µs
 * give the time of one bounded wait such as trywait's 100 polls: on hardware PAUSE stalls the core (tens to
 * about a hundred cycles, by generation); where PAUSE is a no-op the two policies run at the same speed. */
#include "common/spinlock.h"

static const char testcase_description[] = "every thread polls a line of its own, with or without PAUSE after each poll";

static const char *policies[] = {"pause", "plain", NULL};
static const char *layouts[] = {"private", NULL};
#define TESTCASE_FLAGS(X)                                                                                      \
  X(policy, "policy", "what follows each poll: the PAUSE instruction (cpu_relax), or nothing", policies, "pause")    \
  X(layout, "layout", "each thread polls its own line", layouts, "private")                                         \
  X(polls, "polls", "polls per operation (trywait's budget: 100)", NULL, "100")

static struct { uint64_t word; } __aligned_line polled[MAX_THREADS];
BENCH_TESTCASE("pause", "bounded waits (--polls polls each)", TESTCASE_FLAGS)
static int relax;
static uint64_t polls, seen[MAX_THREADS][8] __aligned_line;

static void testcase(int id) {
  uint64_t sum = 0;
  for (struct bench_loop l = bench_loop(&run, id); bench_next(&l);) {
    for (uint64_t i = 0; i < polls; i++) {
      sum += READ_ONCE(polled[id].word);   /* the poll: a load, as in trywait_unlocked's spin_is_locked */
      if (relax) cpu_relax();
      else __asm__ __volatile__("" ::: "memory");
    }
  }
  seen[id][0] = sum;   /* keeps the loads */
}

static int testcase_prepare(void) {
  relax = flag_is(policy, "pause");
  polls = flag_num(polls);
  if (polls < 1) usage("--polls must be at least 1");
  touch_object(polled, sizeof polled[0] * run.threads);
  return 0;
}

static int testcase_report(void) {
  uint64_t sum = 0;
  for (int i = 0; i < run.threads; i++) sum += seen[i][0];
  json_u64("polls_per_op", polls);
  json_str("invariants", sum == 0 ? "ok" : "violated");   /* nobody writes the polled lines */
  json_layout_begin(flag_text(layout));
  json_object_begin("polled", polled, sizeof polled[0] * run.threads);
  json_indexed_fields("polled", &polled[0].word, sizeof polled[0], sizeof polled[0].word, run.threads);
  json_object_end();
  json_layout_end();
  return sum == 0 ? 0 : 1;
}
