/* Reader-writer semaphore, 1:1 readers and writers, short critical section (seed 002). A reader that finds
 * the semaphore writer-owned either sleeps at once (`sleep`) or spins while the writer holds it, for a
 * bounded number of polls, before sleeping (`spin`: reader optimistic spinning). Writers spin, then sleep,
 * in both. */
#define BENCH_THREADS_HELP "threads; even ids read, odd ids write (thread 0 is the main thread)"
#include "common/spinlock.h"   /* first: bench.h defines _GNU_SOURCE before the system headers */
#include "common/guest.h"

#include <linux/futex.h>
#include <sys/syscall.h>

static const char testcase_description[] = "readers and writers take one rwsem; a reader sleeps on a writer-owned one, or spins first";

#define WRITER 1ll
#define READER 2ll

struct rwsem_shared { int64_t count; void *owner; uint32_t wait_seq; uint32_t waiters; } __aligned_line;
struct rwsem_split {
  int64_t count __aligned_line;
  void *owner __aligned_line;
  uint32_t wait_seq __aligned_line;
  uint32_t waiters;
} __aligned_line;

static const char *policies[] = {"sleep", "spin", NULL};
static const char *layouts[] = {"shared", "split", NULL};
#define TESTCASE_FLAGS(X)                                                                     \
  X(policy, "policy", "what a reader does on a writer-owned semaphore", policies, "sleep")   \
  X(layout, "layout", "where count, owner and wait word sit", layouts, "shared")             \
  X(spin_polls, "spin-polls", "polls a spinner makes before sleeping", NULL, "1000")          \
  X(cs_work, "cs-work", "iterations of work inside the critical section", NULL, "20")              \
  X(guest, "guest", "in the gem5 guest (full system: the kernel's futex): JSON via m5 writefile, with its page table", NULL, NULL)

static int64_t *count;
static void **owner;
static uint32_t *wait_seq, *waiters;
static int reader_spins;
BENCH_TESTCASE("rwsem", "lock/unlock pairs", TESTCASE_FLAGS)
static uint64_t spin_polls, cs_work;
static int inside_readers __aligned_line, inside_writers __aligned_line;
static uint64_t violations __aligned_line;
static struct { uint64_t ops, sleeps, spins, reads, writes; } __aligned_line stats[MAX_THREADS];

static void futex_wait(uint32_t *addr, uint32_t val) { syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0); }
static void futex_wake_all(uint32_t *addr) { syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0); }

static int try_read(void) {
  int64_t c = __atomic_load_n(count, __ATOMIC_RELAXED);
  return !(c & WRITER) && __atomic_compare_exchange_n(count, &c, c + READER, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}
static int try_write(void) {
  int64_t zero = 0;
  return __atomic_compare_exchange_n(count, &zero, WRITER, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* Sleep until the semaphore changes hands; the wait word's sequence avoids lost wake-ups. */
static void wait_for_release(int me) {
  uint32_t seq = __atomic_load_n(wait_seq, __ATOMIC_ACQUIRE);
  __atomic_add_fetch(waiters, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(count, __ATOMIC_SEQ_CST) != 0) { futex_wait(wait_seq, seq); stats[me].sleeps++; }
  __atomic_sub_fetch(waiters, 1, __ATOMIC_SEQ_CST);
}
static void wake_waiters(void) {
  if (__atomic_load_n(waiters, __ATOMIC_SEQ_CST)) {
    __atomic_add_fetch(wait_seq, 1, __ATOMIC_RELEASE);
    futex_wake_all(wait_seq);
  }
}
/* Spin while the lock is held, up to spin_polls; returns when it looks free or the budget is gone. */
static void spin_while_held(int me, int64_t busy_mask) {
  for (uint64_t i = 0; i < spin_polls && (__atomic_load_n(count, __ATOMIC_RELAXED) & busy_mask); i++) cpu_relax();
  stats[me].spins++;
}

static void down_read(int me) {
  while (!try_read()) {
    if (reader_spins) spin_while_held(me, WRITER);
    if (!try_read()) wait_for_release(me); else return;
  }
}
static void up_read(void) {
  /* sequentially consistent for the reason up_write's store is (on x86 the same locked instruction either way) */
  if (__atomic_sub_fetch(count, READER, __ATOMIC_SEQ_CST) == 0) wake_waiters();
}
static void down_write(int me) {
  while (!try_write()) {
    spin_while_held(me, ~0ll);
    if (!try_write()) wait_for_release(me); else break;
  }
  WRITE_ONCE(*owner, &stats[me]);
}
static void up_write(void) {
  WRITE_ONCE(*owner, NULL);
  /* Sequentially consistent, not a release: the store must be visible before wake_waiters() reads `waiters`.
   * With a release store x86 may let that load pass it (store buffer); a sleeper that counted itself in and
   * still read the old count would then miss this wake-up. (The kernel's up_write is a locked xadd.) */
  __atomic_store_n(count, 0, __ATOMIC_SEQ_CST);
  wake_waiters();
}

static void critical_section(void) {
  for (volatile uint64_t i = 0; i < cs_work; i++) {}
}

static void testcase(int id) {
  int writer = id & 1;
  for (struct bench_loop l = bench_loop(&run, id); bench_next(&l);) {
    if (writer) {
      down_write(id);
      /* Dekker check: a writer and a reader inside together would each see the other. */
      if (__atomic_add_fetch(&inside_writers, 1, __ATOMIC_SEQ_CST) != 1 || __atomic_load_n(&inside_readers, __ATOMIC_SEQ_CST))
        __atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
      critical_section();
      __atomic_sub_fetch(&inside_writers, 1, __ATOMIC_SEQ_CST);
      up_write();
      stats[id].writes++;
    } else {
      down_read(id);
      __atomic_add_fetch(&inside_readers, 1, __ATOMIC_SEQ_CST);
      if (__atomic_load_n(&inside_writers, __ATOMIC_SEQ_CST)) __atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
      critical_section();
      __atomic_sub_fetch(&inside_readers, 1, __ATOMIC_SEQ_CST);
      up_read();
      stats[id].reads++;
    }
    stats[id].ops++;
  }
}

static struct rwsem_shared rs;
static struct rwsem_split rsp;

static int guest;

static int testcase_prepare(void) {
  guest = flag_on(guest);
  if (guest && guest_mode(&run)) return 3;
  reader_spins = flag_is(policy, "spin");
  spin_polls = flag_num(spin_polls);
  cs_work = flag_num(cs_work);
  int shared = flag_is(layout, "shared");
  if (shared) { count = &rs.count; owner = &rs.owner; wait_seq = &rs.wait_seq; waiters = &rs.waiters; }
  else { count = &rsp.count; owner = &rsp.owner; wait_seq = &rsp.wait_seq; waiters = &rsp.waiters; }
  touch_object(shared ? (void *)&rs : (void *)&rsp, shared ? sizeof rs : sizeof rsp);
  touch_object(&inside_readers, sizeof inside_readers);   /* named in the layout map too: mapped before the run */
  touch_object(&inside_writers, sizeof inside_writers);
  return 0;
}

static int testcase_report(void) {
  uint64_t ops = 0, sleeps = 0, spins = 0, reads = 0, writes = 0;
  for (int i = 0; i < run.threads; i++) {
    ops += stats[i].ops; sleeps += stats[i].sleeps; spins += stats[i].spins; reads += stats[i].reads; writes += stats[i].writes;
  }
  int ok = violations == 0 && *count == 0;
  json_u64("reads", reads);
  json_u64("writes", writes);
  json_u64("sleeps", sleeps);
  json_u64("spins", spins);
  json_u64("violations", violations);
  json_str("invariants", ok ? "ok" : "violated");
  json_layout_begin(flag_text(layout));
  int shared = flag_is(layout, "shared");
  json_object_begin("rwsem", shared ? (void *)&rs : (void *)&rsp, shared ? sizeof rs : sizeof rsp);
  json_field("count", count, sizeof *count);
  json_field("owner", owner, sizeof *owner);
  json_field("wait_seq", wait_seq, sizeof *wait_seq);
  json_object_end();
  /* the invariant check's counters: every critical section updates one of them and reads the other, so
   * they are contended lines of the run too (the attribution names them) */
  json_object_begin("inside_readers", &inside_readers, sizeof inside_readers);
  json_field("inside_readers", &inside_readers, sizeof inside_readers);
  json_object_end();
  json_object_begin("inside_writers", &inside_writers, sizeof inside_writers);
  json_field("inside_writers", &inside_writers, sizeof inside_writers);
  json_object_end();
  json_layout_end();
  if (guest)
    json_guest_pages((struct guest_range[]){{shared ? (void *)&rs : (void *)&rsp, shared ? sizeof rs : sizeof rsp},
                                            {&inside_readers, sizeof inside_readers},
                                            {&inside_writers, sizeof inside_writers}}, 3);
  return ok ? 0 : 1;
}
