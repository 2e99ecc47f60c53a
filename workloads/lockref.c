/* lockref: every thread repeatedly looks a dentry up and takes and drops a reference on it, like stat(2) on
 * one file from many threads (will-it-scale's pattern, seeds 000 and 004). The layouts (common/dentry.h):
 * `shared` has the count word on the line of the lookup fields (the pre-6.11 dentry), `split` on a line of its
 * own (the 6.11 reorder), `padded` cache-line aligned and padded in an aligned, padded object. The intruder is
 * one more thread that takes the lock for --intruder-hold-ns every --intruder-period-us. */
#include "common/dentry.h"

static const char testcase_description[] = "every thread looks one dentry up and takes and drops a reference on it";

#define TESTCASE_FLAGS(X)                                                                                             \
  X(policy, "policy", "lockref update policy", lockref_policies, "retry100")                                          \
  X(layout, "layout", "where the count word sits", dentry_layouts, "shared")                                          \
  LOCKREF_TUNING_FLAGS(X)                                                                                             \
  X(intruder_period_us, "intruder-period-us", "an intruder takes the lock every P microseconds (0: no intruder)", NULL, "0") \
  X(intruder_hold_ns, "intruder-hold-ns", "how long the intruder holds the lock", NULL, "2000")

static struct dentry_view dentry;
static struct lockref_tuning tuning;
static struct lockref_stats stats[MAX_THREADS];
BENCH_TESTCASE("lockref", "get+put pairs", TESTCASE_FLAGS)
static uint64_t intruder_period_ns, intruder_hold_ns;
static volatile int stop_intruder;
static uint64_t intruder_holds;
static uint64_t lookup_sum[MAX_THREADS][8] __aligned_line;

static void testcase(int id) {
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

static void intruder(int id) {
  (void)id;
  intruder_holds = intruder_holds_lock(dentry.d_lockref, tuning.spinlock, intruder_period_ns, intruder_hold_ns, 0, &stop_intruder);
}

static int testcase_prepare(void) {
  aux_name = "locked_ops";
  tuning = lockref_tuning_from_flags();
  intruder_period_ns = flag_num(intruder_period_us) * 1000;
  intruder_hold_ns = flag_num(intruder_hold_ns);
  static struct dentry_shared parent;
  dentry = dentry_in_layout(flag_text(layout), 0);
  *dentry.d_parent = &parent;
  dentry.d_name->name = "file";
  dentry.d_name->hash_len = 0x4000000a1b2c3dull;
  dentry.d_lockref->count = 1;   /* the dcache's own reference */
  if (intruder_period_ns) { run.intruder = intruder; run.stop_intruder = &stop_intruder; }
  return 0;
}

static int testcase_report(void) {
  int32_t final_count = dentry.d_lockref->count;
  json_lockref_stats(stats, run.threads);
  json_u64("intruder_holds", intruder_holds);
  json_key("final_count"); printf("%d", final_count);
  json_u64("expected_count", 1);
  json_layout_begin(flag_text(layout));
  json_dentry("dentry", &dentry);
  json_object_begin("per_thread_stats", stats, sizeof stats[0] * run.threads);
  json_object_end();
  json_layout_end();
  return final_count == 1 ? 0 : 1;
}
