/* dget_parent/dput: many threads take and drop references on one shared parent dentry, each through a child
 * of its own (seed 000: the AIM7 short workload spent ~78% of its time in these two). */
#include "common/dentry.h"

static const char testcase_description[] = "every thread takes and drops a reference on one parent dentry through a child of its own";

#define TESTCASE_FLAGS(X)                                                                       \
  X(policy, "policy", "lockref update policy of the parent", lockref_policies, "locked")        \
  X(layout, "layout", "layout of the parent dentry", dentry_layouts, "shared")                  \
  LOCKREF_TUNING_FLAGS(X)

/* Each thread's child: its own line, read-only during the run. */
struct child { void *d_parent; uint32_t d_seq; } __aligned_line;

static struct dentry_view parent;
static struct child children[MAX_THREADS];
static struct lockref_tuning tuning;
static struct lockref_stats stats[MAX_THREADS];
BENCH_TESTCASE("dget_parent", "dget_parent+dput pairs", TESTCASE_FLAGS)
static uint64_t retries_seen[MAX_THREADS][8] __aligned_line;

static void testcase(int id) {
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

static int testcase_prepare(void) {
  aux_name = "locked_ops";
  tuning = lockref_tuning_from_flags();
  parent = dentry_in_layout(flag_text(layout), 0);
  parent.d_lockref->count = 1;
  for (int i = 0; i < run.threads; i++) children[i].d_parent = parent.d_lockref;
  return 0;
}

static int testcase_report(void) {
  int32_t final_count = parent.d_lockref->count;
  json_lockref_stats(stats, run.threads);
  json_key("final_count"); printf("%d", final_count);
  json_u64("expected_count", 1);
  json_layout_begin(flag_text(layout));
  json_dentry("parent", &parent);
  json_object_begin("children", children, sizeof children[0] * run.threads);
  json_object_end();
  json_layout_end();
  return final_count == 1 ? 0 : 1;
}
