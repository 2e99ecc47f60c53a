/* lockref: every thread repeatedly looks a dentry up and takes and drops a reference on it, like
 * stat(2) on one file from many threads (will-it-scale's pattern, seeds 000 and 004).
 *
 *   --policy  locked | cmpxchg | retry100 | trywait | unified   how the count word is updated
 *   --layout  shared  the count word on the line of the lookup fields (pre-6.11 dentry)
 *             split   the count word moved to a line of its own (the 6.11 reorder)
 *             padded  the count word cache-line aligned and padded, object aligned and padded
 *   --intruder-period-us P --intruder-hold-ns H   one more thread takes the lock for H ns every P us
 */
#include "common/dentry.h"

static struct flag flags[] = {
    FLAG_THREADS,
    FLAG_MEASURE("get+put pairs"),
    {"policy", "lockref update policy", lockref_policies, "retry100"},
    {"layout", "where the count word sits", dentry_layouts, "shared"},
    LOCKREF_TUNING_FLAGS,
    {"intruder-period-us", "an intruder takes the lock every P microseconds (0: no intruder)", NULL, "0"},
    {"intruder-hold-ns", "how long the intruder holds the lock", NULL, "2000"},
    FLAG_M5,
};
enum { F_THREADS, F_OPS, F_WARMUP, F_WINDOW, F_INTERVAL, F_SEED, F_SKEW, F_POLICY, F_LAYOUT, F_RETRIES, F_WAIT, F_SPINLOCK, F_IPERIOD, F_IHOLD, F_M5 };

static struct dentry_view dentry;
static struct lockref_tuning tuning;
static struct lockref_stats stats[MAX_THREADS];
static struct bench_run run;
static uint64_t intruder_period_ns, intruder_hold_ns;
static volatile int stop_intruder;
static uint64_t intruder_holds;
static uint64_t lookup_sum[MAX_THREADS][8] __aligned_line;

static void worker(int id, void *arg) {
  (void)arg;
  struct lockref_stats *st = &stats[id];
  uint64_t sum = 0;
  for (struct bench_loop l = bench_loop(&run, id); bench_next_lockref(&l, st);) {
    uint64_t locked = st->locked_ops;
    /* the RCU-walk part of a lookup: read-mostly fields */
    sum += READ_ONCE(*dentry.d_seq) + READ_ONCE(*dentry.d_flags) + READ_ONCE(dentry.d_hash[0]) +
           READ_ONCE(dentry.d_name->hash_len) + (uintptr_t)READ_ONCE(*dentry.d_parent);
    lockref_get(dentry.d_lockref, &tuning, st);
    lockref_put(dentry.d_lockref, &tuning, st);
    st->ops++;
    bench_count_aux(&l, st->locked_ops - locked);
  }
  lookup_sum[id][0] = sum;
}

static void intruder(int id, void *arg) {
  (void)id; (void)arg;
  intruder_holds = intruder_holds_lock(dentry.d_lockref, tuning.spinlock, intruder_period_ns, intruder_hold_ns, 0, &stop_intruder);
}

int main(int argc, char **argv) {
  run = bench_start(argc, argv, flags, NFLAGS(flags), F_THREADS, F_OPS, F_M5);
  aux_name = "locked_ops";
  tuning = lockref_tuning_from_flags(flags, NFLAGS(flags), F_POLICY, F_RETRIES);
  intruder_period_ns = flag_num(&flags[F_IPERIOD]) * 1000;
  intruder_hold_ns = flag_num(&flags[F_IHOLD]);
  const char *layout = flags[F_LAYOUT].value;

  static struct dentry_shared parent;
  dentry = dentry_in_layout(layout, 0);
  *dentry.d_parent = &parent;
  dentry.d_name->name = "file";
  dentry.d_name->hash_len = 0x4000000a1b2c3dull;
  dentry.d_lockref->count = 1;   /* the dcache's own reference */

  int extra = intruder_period_ns ? 1 : 0;
  run_threads(&run, worker, NULL, extra, intruder, &stop_intruder);

  struct lockref_stats total = lockref_stats_total(stats, run.threads);
  int32_t final_count = dentry.d_lockref->count;
  json_begin();
  json_run("lockref", &run, flags, NFLAGS(flags));
  json_lockref_stats(&total);
  json_u64("intruder_holds", intruder_holds);
  json_key("final_count"); printf("%d", final_count);
  json_u64("expected_count", 1);
  json_layout_begin(layout);
  json_dentry("dentry", &dentry);
  json_object_begin("per_thread_stats", stats, sizeof stats[0] * run.threads);
  json_object_end();
  json_layout_end();
  json_end();
  return final_count == 1 ? 0 : 1;
}
