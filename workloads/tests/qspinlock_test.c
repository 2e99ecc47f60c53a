/* Unit test of common/qspinlock.h and of the lock kinds' unlocked test (common/spinlock.h, common/lockref.h).
 *
 * 1. The lock word as lockers arrive, four threads on one word: the first takes the fast path (0x1); the second
 *    sets pending (0x101) and spins on the locked byte; the third queues (its tail, 0x00040101: the first thread
 *    to reach the queue is "cpu" 0, tail (0+1) << 18); the fourth queues behind it (0x00080101) and links itself
 *    to the third's node. Then the hand-overs: the pending waiter takes the lock (clear_pending_set_locked:
 *    0x00080001), then the queue's head (set_locked, tail kept: 0x00080001), then the last, which clears the tail
 *    (cmpxchg to 0x1); the word ends at 0 and every node's nesting count at 0.
 * 2. trylock on words set by hand: only 0 can be taken (queued_spin_trylock: !atomic_read && cmpxchg).
 * 3. lockref's unlocked test on words set by hand: for a qspinlock, locked unless the word is 0 (pending only, a
 *    tail only, and words whose halves are equal all count as locked); tas and ticket keep "the halves differ".
 *
 * Prints one line per failed check and exits 1 if any failed (or if it still runs after 20 s: a locker that never
 * gets the lock), 0 otherwise. Runs on one CPU as well as on many. */
#pragma GCC diagnostic ignored "-Wunused-function"   /* the harness's run and JSON helpers, which a unit test does not use */
#include "common/lockref.h"   /* first: bench.h defines _GNU_SOURCE before the system headers */

#include <signal.h>

static int failures;
#define CHECK(cond, ...)                                                 \
  do {                                                                   \
    if (!(cond)) {                                                       \
      failures++;                                                        \
      fprintf(stderr, "FAIL line %d: %s: ", __LINE__, #cond);            \
      fprintf(stderr, __VA_ARGS__);                                      \
      fputc('\n', stderr);                                               \
    }                                                                    \
  } while (0)

static uint32_t word __aligned_line;
static struct locker {
  pthread_t tid;
  int entered, release, order;
  uint32_t at_entry;   /* the word as the locker saw it once it held the lock */
} lockers[4];
static int next_order;   /* written under the lock */

static uint32_t load_word(void) { return __atomic_load_n(&word, __ATOMIC_ACQUIRE); }

static void *locker(void *arg) {
  struct locker *l = arg;
  queued_spin_lock(QSPIN(&word));
  l->at_entry = load_word();
  l->order = next_order++;
  __atomic_store_n(&l->entered, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&l->release, __ATOMIC_ACQUIRE)) sched_yield();
  queued_spin_unlock(QSPIN(&word));
  return NULL;
}

static int entered(int i) { return __atomic_load_n(&lockers[i].entered, __ATOMIC_ACQUIRE); }

static void start(int i) {
  if (pthread_create(&lockers[i].tid, NULL, locker, &lockers[i])) { perror("pthread_create"); exit(2); }
}

/* Waits up to 5 s for cond (other threads spin meanwhile, so yield the CPU to them). */
#define WAIT_FOR(cond)                                                   \
  ({                                                                     \
    uint64_t until_ = now_ns() + 5000000000ull;                          \
    while (!(cond) && now_ns() < until_) sched_yield();                  \
    (cond);                                                              \
  })

static void arrivals_and_hand_overs(void) {
  const uint32_t tail_cpu0 = 1u << _Q_TAIL_CPU_OFFSET, tail_cpu1 = 2u << _Q_TAIL_CPU_OFFSET;
  CHECK(tail_cpu0 == 0x00040000 && encode_tail(0, 0) == tail_cpu0 && encode_tail(1, 0) == tail_cpu1, "tails %#x %#x", tail_cpu0, tail_cpu1);

  /* the fast path: 0,0,0 -> 0,0,1 */
  queued_spin_lock(QSPIN(&word));
  CHECK(load_word() == 0x1, "after the fast path: %#x", load_word());

  /* a second locker: 0,0,1 -> 0,1,1, spinning on the locked byte */
  start(1);
  CHECK(WAIT_FOR(load_word() == 0x101), "the second locker should set pending: %#x", load_word());

  /* a third: queues, the first to reach the queue ("cpu" 0): n,1,1 with n its tail */
  start(2);
  CHECK(WAIT_FOR(load_word() == (tail_cpu0 | 0x101)), "the third locker should queue: %#x", load_word());
  CHECK(decode_tail(load_word() & _Q_TAIL_MASK) == &qnodes[0][0].mcs, "the tail names the third locker's node");

  /* a fourth: queues behind the third, and links its node to the third's */
  start(3);
  CHECK(WAIT_FOR(load_word() == (tail_cpu1 | 0x101)), "the fourth locker should queue behind: %#x", load_word());
  CHECK(WAIT_FOR(__atomic_load_n(&qnodes[0][0].mcs.next, __ATOMIC_ACQUIRE) == &qnodes[1][0].mcs),
        "the third locker's node should point at the fourth's");
  CHECK(qnodes[0][0].mcs.count == 1 && qnodes[1][0].mcs.count == 1, "each queued locker holds one node");
  CHECK(!entered(1) && !entered(2) && !entered(3), "nobody else holds the lock");

  /* unlock (a byte store): the pending waiter takes the lock, *,1,0 -> *,0,1; the queue stays */
  queued_spin_unlock(QSPIN(&word));
  CHECK(WAIT_FOR(entered(1)), "the pending waiter should take the lock");
  CHECK(lockers[1].at_entry == (tail_cpu1 | 0x1), "the pending waiter holds it with the queue behind: %#x", lockers[1].at_entry);
  CHECK(!entered(2) && !entered(3), "the queue waits while the pending waiter holds the lock");

  /* the queue's head is not the tail: set_locked, then hands the MCS lock to the next node */
  __atomic_store_n(&lockers[1].release, 1, __ATOMIC_RELEASE);
  CHECK(WAIT_FOR(entered(2)), "the queue's head should take the lock");
  CHECK(lockers[2].at_entry == (tail_cpu1 | 0x1), "the queue's head holds it, the tail still the fourth's: %#x", lockers[2].at_entry);
  CHECK(!entered(3), "the fourth waits");

  /* the last in the queue: n,0,0 -> 0,0,1 (it clears the tail) */
  __atomic_store_n(&lockers[2].release, 1, __ATOMIC_RELEASE);
  CHECK(WAIT_FOR(entered(3)), "the last locker should take the lock");
  CHECK(lockers[3].at_entry == 0x1, "the last locker clears the tail: %#x", lockers[3].at_entry);

  __atomic_store_n(&lockers[3].release, 1, __ATOMIC_RELEASE);
  for (int i = 1; i < 4; i++) pthread_join(lockers[i].tid, NULL);
  CHECK(load_word() == 0, "free at the end: %#x", load_word());
  CHECK(lockers[1].order == 0 && lockers[2].order == 1 && lockers[3].order == 2, "hand-over order: pending, then the queue in order (%d %d %d)",
        lockers[1].order, lockers[2].order, lockers[3].order);
  CHECK(qnodes[0][0].mcs.count == 0 && qnodes[1][0].mcs.count == 0, "the nodes are released");
}

static void trylock(void) {
  static const uint32_t held[] = {0x1, 0x100, 0x101, 0x00040000, 0x00040100};
  for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
    word = held[i];
    CHECK(!queued_spin_trylock(QSPIN(&word)) && word == held[i], "trylock must fail on %#x", held[i]);
    CHECK(!spin_trylock_kind(&word, SPIN_QSPINLOCK) && word == held[i], "spin_trylock_kind(qspinlock) must fail on %#x", held[i]);
  }
  word = 0;
  CHECK(spin_trylock_kind(&word, SPIN_QSPINLOCK) && word == 0x1, "trylock on 0 takes the lock: %#x", word);
  spin_unlock_kind(&word, SPIN_QSPINLOCK);
  CHECK(word == 0, "unlock: %#x", word);
  word = 0;
  CHECK(spin_trylock_kind(&word, SPIN_TAS) && word == 1 && !spin_trylock_kind(&word, SPIN_TAS), "tas trylock");
  word = 0x00010001;   /* ticket: free, one ticket served */
  CHECK(spin_trylock_kind(&word, SPIN_TICKET) && word == 0x00020001 && !spin_trylock_kind(&word, SPIN_TICKET), "ticket trylock: %#x", word);
  word = 0;
}

static int locked(uint32_t v, enum spinlock_kind k) {
  struct lockref lr = {.lock_count = 0};
  lr.lock = v;
  word = v;
  int a = lockref_locked(lr, k), b = spin_is_locked(&word, k);
  CHECK(a == b, "lockref_locked and spin_is_locked disagree on %#x", v);
  word = 0;
  return a;
}

static void unlocked_test(void) {
  /* qspinlock: locked unless the whole word is 0 */
  CHECK(!locked(0, SPIN_QSPINLOCK), "0 is unlocked");
  CHECK(locked(0x1, SPIN_QSPINLOCK), "locked byte");
  CHECK(locked(0x100, SPIN_QSPINLOCK), "pending only, no holder");
  CHECK(locked(0x00040000, SPIN_QSPINLOCK), "a tail only, no holder");
  CHECK(locked(0x00040100, SPIN_QSPINLOCK), "a tail and pending, no holder");
  CHECK(locked(0x01000100, SPIN_QSPINLOCK), "pending, tail cpu 63 idx 0: halves equal, still locked");
  CHECK(locked(0x01010101, SPIN_QSPINLOCK), "held, pending, tail cpu 63 idx 1: halves equal, still locked");
  CHECK(locked(0x00010001, SPIN_QSPINLOCK), "a free ticket word is a locked qspinlock word");
  int wrong = 0;
  for (uint32_t tail = 0; tail <= 0xffff; tail++)
    for (uint32_t lp = 0; lp <= 0x101; lp += 0x100)   /* locked_pending: 0, 0x100 */
      for (uint32_t l = 0; l <= 1; l++) {
        uint32_t v = tail << 16 | lp | l;
        struct lockref lr = {.lock_count = 0};
        lr.lock = v;
        if (lockref_locked(lr, SPIN_QSPINLOCK) != (v != 0) && wrong++ < 5) CHECK(0, "word %#x", v);
      }
  CHECK(wrong == 0, "%d words of the sweep misjudged", wrong);
  /* tas and ticket: as before, the halves differ */
  CHECK(!locked(0, SPIN_TAS) && locked(1, SPIN_TAS), "tas: 0 free, 1 held");
  CHECK(!locked(0x00010001, SPIN_TICKET) && locked(0x00020001, SPIN_TICKET) && !locked(0x00070007, SPIN_TICKET), "ticket: free when head == tail");
  CHECK(!locked(0x01000100, SPIN_TICKET), "ticket: halves equal is free");
}

static void timed_out(int sig) {
  (void)sig;
  static const char msg[] = "qspinlock_test: FAIL: still running after 20 s (a locker never got the lock)\n";
  if (write(2, msg, sizeof msg - 1)) {}
  _exit(1);
}

int main(void) {
  signal(SIGALRM, timed_out);
  alarm(20);
  qspinlock_setup();
  arrivals_and_hand_overs();
  trylock();
  unlocked_test();
  if (failures) {
    fprintf(stderr, "qspinlock_test: %d check(s) failed\n", failures);
    return 1;
  }
  printf("qspinlock_test: ok\n");
  return 0;
}
