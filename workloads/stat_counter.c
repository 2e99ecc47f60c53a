/* Statistics counters (seed 003): every thread increments one shared atomic counter (`shared`), or
 * its own counter, folded into the shared one every --batch increments (`percpu`, percpu_counter).
 *
 *   --policy  shared | percpu
 *   --layout  padded (each thread's counter on its own line) | packed (adjacent: false sharing)
 */
#include "common/spinlock.h"

static const char *policies[] = {"shared", "percpu", NULL};
static const char *layouts[] = {"padded", "packed", NULL};
static struct flag flags[] = {
    FLAG_THREADS,
    FLAG_MEASURE("increments"),
    {"policy", "one shared counter, or per-thread counters with a batch", policies, "shared"},
    {"layout", "per-thread counters padded or packed", layouts, "padded"},
    {"batch", "per-thread increments folded into the shared counter at once (percpu)", NULL, "32"},
    FLAG_M5,
};
enum { F_THREADS, F_OPS, F_WARMUP, F_WINDOW, F_INTERVAL, F_SEED, F_SKEW, F_POLICY, F_LAYOUT, F_BATCH, F_M5 };

static uint64_t global_count __aligned_line;
static struct { int64_t v; } __aligned_line padded_local[MAX_THREADS];
static int64_t packed_local[MAX_THREADS] __aligned_line;
static int64_t *local_of[MAX_THREADS];
static int percpu;
static struct bench_run run;
static uint64_t batch, folds[MAX_THREADS][8] __aligned_line;
static uint64_t done_ops[MAX_THREADS][8] __aligned_line;

static void worker(int id, void *arg) {
  (void)arg;
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

int main(int argc, char **argv) {
  run = bench_start(argc, argv, flags, NFLAGS(flags), F_THREADS, F_OPS, F_M5);
  percpu = !strcmp(flags[F_POLICY].value, "percpu");
  batch = flag_num(&flags[F_BATCH]);
  if (batch < 1) usage(flags, NFLAGS(flags), "--batch must be at least 1");
  int padded = !strcmp(flags[F_LAYOUT].value, "padded");
  for (int i = 0; i < run.threads; i++) local_of[i] = padded ? &padded_local[i].v : &packed_local[i];
  touch_object(&global_count, sizeof global_count);
  touch_object(padded ? (void *)padded_local : (void *)packed_local, padded ? sizeof padded_local[0] * run.threads : sizeof packed_local[0] * run.threads);

  run_threads(&run, worker, NULL, 0, NULL, NULL);

  /* percpu_counter_sum: the shared value plus what is still local */
  uint64_t ops = 0, nfolds = 0, sum = global_count;
  for (int i = 0; i < run.threads; i++) { ops += done_ops[i][0]; nfolds += folds[i][0]; sum += *local_of[i]; }
  int ok = sum == ops;
  json_begin();
  json_run("stat_counter", &run, flags, NFLAGS(flags));
  json_u64("shared_value", global_count);
  json_u64("summed_value", sum);
  json_u64("expected_value", ops);
  json_u64("folds", nfolds);
  json_str("invariants", ok ? "ok" : "violated");
  json_layout_begin(flags[F_LAYOUT].value);
  json_object_begin("global_count", &global_count, sizeof global_count);
  json_field("value", &global_count, sizeof global_count);
  json_object_end();
  json_object_begin("local_counters", local_of[0], padded ? sizeof padded_local[0] * run.threads : sizeof packed_local[0] * run.threads);
  for (int i = 0; i < run.threads && i < 64; i++) {
    char name[32];
    snprintf(name, sizeof name, "local[%d]", i);
    json_field(name, local_of[i], sizeof *local_of[i]);
  }
  json_object_end();
  json_layout_end();
  json_end();
  return ok ? 0 : 1;
}
