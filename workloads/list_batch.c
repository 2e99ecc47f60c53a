/* List batching (seed 001): threads add and remove their own nodes on one list under one spinlock, like
 * inode_sb_list_add/del. `batched`: a thread that cannot take the lock queues its operation; the lock holder
 * performs every queued operation before it unlocks (one waiter works for the others). --spinlock is the list
 * lock (4.4's s_inode_list_lock is a qspinlock; tas, the default, is what this took before it had the flag). */
#include "common/spinlock.h"

static const char testcase_description[] = "threads add and delete their own nodes on one locked list, inline or batched by the lock holder";

struct list_head { struct list_head *next, *prev; };
struct node { struct list_head link; int owner; } __aligned_line;

struct request {
  struct request *next;
  struct node *node;
  int add;
  volatile int done;
} __aligned_line;

struct list_shared { uint32_t lock; uint32_t pad; struct list_head head; struct request *pending; uint64_t length; } __aligned_line;
struct list_split {
  uint32_t lock __aligned_line;
  struct list_head head __aligned_line;
  struct request *pending __aligned_line;
  uint64_t length __aligned_line;
} __aligned_line;

static const char *policies[] = {"locked", "batched", NULL};
static const char *layouts[] = {"shared", "split", NULL};
#define TESTCASE_FLAGS(X)                                                                                          \
  X(policy, "policy", "how contended operations are done", policies, "locked")                                     \
  X(layout, "layout", "where lock, list head and request queue sit", layouts, "shared")                            \
  X(spinlock, "spinlock", "the list lock: tas (test-and-test-and-set: the uncontended shape), ticket (x86 2.6.25 .. 4.1) or qspinlock (x86 4.2+, the 4.4 of seed 001)", \
    spinlock_kinds, "tas")

static uint32_t *lock;
static struct list_head *head;
static struct request **pending;
static uint64_t *length;
static int batched;
static enum spinlock_kind kind;
BENCH_TESTCASE("list_batch", "list operations (half adds, half deletes)", TESTCASE_FLAGS)
static struct node nodes[MAX_THREADS];
static struct request requests[MAX_THREADS];
static struct { uint64_t ops, own, for_others, max_length; } __aligned_line stats[MAX_THREADS];

static void list_add(struct list_head *n, struct list_head *h) {
  n->next = h->next; n->prev = h; h->next->prev = n; h->next = n;
}
static void list_del(struct list_head *n) {
  n->prev->next = n->next; n->next->prev = n->prev; n->next = n->prev = n;
}
static void do_op(struct node *n, int add, int me) {
  if (add) { list_add(&n->link, head); ++*length; } else { list_del(&n->link); --*length; }
  if (*length > stats[me].max_length) stats[me].max_length = *length;
}

/* With the lock held: perform every queued request. */
static void drain(int me) {
  struct request *r = __atomic_exchange_n(pending, NULL, __ATOMIC_ACQUIRE);
  while (r) {
    struct request *next = r->next;   /* read before `done` hands the request back to its owner */
    do_op(r->node, r->add, me);
    stats[me].for_others++;
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    r = next;
  }
}

static inline __attribute__((always_inline)) void list_op_kind(int me, struct node *n, int add, enum spinlock_kind k) {
  if (!batched) {
    spin_lock_kind(lock, k);
    do_op(n, add, me);
    stats[me].own++;
    spin_unlock_kind(lock, k);
    return;
  }
  if (spin_trylock_kind(lock, k)) {   /* tas: a read, then xchg; qspinlock: queued_spin_trylock */
    do_op(n, add, me);
    stats[me].own++;
    drain(me);
    spin_unlock_kind(lock, k);
    return;
  }
  struct request *r = &requests[me];
  r->node = n; r->add = add; r->done = 0;
  struct request *old = __atomic_load_n(pending, __ATOMIC_RELAXED);
  do r->next = old; while (!__atomic_compare_exchange_n(pending, &old, r, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
  while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
    if (spin_trylock_kind(lock, k)) { drain(me); spin_unlock_kind(lock, k); }
    else cpu_relax();
  }
}

/* One list_op per lock kind, the kind a constant in each (as lockref.h does): no lock operation tests the kind, and
 * list_op_tas compiles to the list_op of before --spinlock. */
static void list_op_tas(int me, struct node *n, int add) { list_op_kind(me, n, add, SPIN_TAS); }
static void list_op_ticket(int me, struct node *n, int add) { list_op_kind(me, n, add, SPIN_TICKET); }
static void list_op_qspinlock(int me, struct node *n, int add) { list_op_kind(me, n, add, SPIN_QSPINLOCK); }

static void testcase(int id) {
  void (*list_op)(int, struct node *, int) = kind == SPIN_TICKET ? list_op_ticket : kind == SPIN_QSPINLOCK ? list_op_qspinlock : list_op_tas;
  uint64_t i = 0;
  for (struct bench_loop l = bench_loop(&run, id); bench_next(&l); i++) {
    list_op(id, &nodes[id], (i & 1) == 0);   /* add, then delete, the thread's own node */
    stats[id].ops++;
  }
  if (i & 1) { list_op(id, &nodes[id], 0); stats[id].ops++; }   /* a timed run can stop after an add: undo it, unmeasured */
}

static struct list_shared ls;
static struct list_split lsp;

static int testcase_prepare(void) {
  batched = flag_is(policy, "batched");
  kind = parse_spinlock_kind(flag_text(spinlock));
  if (kind == SPIN_QSPINLOCK) qspinlock_setup();
  if (flag_is(layout, "shared")) { lock = &ls.lock; head = &ls.head; pending = &ls.pending; length = &ls.length; }
  else { lock = &lsp.lock; head = &lsp.head; pending = &lsp.pending; length = &lsp.length; }
  head->next = head->prev = head;
  touch_object(nodes, sizeof nodes[0] * run.threads);
  for (int i = 0; i < run.threads; i++) nodes[i].owner = i;
  return 0;
}

/* Invariants: the list is empty, well linked, and never held more nodes than threads. */
static int testcase_report(void) {
  uint64_t ops = 0, own = 0, others = 0, max_len = 0, walked = 0;
  for (int i = 0; i < run.threads; i++) {
    ops += stats[i].ops; own += stats[i].own; others += stats[i].for_others;
    if (stats[i].max_length > max_len) max_len = stats[i].max_length;
  }
  int ok = *length == 0 && own + others == ops && max_len <= (uint64_t)run.threads;
  for (struct list_head *p = head->next; p != head && walked <= ops; p = p->next) {
    if (p->next->prev != p) ok = 0;
    walked++;
  }
  if (walked != 0) ok = 0;
  json_u64("ops_by_owner", own);
  json_u64("ops_for_others", others);
  json_u64("final_length", *length);
  json_u64("max_length", max_len);
  json_str("invariants", ok ? "ok" : "violated");
  json_layout_begin(flag_text(layout));
  int shared = flag_is(layout, "shared");
  json_object_begin("sb_inode_list", shared ? (void *)&ls : (void *)&lsp, shared ? sizeof ls : sizeof lsp);
  json_field("lock", lock, sizeof *lock);
  json_field("head", head, sizeof *head);
  json_field("pending", pending, sizeof *pending);
  json_field("length", length, sizeof *length);
  json_object_end();
  json_object_begin("nodes", nodes, sizeof nodes[0] * run.threads);
  json_object_end();
  json_layout_end();
  return ok ? 0 : 1;
}
