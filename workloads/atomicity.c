/* Whether the machine keeps x86's locked read-modify-writes atomic (issue 34: gem5 makes them atomic only where a
 * protocol's L1 holds back snoops to a line between the locked read and its write; docs/machine.md). Every thread
 * increments one shared count with the instruction its policy names, on one line all threads hammer:
 *   xadd:     `lock xadd` (atomic_inc, the ticket lock's ticket);
 *   cmpxchg:  a `lock cmpxchg` retry loop (lockref's fast path, qspinlock's trylock);
 *   xchg:     `xchg` as a test-and-set lock, whose holder increments a plain count beside it on the line;
 *   ticket:   3.10's ticket lock around the same plain count: `lock xadd` takes a ticket, the holder's 16-bit
 *             store of the next one releases. Two xadds that read the same tail hand one ticket out twice:
 *             both holders enter, the head then passes the next ticket, and its waiter would spin for ever;
 *             here it sees the head pass and counts a lost ticket instead.
 * The count must equal the operations done: a lost increment means a snoop took the line between a locked
 * instruction's read and its write (two xchg winners, or an xadd/cmpxchg that wrote over a newer value). */
#define BENCH_OPS_DEFAULT "2000"   /* a check of fixed work (every increment counted), never drawn as throughput */
#include "common/spinlock.h"

static const char testcase_description[] = "every thread increments one shared count by a locked instruction; the count must add up";

static const char *policies[] = {"xadd", "cmpxchg", "xchg", "ticket", NULL};
static const char *layouts[] = {"line", NULL};
#define TESTCASE_FLAGS(X)                                                                                        \
  X(policy, "policy", "the locked instruction: lock xadd, a lock cmpxchg loop, or an xchg or ticket lock around a plain count", \
    policies, "xadd")                                                                                             \
  X(layout, "layout", "the lock word and the count share one line", layouts, "line")

static struct { uint32_t lock; uint32_t pad; uint64_t count; } __aligned_line hot;
BENCH_TESTCASE("atomicity", "increments", TESTCASE_FLAGS)
static enum { XADD, CMPXCHG, XCHG, TICKET } kind;
static uint64_t done_ops[MAX_THREADS][8] __aligned_line;   /* [0]: increments done, [1]: tickets lost */

/* The ticket lock of common/spinlock.h, but a waiter whose ticket the head has passed returns 0 (a ticket handed
 * out twice) instead of spinning until the 16-bit head wraps round to it. */
static int ticket_lock_checked(uint32_t *lock) {
  uint16_t mine = (uint16_t)(__atomic_fetch_add(lock, 1u << 16, __ATOMIC_ACQUIRE) >> 16);
  for (uint16_t head; (head = __atomic_load_n((ticket_t *)lock, __ATOMIC_ACQUIRE)) != mine; cpu_relax())
    if ((int16_t)(head - mine) > 0) return 0;
  return 1;
}

static void testcase(int id) {
  uint64_t done = 0;
  for (struct bench_loop l = bench_loop(&run, id); bench_next(&l); done++) {
    switch (kind) {
      case XADD: __atomic_fetch_add(&hot.count, 1, __ATOMIC_RELAXED); break;
      case CMPXCHG: {
        uint64_t old = READ_ONCE(hot.count);
        while (!__atomic_compare_exchange_n(&hot.count, &old, old + 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
        break;
      }
      case XCHG:
        tas_lock(&hot.lock);   /* xchg of 1 until it returns 0 */
        WRITE_ONCE(hot.count, READ_ONCE(hot.count) + 1);
        tas_unlock(&hot.lock);
        break;
      case TICKET:
        if (!ticket_lock_checked(&hot.lock)) { done_ops[id][1]++; done--; break; }
        WRITE_ONCE(hot.count, READ_ONCE(hot.count) + 1);
        ticket_unlock(&hot.lock);
        break;
    }
  }
  done_ops[id][0] = done;
}

static int testcase_prepare(void) {
  kind = flag_is(policy, "xadd") ? XADD : flag_is(policy, "cmpxchg") ? CMPXCHG : flag_is(policy, "xchg") ? XCHG : TICKET;
  touch_object(&hot, sizeof hot);
  return 0;
}

static int testcase_report(void) {
  uint64_t ops = 0, lost_tickets = 0;
  for (int i = 0; i < run.threads; i++) { ops += done_ops[i][0]; lost_tickets += done_ops[i][1]; }
  int free = kind == TICKET ? !spin_value_locked(hot.lock, SPIN_TICKET) : hot.lock == 0;
  int ok = hot.count == ops && free && !lost_tickets;
  json_u64("count", hot.count);
  json_u64("lost_increments", ops > hot.count ? ops - hot.count : 0);
  json_u64("lost_tickets", lost_tickets);
  json_str("invariants", ok ? "ok" : "violated");   /* every increment counted once, the lock free at the end */
  json_layout_begin(flag_text(layout));
  json_object_begin("hot", &hot, sizeof hot);
  json_field("lock", &hot.lock, sizeof hot.lock);
  json_field("count", &hot.count, sizeof hot.count);
  json_object_end();
  json_layout_end();
  return ok ? 0 : 1;
}
