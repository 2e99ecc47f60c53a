/* One line under contention, as the seeds' hot paths contend it (issue 55: a machine checked under contention, not
 * only one operation at a time). Every thread, for the window, does what its policy names on one shared line:
 *   xadd:      `lock xadd` of a count (atomic_inc; the ticket lock's ticket);
 *   cmpxchg:   a load, then a `lock cmpxchg` retry loop on the count (lockref's fast path);
 *   ticket:    3.10's ticket lock around a plain count (FIFO: the line goes to every waiter in turn);
 *   qspinlock: 6.12's queued spinlock around it (common/qspinlock.h: waiters past the second spin on their own
 *              nodes, and the queue's head takes the lock next).
 * Ops per µs at each thread count and placement are the machine's contended throughput; for the locks, each
 * acquisition after another thread's is a handoff, counted by the holder (the line's last holder is on it), so
 * the window over the handoffs is the handoff time. The count must equal the operations done. */
#include "common/spinlock.h"

static const char testcase_description[] = "every thread updates one shared line by a locked instruction or under a lock";

static const char *policies[] = {"xadd", "cmpxchg", "ticket", "qspinlock", NULL};
static const char *layouts[] = {"line", NULL};
#define TESTCASE_FLAGS(X)                                                                                        \
  X(policy, "policy", "lock xadd, a load + lock cmpxchg loop, or a ticket or queued spinlock around a plain count", \
    policies, "xadd")                                                                                             \
  X(layout, "layout", "the lock word, the count and the last holder share one line", layouts, "line")

static struct { uint32_t lock; uint32_t last; uint64_t count; } __aligned_line hot;
BENCH_TESTCASE("contention", "updates of the shared line", TESTCASE_FLAGS)
static enum { XADD, CMPXCHG, TICKET, QSPINLOCK } kind;
static uint64_t done_ops[MAX_THREADS][8] __aligned_line;   /* [0]: updates done, [1]: lock handoffs taken */

/* The count's update under the lock, and whether the lock came from another thread (last holds id + 1; 0: none). */
static inline uint64_t locked_update(int id) {
  uint32_t me = (uint32_t)id + 1, before = READ_ONCE(hot.last);
  WRITE_ONCE(hot.count, READ_ONCE(hot.count) + 1);
  WRITE_ONCE(hot.last, me);
  return before != 0 && before != me;
}

static void testcase(int id) {
  uint64_t done = 0, handoffs = 0;
  for (struct bench_loop l = bench_loop(&run, id); bench_next(&l); done++) {
    switch (kind) {
      case XADD: __atomic_fetch_add(&hot.count, 1, __ATOMIC_RELAXED); break;
      case CMPXCHG: {
        uint64_t old = READ_ONCE(hot.count);
        while (!__atomic_compare_exchange_n(&hot.count, &old, old + 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
        break;
      }
      case TICKET:
        ticket_lock(&hot.lock);
        handoffs += locked_update(id);
        ticket_unlock(&hot.lock);
        break;
      case QSPINLOCK:
        queued_spin_lock(QSPIN(&hot.lock));
        handoffs += locked_update(id);
        queued_spin_unlock(QSPIN(&hot.lock));
        break;
    }
  }
  done_ops[id][0] = done;
  done_ops[id][1] = handoffs;
}

static int testcase_prepare(void) {
  kind = flag_is(policy, "xadd") ? XADD : flag_is(policy, "cmpxchg") ? CMPXCHG : flag_is(policy, "ticket") ? TICKET
                                                                                                         : QSPINLOCK;
  if (kind == QSPINLOCK) qspinlock_setup();
  touch_object(&hot, sizeof hot);
  return 0;
}

static int testcase_report(void) {
  uint64_t ops = 0, handoffs = 0;
  for (int i = 0; i < run.threads; i++) { ops += done_ops[i][0]; handoffs += done_ops[i][1]; }
  enum spinlock_kind lock_kind = kind == TICKET ? SPIN_TICKET : SPIN_QSPINLOCK;
  int free = kind == XADD || kind == CMPXCHG || !spin_value_locked(hot.lock, lock_kind);
  int ok = hot.count == ops && free && handoffs < ops + (ops == 0);
  json_u64("count", hot.count);
  json_u64("handoffs", handoffs);   /* locks only: acquisitions after another thread's */
  json_str("invariants", ok ? "ok" : "violated");   /* every update counted once, the lock free at the end */
  json_layout_begin(flag_text(layout));
  json_object_begin("hot", &hot, sizeof hot);
  json_field("lock", &hot.lock, sizeof hot.lock);
  json_field("last", &hot.last, sizeof hot.last);
  json_field("count", &hot.count, sizeof hot.count);
  json_object_end();
  json_layout_end();
  return ok ? 0 : 1;
}
