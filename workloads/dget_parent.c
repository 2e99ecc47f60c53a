/* dget_parent/dput: many threads take and drop references on one shared parent dentry, each through
 * a child of its own (seed 000: the AIM7 short workload spent ~78% of its time in these two).
 *
 *   --policy  locked | cmpxchg | retry100 | trywait | unified
 *   --layout  shared | split | padded   (the parent's layout)
 */
#include "common/dentry.h"

static struct flag flags[] = {
    FLAG_THREADS,
    FLAG_MEASURE("dget_parent+dput pairs"),
    {"policy", "lockref update policy of the parent", lockref_policies, "locked"},
    {"layout", "layout of the parent dentry", dentry_layouts, "shared"},
    LOCKREF_TUNING_FLAGS,
    FLAG_M5,
};
enum { F_THREADS, F_OPS, F_WARMUP, F_WINDOW, F_INTERVAL, F_SEED, F_SKEW, F_POLICY, F_LAYOUT, F_RETRIES, F_WAIT, F_SPINLOCK, F_M5 };

/* Each thread's child: its own line, read-only during the run. */
struct child { void *d_parent; uint32_t d_seq; } __aligned_line;

static struct dentry_view parent;
static struct child children[MAX_THREADS];
static struct lockref_tuning tuning;
static struct lockref_stats stats[MAX_THREADS];
static struct bench_run run;
static uint64_t retries_seen[MAX_THREADS][8] __aligned_line;

static void worker(int id, void *arg) {
  (void)arg;
  struct child *me = &children[id];
  struct lockref_stats *st = &stats[id];
  for (struct bench_loop l = bench_loop(&run, id); bench_next_lockref(&l, st);) {
    uint64_t locked = st->locked_ops;
    /* dget_parent: read d_parent (RCU), reference it, and check it did not change meanwhile */
    for (;;) {
      struct lockref *p = READ_ONCE(me->d_parent);
      lockref_get(p, &tuning, st);
      if (READ_ONCE(me->d_parent) == p) break;
      lockref_put(p, &tuning, st);
      retries_seen[id][0]++;
    }
    (void)READ_ONCE(*parent.d_seq);
    lockref_put(parent.d_lockref, &tuning, st);   /* dput */
    st->ops++;
    bench_count_aux(&l, st->locked_ops - locked);
  }
}

int main(int argc, char **argv) {
  run = bench_start(argc, argv, flags, NFLAGS(flags), F_THREADS, F_OPS, F_M5);
  aux_name = "locked_ops";
  tuning = lockref_tuning_from_flags(flags, NFLAGS(flags), F_POLICY, F_RETRIES);
  parent = dentry_in_layout(flags[F_LAYOUT].value, 0);
  parent.d_lockref->count = 1;
  for (int i = 0; i < run.threads; i++) children[i].d_parent = parent.d_lockref;

  run_threads(&run, worker, NULL, 0, NULL, NULL);

  struct lockref_stats total = lockref_stats_total(stats, run.threads);
  int32_t final_count = parent.d_lockref->count;
  json_begin();
  json_run("dget_parent", &run, flags, NFLAGS(flags));
  json_lockref_stats(&total);
  json_key("final_count"); printf("%d", final_count);
  json_u64("expected_count", 1);
  json_layout_begin(flags[F_LAYOUT].value);
  json_dentry("parent", &parent);
  json_object_begin("children", children, sizeof children[0] * run.threads);
  json_object_end();
  json_layout_end();
  json_end();
  return final_count == 1 ? 0 : 1;
}
