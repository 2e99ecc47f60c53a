/* lockref: a spinlock and a reference count in one 64-bit word, updated by cmpxchg (lib/lockref.c),
 * with the retry policies of the seeds (000: 2013, 004: 2019 mainline, 2024 v1, 2024 rework). */
#ifndef COHTB_LOCKREF_H
#define COHTB_LOCKREF_H

#include "spinlock.h"

struct lockref {
  union {
    uint64_t lock_count;
    struct {
      uint32_t lock;   /* a spinlock.h lock word (free: halves equal for tas and ticket, 0 for qspinlock) */
      int32_t count;
    };
  };
};

enum lockref_policy { POLICY_LOCKED, POLICY_CMPXCHG, POLICY_RETRY100, POLICY_TRYWAIT, POLICY_UNIFIED };
static const char *lockref_policies[] = {"locked", "cmpxchg", "retry100", "trywait", "unified", NULL};

struct lockref_stats {
  uint64_t ops, updates, locked_ops, cmpxchg_fails, waits;   /* updates: lockref gets and puts */
} __aligned_line;

struct lockref_tuning {
  enum lockref_policy policy;
  int retries;      /* cmpxchg attempts before locking (retry100, trywait, unified) */
  int wait_polls;   /* polls for unlock before locking (trywait) */
  enum spinlock_kind spinlock;   /* the lock word's lock, taken on the locked path; what "unlocked" means */
};

/* The functions below take the lock kind k as an argument and are always inlined: lockref_add calls them
 * with k a constant, once per kind, so no loop tests the kind (tas and ticket run the loops they ran before
 * qspinlock was a kind). */
#define LOCKREF_INLINE static inline __attribute__((always_inline))

/* !arch_spin_value_unlocked(old.lock): for a qspinlock, any of locked, pending or a queued tail. */
LOCKREF_INLINE int lockref_locked(struct lockref v, enum spinlock_kind k) { return spin_value_locked(v.lock, k); }

/* The CMPXCHG_LOOP of lib/lockref.c: add delta while the lock is free. `budget` < 0 is unbounded
 * (2013). Returns 1 on success, 0 when it saw the lock held or ran out of budget. */
LOCKREF_INLINE int cmpxchg_loop(struct lockref *lr, int delta, int budget, struct lockref_stats *st, enum spinlock_kind k) {
  struct lockref old, new;
  old.lock_count = __atomic_load_n(&lr->lock_count, __ATOMIC_RELAXED);
  while (!lockref_locked(old, k)) {
    new = old;
    new.count += delta;
    if (__atomic_compare_exchange_n(&lr->lock_count, &old.lock_count, new.lock_count, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
      return 1;
    st->cmpxchg_fails++;
    if (budget < 0) cpu_relax();   /* 2013; mainline later dropped the pause (seed 004) */
    else if (--budget == 0) return 0;
  }
  return 0;
}

/* The 2024 v1 fix: having seen the lock held, wait up to `polls` for it to be released. */
LOCKREF_INLINE int trywait_unlocked(struct lockref *lr, int polls, struct lockref_stats *st, enum spinlock_kind k) {
  st->waits++;
  for (int i = 0; i < polls; i++) {
    cpu_relax();
    if (!spin_is_locked(&lr->lock, k)) return 1;
  }
  return 0;
}

/* The 2024 rework: one retry budget covers both cmpxchg failures and waiting for unlock. */
LOCKREF_INLINE int unified_loop(struct lockref *lr, int delta, int budget, struct lockref_stats *st, enum spinlock_kind k) {
  struct lockref old, new;
  old.lock_count = __atomic_load_n(&lr->lock_count, __ATOMIC_RELAXED);
  for (;;) {
    if (lockref_locked(old, k)) {
      st->waits++;
      cpu_relax();
      old.lock_count = __atomic_load_n(&lr->lock_count, __ATOMIC_RELAXED);
    } else {
      new = old;
      new.count += delta;
      if (__atomic_compare_exchange_n(&lr->lock_count, &old.lock_count, new.lock_count, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return 1;
      st->cmpxchg_fails++;
    }
    if (--budget == 0) return 0;
  }
}

LOCKREF_INLINE void lockref_add_kind(struct lockref *lr, int delta, const struct lockref_tuning *t, struct lockref_stats *st,
                                     enum spinlock_kind k) {
  st->updates++;
  switch (t->policy) {
    case POLICY_LOCKED: break;
    case POLICY_CMPXCHG: if (cmpxchg_loop(lr, delta, -1, st, k)) return; break;
    case POLICY_RETRY100: if (cmpxchg_loop(lr, delta, t->retries, st, k)) return; break;
    case POLICY_TRYWAIT:
      if (cmpxchg_loop(lr, delta, t->retries, st, k)) return;
      if (trywait_unlocked(lr, t->wait_polls, st, k) && cmpxchg_loop(lr, delta, t->retries, st, k)) return;
      break;
    case POLICY_UNIFIED: if (unified_loop(lr, delta, t->retries, st, k)) return; break;
  }
  st->locked_ops++;
  spin_lock_kind(&lr->lock, k);
  lr->count += delta;
  spin_unlock_kind(&lr->lock, k);
}

static inline void lockref_add(struct lockref *lr, int delta, const struct lockref_tuning *t, struct lockref_stats *st) {
  switch (t->spinlock) {
    case SPIN_TICKET: lockref_add_kind(lr, delta, t, st, SPIN_TICKET); break;
    case SPIN_QSPINLOCK: lockref_add_kind(lr, delta, t, st, SPIN_QSPINLOCK); break;
    default: lockref_add_kind(lr, delta, t, st, SPIN_TAS); break;
  }
}

static inline void lockref_get(struct lockref *lr, const struct lockref_tuning *t, struct lockref_stats *st) { lockref_add(lr, 1, t, st); }
static inline void lockref_put(struct lockref *lr, const struct lockref_tuning *t, struct lockref_stats *st) { lockref_add(lr, -1, t, st); }

static inline enum lockref_policy parse_policy(const char *s) {
  for (int i = 0; lockref_policies[i]; i++)
    if (!strcmp(lockref_policies[i], s)) return (enum lockref_policy)i;
  return POLICY_LOCKED;
}

/* The tuning flags every lockref workload takes (in its TESTCASE_FLAGS, after its --policy). */
#define LOCKREF_TUNING_FLAGS(X)                                                                                    \
  X(retries, "retries", "cmpxchg attempts before locking (retry100, trywait, unified)", NULL, "100")               \
  X(wait_polls, "wait-polls", "polls for unlock before locking (trywait)", NULL, "100")                           \
  X(spinlock, "spinlock", "the lock word's spinlock: tas (test-and-test-and-set: the uncontended shape), ticket (x86 2.6.25 .. 4.1) or qspinlock (x86 4.2+)", \
    spinlock_kinds, "tas")

/* The tuning from the parsed flags: --policy and LOCKREF_TUNING_FLAGS (a macro: the flag ids are the workload's). */
#define lockref_tuning_from_flags() lockref_tuning(flag_text(policy), flag_num(retries), flag_num(wait_polls), flag_text(spinlock))

static inline struct lockref_tuning lockref_tuning(const char *policy, long long retries, long long wait_polls, const char *spinlock) {
  struct lockref_tuning t = {parse_policy(policy), (int)retries, (int)wait_polls, parse_spinlock_kind(spinlock)};
  if (t.retries < 1) usage("--retries must be at least 1");
  if (t.spinlock == SPIN_QSPINLOCK) qspinlock_setup();
  return t;
}

/* A transient lock holder (seed 004's trigger): takes lr's spinlock for hold_ns every period_ns, until
 * *stop or max_holds holds (0: no limit). Returns the holds. */
static inline uint64_t intruder_holds_lock(struct lockref *lr, enum spinlock_kind kind, uint64_t period_ns, uint64_t hold_ns,
                                           uint64_t max_holds, volatile int *stop) {
  uint64_t holds = 0, next = now_ns() + period_ns;
  while (!READ_ONCE(*stop) && (!max_holds || holds < max_holds)) {
    if (now_ns() < next) { cpu_relax(); continue; }
    spin_lock_kind(&lr->lock, kind);
    uint64_t until = now_ns() + hold_ns;
    while (now_ns() < until) cpu_relax();
    spin_unlock_kind(&lr->lock, kind);
    holds++;
    next += period_ns;
  }
  return holds;
}

/* bench_next, with the thread's lockref statistics restarted when its window opens: they cover the
 * window, like the ops. */
static inline int bench_next_lockref(struct bench_loop *l, struct lockref_stats *st) {
  int r = bench_next(l);
  if (r == 2) memset(st, 0, sizeof *st);
  return r;
}

/* The threads' statistics, summed, into the result JSON. */
static inline void json_lockref_stats(const struct lockref_stats *st, int threads) {
  struct lockref_stats total = {0, 0, 0, 0, 0};
  for (int i = 0; i < threads; i++) {
    total.ops += st[i].ops;
    total.updates += st[i].updates;
    total.locked_ops += st[i].locked_ops;
    total.cmpxchg_fails += st[i].cmpxchg_fails;
    total.waits += st[i].waits;
  }
  json_u64("lockref_updates", total.updates);
  json_u64("locked_ops", total.locked_ops);
  json_u64("cmpxchg_failures", total.cmpxchg_fails);
  json_u64("unlock_waits", total.waits);
}

#endif
