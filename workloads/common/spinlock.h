/* Spinlocks on a 32-bit word. Both kinds are unlocked exactly when the word's low half (head) equals
 * its high half (tail), which is what lockref's cmpxchg tests (arch_spin_value_unlocked):
 *   tas:    test-and-test-and-set, 0 free and 1 held (head 1, tail 0); the uncontended shape of
 *           today's qspinlock, and unfair: a waiter on the holder's socket sees the release first.
 *   ticket: the x86 ticket lock of 2.6.25 .. 4.1 (arch/x86/include/asm/spinlock.h in 3.10, 16-bit
 *           tickets): FIFO, so under contention the lock and its line go to every waiter in turn. */
#ifndef COHTB_SPINLOCK_H
#define COHTB_SPINLOCK_H

#include "bench.h"

enum spinlock_kind { SPIN_TAS, SPIN_TICKET };
static const char *spinlock_kinds[] __attribute__((unused)) = {"tas", "ticket", NULL};

typedef uint16_t __attribute__((may_alias)) ticket_t;   /* a half of the lock word */

static inline int spin_value_locked(uint32_t v) { return (uint16_t)v != (uint16_t)(v >> 16); }
static inline int spin_is_locked(uint32_t *lock) { return spin_value_locked(__atomic_load_n(lock, __ATOMIC_RELAXED)); }

static inline void tas_lock(uint32_t *lock) {
  while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(lock, __ATOMIC_RELAXED)) cpu_relax();
}
static inline void tas_unlock(uint32_t *lock) { __atomic_store_n(lock, 0, __ATOMIC_RELEASE); }

static inline void ticket_lock(uint32_t *lock) {
  uint16_t mine = (uint16_t)(__atomic_fetch_add(lock, 1u << 16, __ATOMIC_ACQUIRE) >> 16);  /* arch_spin_lock: xadd on tail */
  while (__atomic_load_n((ticket_t *)lock, __ATOMIC_ACQUIRE) != mine) cpu_relax();          /* until head == our ticket */
}
static inline void ticket_unlock(uint32_t *lock) {
  ticket_t *head = (ticket_t *)lock;   /* arch_spin_unlock: __add(&head, 1), no lock prefix: only the holder writes head */
  __atomic_store_n(head, (uint16_t)(__atomic_load_n(head, __ATOMIC_RELAXED) + 1), __ATOMIC_RELEASE);
}

static inline void spin_lock_kind(uint32_t *lock, enum spinlock_kind k) { if (k == SPIN_TICKET) ticket_lock(lock); else tas_lock(lock); }
static inline void spin_unlock_kind(uint32_t *lock, enum spinlock_kind k) { if (k == SPIN_TICKET) ticket_unlock(lock); else tas_unlock(lock); }

/* The test-and-test-and-set lock, for the benchmarks whose lock is not a lockref's. */
static inline void spin_lock(uint32_t *lock) { tas_lock(lock); }
static inline void spin_unlock(uint32_t *lock) { tas_unlock(lock); }

#endif
