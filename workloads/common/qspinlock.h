/* The queued spinlock (qspinlock) of Linux 6.12 on x86-64, in user space. It models, step by step:
 *   include/asm-generic/qspinlock_types.h   the lock word and its fields
 *   include/asm-generic/qspinlock.h         fast path, trylock, unlock, the tests lockref and others use
 *   arch/x86/include/asm/qspinlock.h        _Q_PENDING_LOOPS and queued_fetch_set_pending_acquire (lock bts)
 *   kernel/locking/qspinlock.c              queued_spin_lock_slowpath: the pending bit, then the MCS queue
 *   kernel/locking/mcs_spinlock.h           the MCS node and its hand-over
 * Each step's comment names the kernel function and the line it models in 6.12's file ("qspinlock.c:511" is
 * line 511 of kernel/locking/qspinlock.c in Linux 6.12; "qspinlock.h" is include/asm-generic/qspinlock.h,
 * "x86 qspinlock.h" arch/x86/include/asm/qspinlock.h, "types.h" include/asm-generic/qspinlock_types.h).
 *
 * The lock word (CONFIG_NR_CPUS < 16K, so _Q_PENDING_BITS == 8; little-endian), (tail, pending, locked):
 *   bits  0- 7  locked byte     1 while the lock is held
 *   bits  8-15  pending byte    1: one waiter (the first, while nobody is queued) spins on the locked byte
 *   bits 16-17  tail index      the nesting context of the last queued node (always 0 here, see below)
 *   bits 18-31  tail cpu + 1    whose node is last in the MCS queue; 0: nobody is queued
 * Uncontended: 0 -> 0x1 (fast path) -> 0. A second locker sets pending (0x101) and spins on the locked byte; a
 * third queues (tail set) and, once at the head of the queue, spins until locked and pending are both clear.
 *
 * Instructions and ordering as the kernel's on x86: the fast path and trylock are lock cmpxchg on the word, the
 * pending bit a lock bts, xchg_tail a 16-bit xchg of the tail half, unlock a plain byte store (smp_store_release
 * of the locked byte), clear_pending_set_locked a plain 16-bit store, set_locked a plain byte store, and every
 * wait (smp_cond_load_relaxed/acquire, atomic_cond_read_relaxed/acquire) a loop of plain loads with cpu_relax()
 * (PAUSE) between them, as asm-generic/barrier.h defines them. smp_wmb() and smp_acquire__after_ctrl_dep() are
 * compiler barriers on x86; here C11 fences that emit no instruction on x86.
 *
 * Where the model differs from the kernel:
 *   - No paravirt: pv_enabled() is false and virt_spin_lock() returns false, as on bare metal (qspinlock.c:321-325;
 *     a guest without PV spinlocks would take a test-and-set lock there instead). No pv_* hooks, no _Q_SLOW_VAL.
 *   - No nesting: a thread here takes one spinlock at a time and nothing interrupts it to take another (the
 *     kernel's task/softirq/hardirq/NMI contexts), so one MCS node per thread is enough: the nesting count idx is
 *     always 0, the tail index always 0, and the idx >= MAX_NODES fallback (qspinlock.c:413) never runs. The
 *     nodes keep the kernel's per-CPU layout (MAX_NODES 16-byte qnodes on one 64-byte line per CPU), of which
 *     node 0 is the one used.
 *   - The tail names a thread, not a CPU: the "cpu" of encode_tail/decode_tail is the thread's index, given in
 *     the order threads first reach the queue (one atomic add, once per thread, on a counter on a line of its
 *     own), where the kernel has smp_processor_id(). The queue needs only that each waiter's number is its own.
 *   - No lock event counts (lockevent_inc), tracepoints (trace_contention_*), lockdep or KCSAN.
 *   - prefetchw(next) is the prefetchw instruction, as the kernel patches it in on a CPU with
 *     X86_FEATURE_3DNOWPREFETCH (otherwise prefetcht0); gem5 decodes 0f 0d as a prefetch for reading.
 * Seeds 001 and 002 ran 4.4 / 4.x kernels: their slow path differs in its first part (see docs/workloads.md); the
 * word, the MCS queue and the unlocked test lockref uses are the same. */
#ifndef COHTB_QSPINLOCK_H
#define COHTB_QSPINLOCK_H

#include "bench.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the qspinlock word's halves are laid out as on x86 (little-endian)"
#endif

/* types.h:14-44: struct qspinlock, the __LITTLE_ENDIAN views of the word. may_alias: the word is a workload's
 * uint32_t (a lockref's lock, a list's lock), read through these views. */
struct qspinlock {
  union {
    uint32_t val;   /* atomic_t val */
    struct { uint8_t locked, pending; };
    struct { uint16_t locked_pending, tail; };
  };
} __attribute__((may_alias));

/* types.h:67-93: the fields of the word when NR_CPUS < 16K */
#define _Q_SET_MASK(type) (((1U << _Q_##type##_BITS) - 1) << _Q_##type##_OFFSET)
#define _Q_LOCKED_OFFSET 0
#define _Q_LOCKED_BITS 8
#define _Q_LOCKED_MASK _Q_SET_MASK(LOCKED)
#define _Q_PENDING_OFFSET (_Q_LOCKED_OFFSET + _Q_LOCKED_BITS)
#define _Q_PENDING_BITS 8
#define _Q_PENDING_MASK _Q_SET_MASK(PENDING)
#define _Q_TAIL_IDX_OFFSET (_Q_PENDING_OFFSET + _Q_PENDING_BITS)
#define _Q_TAIL_IDX_BITS 2
#define _Q_TAIL_IDX_MASK _Q_SET_MASK(TAIL_IDX)
#define _Q_TAIL_CPU_OFFSET (_Q_TAIL_IDX_OFFSET + _Q_TAIL_IDX_BITS)
#define _Q_TAIL_CPU_BITS (32 - _Q_TAIL_CPU_OFFSET)
#define _Q_TAIL_CPU_MASK _Q_SET_MASK(TAIL_CPU)
#define _Q_TAIL_OFFSET _Q_TAIL_IDX_OFFSET
#define _Q_TAIL_MASK (_Q_TAIL_IDX_MASK | _Q_TAIL_CPU_MASK)
#define _Q_LOCKED_VAL (1U << _Q_LOCKED_OFFSET)
#define _Q_PENDING_VAL (1U << _Q_PENDING_OFFSET)
/* qspinlock.c:140 */
#define _Q_LOCKED_PENDING_MASK (_Q_LOCKED_MASK | _Q_PENDING_MASK)
/* x86 qspinlock.h:11: x86 overrides qspinlock.c:97-99's default of 1 */
#define _Q_PENDING_LOOPS (1 << 9)
_Static_assert(MAX_THREADS < (1U << _Q_TAIL_CPU_BITS), "qspinlock.c:319: the tail cpu field holds every thread");

/* asm-generic/barrier.h: smp_cond_load_relaxed: READ_ONCE(*ptr) into VAL until cond_expr, cpu_relax() between
 * reads; smp_cond_load_acquire: the same, then smp_acquire__after_ctrl_dep() (smp_rmb(): a compiler barrier on
 * x86). linux/atomic.h:28-29: atomic_cond_read_{acquire,relaxed}(v, c) are these on v's counter. */
#define smp_cond_load_relaxed(ptr, cond_expr) ({              \
  __typeof__(ptr) __PTR = (ptr);                              \
  __typeof__(*(ptr)) VAL;                                     \
  for (;;) {                                                  \
    VAL = __atomic_load_n(__PTR, __ATOMIC_RELAXED);           \
    if (cond_expr) break;                                     \
    cpu_relax();                                              \
  }                                                           \
  VAL;                                                        \
})
#define smp_cond_load_acquire(ptr, cond_expr) ({              \
  __typeof__(*(ptr)) _val = smp_cond_load_relaxed(ptr, cond_expr); \
  __atomic_thread_fence(__ATOMIC_ACQUIRE);                    \
  _val;                                                       \
})
#define atomic_cond_read_relaxed(v, c) smp_cond_load_relaxed(v, c)
#define atomic_cond_read_acquire(v, c) smp_cond_load_acquire(v, c)

/* mcs_spinlock.h:18-22 */
struct mcs_spinlock {
  struct mcs_spinlock *next;
  int locked; /* 1 if lock acquired */
  int count;  /* nesting count, see qspinlock.c */
};

/* qspinlock.c:70, 82-87 (no CONFIG_PARAVIRT_SPINLOCKS padding), 109: DEFINE_PER_CPU_ALIGNED(struct qnode,
 * qnodes[MAX_NODES]): each CPU's four nodes fill one 64-byte line of their own. Here one row per thread. */
#define MAX_NODES 4
struct qnode {
  struct mcs_spinlock mcs;
};
static struct qnode qnodes[MAX_THREADS][MAX_NODES] __aligned_line __attribute__((unused));
_Static_assert(sizeof(struct qnode[MAX_NODES]) == CACHE_LINE, "a thread's nodes fill one line, as a CPU's do");

/* smp_processor_id(), modelled: the thread's index, given when it first reaches the queue (see the top). */
static struct { int next; } __aligned_line qspin_cpus __attribute__((unused));   /* a line of its own */
static __thread int qspin_cpu_plus1 __attribute__((unused));   /* 0: not given yet */
static inline int qspin_this_cpu(void) {
  if (!qspin_cpu_plus1) {
    qspin_cpu_plus1 = __atomic_add_fetch(&qspin_cpus.next, 1, __ATOMIC_RELAXED);
    if (qspin_cpu_plus1 > MAX_THREADS) {
      fprintf(stderr, "qspinlock: more than %d threads took the slow path\n", MAX_THREADS);
      abort();
    }
  }
  return qspin_cpu_plus1 - 1;
}

/* Touches the nodes' pages during a workload's set-up, so the measured region does not fault them in. */
static inline void qspinlock_setup(void) { touch_object(qnodes, sizeof qnodes); touch_object(&qspin_cpus, sizeof qspin_cpus); }

/* qspinlock.c:116-124 encode_tail: "We must be able to distinguish between no-tail and the tail at 0:0,
 * therefore increment the cpu number by one." */
static inline uint32_t encode_tail(int cpu, int idx) {
  uint32_t tail;
  tail = (uint32_t)(cpu + 1) << _Q_TAIL_CPU_OFFSET;
  tail |= (uint32_t)idx << _Q_TAIL_IDX_OFFSET; /* assume < 4 */
  return tail;
}

/* qspinlock.c:126-132 decode_tail: per_cpu_ptr(&qnodes[idx].mcs, cpu) */
static inline struct mcs_spinlock *decode_tail(uint32_t tail) {
  int cpu = (int)(tail >> _Q_TAIL_CPU_OFFSET) - 1;
  int idx = (int)((tail & _Q_TAIL_IDX_MASK) >> _Q_TAIL_IDX_OFFSET);
  return &qnodes[cpu][idx].mcs;
}

/* qspinlock.c:134-138 grab_mcs_node */
static inline struct mcs_spinlock *grab_mcs_node(struct mcs_spinlock *base, int idx) {
  return &((struct qnode *)base + idx)->mcs;
}

/* qspinlock.c:149-152 clear_pending (_Q_PENDING_BITS == 8): *,1,* -> *,0,*; WRITE_ONCE(lock->pending, 0) */
static inline void clear_pending(struct qspinlock *lock) { __atomic_store_n(&lock->pending, 0, __ATOMIC_RELAXED); }

/* qspinlock.c:162-165 clear_pending_set_locked: *,1,0 -> *,0,1; WRITE_ONCE(lock->locked_pending, _Q_LOCKED_VAL),
 * one 16-bit store */
static inline void clear_pending_set_locked(struct qspinlock *lock) {
  __atomic_store_n(&lock->locked_pending, (uint16_t)_Q_LOCKED_VAL, __ATOMIC_RELAXED);
}

/* qspinlock.c:177-185 xchg_tail: p,*,* -> n,*,*; xchg_relaxed of the 16-bit tail half, "which heads an address
 * dependency" (the new tail's owner then writes prev->next through the old tail). */
static inline uint32_t xchg_tail(struct qspinlock *lock, uint32_t tail) {
  return (uint32_t)__atomic_exchange_n(&lock->tail, (uint16_t)(tail >> _Q_TAIL_OFFSET), __ATOMIC_RELAXED) << _Q_TAIL_OFFSET;
}

/* x86 qspinlock.h:13-28 queued_fetch_set_pending_acquire: *,*,* -> *,1,*. Not a fetch-or: a lock bts of the
 * pending bit (its old value), then a separate read of the rest of the word. (GCC emits lock bts for a fetch-or
 * of one bit whose result is only tested at that bit.) */
static inline uint32_t queued_fetch_set_pending_acquire(struct qspinlock *lock) {
  uint32_t val;
  val = __atomic_fetch_or(&lock->val, _Q_PENDING_VAL, __ATOMIC_ACQUIRE) & _Q_PENDING_VAL;   /* lock btsl $8 */
  val |= __atomic_load_n(&lock->val, __ATOMIC_RELAXED) & ~_Q_PENDING_MASK;                  /* atomic_read */
  return val;
}

/* qspinlock.c:259-262 set_locked: *,*,0 -> *,0,1; WRITE_ONCE(lock->locked, _Q_LOCKED_VAL) */
static inline void set_locked(struct qspinlock *lock) { __atomic_store_n(&lock->locked, (uint8_t)_Q_LOCKED_VAL, __ATOMIC_RELAXED); }

/* qspinlock.h:51-58 queued_spin_is_locked: "Any !0 state indicates it is locked" */
static inline int queued_spin_is_locked(struct qspinlock *lock) { return __atomic_load_n(&lock->val, __ATOMIC_RELAXED) != 0; }

/* qspinlock.h:71-74 queued_spin_value_unlocked (arch_spin_value_unlocked, lockref's test): !lock.val.counter.
 * "Whenever there are tasks waiting for the lock, it is considered locked wrt the lockref code." */
static inline int queued_spin_value_unlocked(uint32_t val) { return !val; }

/* qspinlock.h:90-98 queued_spin_trylock */
static inline int queued_spin_trylock(struct qspinlock *lock) {
  uint32_t val = __atomic_load_n(&lock->val, __ATOMIC_RELAXED);   /* atomic_read */
  if (val)
    return 0;
  return __atomic_compare_exchange_n(&lock->val, &val, _Q_LOCKED_VAL, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);   /* atomic_try_cmpxchg_acquire */
}

/* mcs_spinlock.h:32-35 arch_mcs_spin_lock_contended: smp_cond_load_acquire(l, VAL) (x86 has no own) */
#define arch_mcs_spin_lock_contended(l) ((void)smp_cond_load_acquire(l, VAL))
/* mcs_spinlock.h:44-45 arch_mcs_spin_unlock_contended: smp_store_release((l), 1) */
#define arch_mcs_spin_unlock_contended(l) __atomic_store_n(l, 1, __ATOMIC_RELEASE)

/* arch/x86/include/asm/processor.h:627-632 prefetchw */
static inline void prefetchw(const void *x) { __asm__ __volatile__("prefetchw %0" ::"m"(*(const char *)x)); }

/* qspinlock.c:292-563 queued_spin_lock_slowpath. Out of line, as in the kernel (the fast path calls it).
 *
 *              fast     :    slow                                  :    unlock
 *                       :                                          :
 * uncontended  (0,0,0) -:--> (0,0,1) ------------------------------:--> (*,*,0)
 *                       :       | ^--------.------.             /  :
 *                       :       v           \      \            |  :
 * pending               :    (0,1,1) +--> (0,1,0)   \           |  :
 *                       :       | ^--'              |           |  :
 *                       :       v                   |           |  :
 * uncontended           :    (n,x,y) +--> (n,0,0) --'           |  :
 *   queue               :       | ^--'                          |  :
 *                       :       v                               |  :
 * contended             :    (*,x,y) +--> (*,0,0) ---> (*,0,1) -'  :
 *   queue               :         ^--'                             :
 */
static __attribute__((noinline, unused)) void queued_spin_lock_slowpath(struct qspinlock *lock, uint32_t val) {
  struct mcs_spinlock *prev, *next, *node;
  uint32_t old, tail;
  int idx, cpu;

  /* qspinlock.c:321-325: pv_enabled() is false, virt_spin_lock() returns false (bare metal): not modelled. */

  /* qspinlock.c:327-337, "Wait for in-progress pending->locked hand-overs with a bounded number of spins so that
   * we guarantee forward progress." 0,1,0 -> 0,0,1 */
  if (val == _Q_PENDING_VAL) {
    int cnt = _Q_PENDING_LOOPS;
    val = atomic_cond_read_relaxed(&lock->val, (VAL != _Q_PENDING_VAL) || !cnt--);
  }

  /* qspinlock.c:339-343, "If we observe any contention; queue." */
  if (val & ~_Q_LOCKED_MASK)
    goto queue;

  /* qspinlock.c:345-350, "trylock || pending": 0,0,* -> 0,1,* -> 0,0,1 pending, trylock */
  val = queued_fetch_set_pending_acquire(lock);

  /* qspinlock.c:352-366, "If we observe contention, there is a concurrent locker. Undo and queue; our setting of
   * PENDING might have made the n,0,0 -> 0,0,0 transition fail and it will now be waiting on @next to become
   * !NULL." */
  if (__builtin_expect(val & ~_Q_LOCKED_MASK, 0)) {
    /* "Undo PENDING if we set it." */
    if (!(val & _Q_PENDING_MASK))
      clear_pending(lock);
    goto queue;
  }

  /* qspinlock.c:368-380, "We're pending, wait for the owner to go away." 0,1,1 -> *,1,0
   * smp_cond_load_acquire(&lock->locked, !VAL): byte loads of the locked byte. */
  if (val & _Q_LOCKED_MASK)
    (void)smp_cond_load_acquire(&lock->locked, !VAL);

  /* qspinlock.c:382-389, "take ownership and clear the pending bit." 0,1,0 -> 0,0,1 */
  clear_pending_set_locked(lock);
  return;

  /* qspinlock.c:391-395, "End of pending bit optimistic spinning and beginning of MCS queuing." */
queue:
  /* qspinlock.c:398-400: node = this_cpu_ptr(&qnodes[0].mcs); idx = node->count++; tail = encode_tail(...) */
  cpu = qspin_this_cpu();
  node = &qnodes[cpu][0].mcs;
  idx = node->count++;
  tail = encode_tail(cpu, idx);

  /* qspinlock.c:404-418: more than MAX_NODES nested contexts: spin on trylock without a node. Never here (idx is
   * always 0: no nesting), kept as the kernel has it. */
  if (__builtin_expect(idx >= MAX_NODES, 0)) {
    while (!queued_spin_trylock(lock))
      cpu_relax();
    goto release;
  }

  /* qspinlock.c:420 */
  node = grab_mcs_node(node, idx);

  /* qspinlock.c:427-432, "Ensure that we increment the head node->count before initialising the actual node." */
  __atomic_signal_fence(__ATOMIC_SEQ_CST);   /* barrier() */

  /* qspinlock.c:434-436 (pv_init_node: nothing) */
  __atomic_store_n(&node->locked, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&node->next, NULL, __ATOMIC_RELAXED);

  /* qspinlock.c:438-444, "We touched a (possibly) cold cacheline in the per-cpu queue node; attempt the trylock
   * once more in the hope someone let go while we weren't watching." */
  if (queued_spin_trylock(lock))
    goto release;

  /* qspinlock.c:446-451, "Ensure that the initialisation of @node is complete before we publish the updated tail
   * via xchg_tail()": smp_wmb(), a compiler barrier on x86 */
  __atomic_thread_fence(__ATOMIC_RELEASE);

  /* qspinlock.c:453-461, "Publish the updated tail." p,*,* -> n,*,* */
  old = xchg_tail(lock, tail);
  next = NULL;

  /* qspinlock.c:463-485, "if there was a previous node; link it and wait until reaching the head of the
   * waitqueue." */
  if (old & _Q_TAIL_MASK) {
    prev = decode_tail(old);

    /* "Link @node into the waitqueue." WRITE_ONCE(prev->next, node) (pv_wait_node: nothing) */
    __atomic_store_n(&prev->next, node, __ATOMIC_RELAXED);

    arch_mcs_spin_lock_contended(&node->locked);

    /* "While waiting for the MCS lock, the next pointer may have been set by another lock waiter. We
     * optimistically load the next pointer & prefetch the cacheline for writing" */
    next = __atomic_load_n(&node->next, __ATOMIC_RELAXED);
    if (next)
      prefetchw(next);
  }

  /* qspinlock.c:487-511, "we're at the head of the waitqueue, wait for the owner & pending to go away."
   * *,x,y -> *,0,0 (pv_wait_head_or_lock returns 0: not modelled) */
  val = atomic_cond_read_acquire(&lock->val, !(VAL & _Q_LOCKED_PENDING_MASK));

  /* qspinlock.c:513-538 (locked:), "claim the lock": n,0,0 -> 0,0,1 : lock, uncontended; *,*,0 -> *,*,1 : lock,
   * contended. "If the queue head is the only one in the queue (lock value == tail) and nobody is pending, clear
   * the tail code and grab the lock." */
  if ((val & _Q_TAIL_MASK) == tail) {
    if (__atomic_compare_exchange_n(&lock->val, &val, _Q_LOCKED_VAL, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))   /* atomic_try_cmpxchg_relaxed */
      goto release; /* No contention */
  }

  /* qspinlock.c:540-545, "Either somebody is queued behind us or _Q_PENDING_VAL got set which will then detect the
   * remaining tail and queue behind us ensuring we'll see a @next." */
  set_locked(lock);

  /* qspinlock.c:547-551, "contended path; wait for next if not observed yet, release." */
  if (!next)
    next = smp_cond_load_relaxed(&node->next, (VAL));

  /* qspinlock.c:553-554: hand the MCS lock to the next node (pv_kick_node: nothing) */
  arch_mcs_spin_unlock_contended(&next->locked);

release:
  /* qspinlock.c:556-562, "release the node": __this_cpu_dec(qnodes[0].mcs.count) (trace_contention_end: none) */
  qnodes[cpu][0].mcs.count--;
}

/* qspinlock.h:107-115 queued_spin_lock: the fast path, 0,0,0 -> 0,0,1 */
static inline void queued_spin_lock(struct qspinlock *lock) {
  uint32_t val = 0;
  if (__builtin_expect(__atomic_compare_exchange_n(&lock->val, &val, _Q_LOCKED_VAL, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED), 1))   /* atomic_try_cmpxchg_acquire */
    return;
  queued_spin_lock_slowpath(lock, val);
}

/* qspinlock.h:123-129 queued_spin_unlock, "unlock() needs release semantics": smp_store_release(&lock->locked, 0),
 * one byte store; pending and tail are left as they are. */
static inline void queued_spin_unlock(struct qspinlock *lock) { __atomic_store_n(&lock->locked, 0, __ATOMIC_RELEASE); }

#endif
