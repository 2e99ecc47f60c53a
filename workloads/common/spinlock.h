/* Spinlocks on a 32-bit word, in three kinds (--spinlock):
 *   tas:       test-and-test-and-set, 0 free and 1 held; the uncontended shape of today's qspinlock, and
 *              unfair: a waiter on the holder's socket sees the release first.
 *   ticket:    the x86 ticket lock of 2.6.25 .. 4.1 (arch/x86/include/asm/spinlock.h in 3.10, 16-bit
 *              tickets): FIFO, so under contention the lock and its line go to every waiter in turn.
 *   qspinlock: the x86 queued spinlock of 4.2 on (common/qspinlock.h, a model of 6.12's): a locked byte, a
 *              pending byte and an MCS queue's tail in the word; waiters past the second spin on nodes of
 *              their own, and the queue's head takes the lock next.
 * Whether a word is unlocked (arch_spin_value_unlocked, what lockref's cmpxchg tests) depends on the kind:
 * tas and ticket are unlocked exactly when the word's low half (head) equals its high half (tail) (tas: 0
 * free, 1 is head 1 and tail 0); a qspinlock only when the whole word is 0 (queued_spin_value_unlocked), so a
 * word with a pending or queued waiter and no holder still counts as locked. */
#ifndef COHTB_SPINLOCK_H
#define COHTB_SPINLOCK_H

#include "bench.h"
#include "qspinlock.h"

enum spinlock_kind { SPIN_TAS, SPIN_TICKET, SPIN_QSPINLOCK };
static const char *spinlock_kinds[] __attribute__((unused)) = {"tas", "ticket", "qspinlock", NULL};

static inline enum spinlock_kind parse_spinlock_kind(const char *s) {
  for (int i = 0; spinlock_kinds[i]; i++)
    if (!strcmp(spinlock_kinds[i], s)) return (enum spinlock_kind)i;
  return SPIN_TAS;
}

typedef uint16_t __attribute__((may_alias)) ticket_t;   /* a half of the lock word */

/* !arch_spin_value_unlocked: for tas and ticket the halves differ; for a qspinlock the word is not 0. */
static inline int spin_value_locked(uint32_t v, enum spinlock_kind k) {
  if (k == SPIN_QSPINLOCK) return !queued_spin_value_unlocked(v);
  return (uint16_t)v != (uint16_t)(v >> 16);
}
static inline int spin_is_locked(uint32_t *lock, enum spinlock_kind k) { return spin_value_locked(__atomic_load_n(lock, __ATOMIC_RELAXED), k); }

static inline void tas_lock(uint32_t *lock) {
  while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(lock, __ATOMIC_RELAXED)) cpu_relax();
}
static inline void tas_unlock(uint32_t *lock) { __atomic_store_n(lock, 0, __ATOMIC_RELEASE); }
static inline int tas_trylock(uint32_t *lock) { return !__atomic_load_n(lock, __ATOMIC_RELAXED) && !__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE); }

static inline void ticket_lock(uint32_t *lock) {
  uint16_t mine = (uint16_t)(__atomic_fetch_add(lock, 1u << 16, __ATOMIC_ACQUIRE) >> 16);  /* arch_spin_lock: xadd on tail */
  while (__atomic_load_n((ticket_t *)lock, __ATOMIC_ACQUIRE) != mine) cpu_relax();          /* until head == our ticket */
}
static inline void ticket_unlock(uint32_t *lock) {
  ticket_t *head = (ticket_t *)lock;   /* arch_spin_unlock: __add(&head, 1), no lock prefix: only the holder writes head */
  __atomic_store_n(head, (uint16_t)(__atomic_load_n(head, __ATOMIC_RELAXED) + 1), __ATOMIC_RELEASE);
}

/* 3.10's arch_spin_trylock: take a ticket only if the lock is free (head == tail), by cmpxchg of the word. */
static inline int ticket_trylock(uint32_t *lock) {
  uint32_t old = __atomic_load_n(lock, __ATOMIC_RELAXED);
  if ((uint16_t)old != (uint16_t)(old >> 16)) return 0;
  return __atomic_compare_exchange_n(lock, &old, old + (1u << 16), 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

#define QSPIN(lock) ((struct qspinlock *)(lock))

static inline void spin_lock_kind(uint32_t *lock, enum spinlock_kind k) {
  if (k == SPIN_TICKET) ticket_lock(lock);
  else if (k == SPIN_QSPINLOCK) queued_spin_lock(QSPIN(lock));
  else tas_lock(lock);
}
static inline void spin_unlock_kind(uint32_t *lock, enum spinlock_kind k) {
  if (k == SPIN_TICKET) ticket_unlock(lock);
  else if (k == SPIN_QSPINLOCK) queued_spin_unlock(QSPIN(lock));
  else tas_unlock(lock);
}
/* tas: a read, then xchg if free; ticket: 3.10's; qspinlock: queued_spin_trylock (a read, then cmpxchg 0 -> 1). */
static inline int spin_trylock_kind(uint32_t *lock, enum spinlock_kind k) {
  if (k == SPIN_TICKET) return ticket_trylock(lock);
  if (k == SPIN_QSPINLOCK) return queued_spin_trylock(QSPIN(lock));
  return tas_trylock(lock);
}

/* The test-and-test-and-set lock alone (what the benchmarks whose lock is not a lockref's took before --spinlock). */
static inline void spin_lock(uint32_t *lock) { tas_lock(lock); }
static inline void spin_unlock(uint32_t *lock) { tas_unlock(lock); }

#endif
