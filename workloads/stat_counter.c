/* Statistics counters (seed 003): every thread increments one shared atomic counter (`shared`), or its own
 * counter, folded into the shared one every --batch increments (`percpu`, percpu_counter). The per-thread
 * counters are `padded` (each on its own line) or `packed` (adjacent: false sharing). */
#include "common/spinlock.h"

static const char testcase_description[] = "every thread increments one shared counter, or its own, folded into the shared one in batches";

static const char *policies[] = {"shared", "percpu", NULL};
static const char *layouts[] = {"padded", "packed", NULL};
#define TESTCASE_FLAGS(X)                                                                                 \
  X(policy, "policy", "one shared counter, or per-thread counters with a batch", policies, "shared")             \
  X(layout, "layout", "per-thread counters padded or packed", layouts, "padded")                                 \
  X(batch, "batch", "per-thread increments folded into the shared counter at once (percpu)", NULL, "32")

static uint64_t global_count __aligned_line;
static struct { int64_t v; } __aligned_line padded_local[MAX_THREADS];
static int64_t packed_local[MAX_THREADS] __aligned_line;
static int64_t *local_of[MAX_THREADS];
static int percpu;
BENCH_TESTCASE("stat_counter", "increments", TESTCASE_FLAGS)
static uint64_t batch, folds[MAX_THREADS][8] __aligned_line;
static uint64_t done_ops[MAX_THREADS][8] __aligned_line;

static void testcase(int id) {
  int64_t *mine = local_of[id];
  uint64_t done = 0;
  for (struct bench_loop l = bench_loop(&run, id); bench_next(&l); done++) {
    if (!percpu) {
      __atomic_add_fetch(&global_count, 1, __ATOMIC_RELAXED);
    } else {
      int64_t v = READ_ONCE(*mine) + 1;
      if ((uint64_t)v >= batch) {
        __atomic_add_fetch(&global_count, v, __ATOMIC_RELAXED);
        v = 0;
        folds[id][0]++;
      }
      WRITE_ONCE(*mine, v);
    }
  }
  done_ops[id][0] = done;
}

static int testcase_prepare(void) {
  percpu = flag_is(policy, "percpu");
  batch = flag_num(batch);
  if (batch < 1) usage("--batch must be at least 1");
  int padded = flag_is(layout, "padded");
  for (int i = 0; i < run.threads; i++) local_of[i] = padded ? &padded_local[i].v : &packed_local[i];
  touch_object(&global_count, sizeof global_count);
  touch_object(padded ? (void *)padded_local : (void *)packed_local, padded ? sizeof padded_local[0] * run.threads : sizeof packed_local[0] * run.threads);
  return 0;
}

/* percpu_counter_sum: the shared value plus what is still local */
static int testcase_report(void) {
  uint64_t ops = 0, nfolds = 0, sum = global_count;
  for (int i = 0; i < run.threads; i++) { ops += done_ops[i][0]; nfolds += folds[i][0]; sum += *local_of[i]; }
  int ok = sum == ops, padded = flag_is(layout, "padded");
  json_u64("shared_value", global_count);
  json_u64("summed_value", sum);
  json_u64("expected_value", ops);
  json_u64("folds", nfolds);
  json_str("invariants", ok ? "ok" : "violated");
  json_layout_begin(flag_text(layout));
  json_object_begin("global_count", &global_count, sizeof global_count);
  json_field("value", &global_count, sizeof global_count);
  json_object_end();
  size_t stride = padded ? sizeof padded_local[0] : sizeof packed_local[0];
  json_object_begin("local_counters", local_of[0], stride * run.threads);
  json_indexed_fields("local", local_of[0], stride, sizeof *local_of[0], run.threads);
  json_object_end();
  json_layout_end();
  return ok ? 0 : 1;
}
