/* A test-and-test-and-set spinlock on a 32-bit word (0 free, 1 held), as the kernel's uncontended path. */
#ifndef COHTB_SPINLOCK_H
#define COHTB_SPINLOCK_H

#include "bench.h"

static inline void spin_lock(uint32_t *lock) {
  while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(lock, __ATOMIC_RELAXED)) cpu_relax();
}
static inline void spin_unlock(uint32_t *lock) { __atomic_store_n(lock, 0, __ATOMIC_RELEASE); }

#endif
