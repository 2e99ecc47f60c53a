/* The reconciliation compiled: cohtb/analysis/reconcile.py's Reconciler over cohtb/monitor/models.py's IdealModel,
 * rule for rule, in C.
 *
 * The Python classes are the specification (docs/gem5.md, "Reconciling"); this is the same pairing of the ideal
 * model's transfers and dirty reads with gem5's evidence, fast enough for the main job to hold every bundled run
 * against gem5 in seconds. It is held to the Python, never to the RTL: tests/test_compiled_reconcile.py compares
 * the two, every per-line count, on random streams and on bundled runs of both protocols.
 *
 * Each function below names the Python method it mirrors. Per-line counts are kept in the order of the Python
 * dataclasses' fields (LineStats, LineCheck: cohtb/analysis/compiled_reconcile.py checks the names), and lines
 * in the order their first event came (the Python dict's order, which breaks ties when lines are ranked).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cohtb_contract.h"
#include "rules.h"

/* LineStats' fields */
enum { S_READS, S_WRITES, S_EVICTS, S_TRANSFERS, S_CROSS, S_INVALIDATIONS, S_DIRTY_LOCAL, S_DIRTY_REMOTE,
       S_FWD_GETS, S_FWD_GETX, S_INV, N_STATS };
/* LineCheck's fields */
enum { C_TRANSFERS_MATCHED, C_TRANSFERS_MONITOR_ONLY, C_TRANSFERS_GEM5_ONLY, C_DIRTY_MATCHED, C_DIRTY_MONITOR_ONLY,
       C_DIRTY_GEM5_ONLY, C_OWNER_BEFORE_TRACE, C_REQUESTER_AFTER_TRACE, C_WRITEBACK_FORWARDS, C_DIRTY_HANDED_UP,
       C_CLEAN_FORWARDS, N_CHECKS };

struct line_rec {                  /* one line: IdealModel.lines and .stats, Reconciler.lines */
  uint64_t line;
  struct line_state st;            /* all zero: free (not in IdealModel.lines) */
  uint64_t stats[N_STATS];
  uint64_t check[N_CHECKS];
  uint8_t has_check;               /* the line is in Reconciler.lines */
  uint64_t check_seq;              /* when it entered Reconciler.lines (the dict's order) */
  uint64_t state_seq;              /* when its state last became tracked (IdealModel.lines' order) */
};

struct core_rec {                  /* one (line, core): its evidence, and whether it wrote or last read the line */
  uint64_t line;
  uint32_t core;
  uint8_t waiting;                 /* (line, core) is a key of Reconciler._evidence (its list may be empty) */
  uint8_t wrote, got_by_read;      /* in Reconciler._wrote, ._got_by_read */
  uint32_t n, cap;
  uint32_t *items;                 /* the evidence in arrival order: kind << 16 | l1_state */
};

struct index {                     /* open addressing: slot -> record number + 1 (0: empty) */
  uint32_t *slots;
  uint64_t mask;
};

struct cohtb_reconcile {
  uint32_t sockets;
  int dirty_up;
  struct line_rec *lines;
  uint64_t n_lines, cap_lines;
  struct index line_index;
  struct core_rec *cores;
  uint64_t n_cores, cap_cores;
  struct index core_index;
  uint64_t checks, states;         /* the sequence numbers given so far */
  uint64_t *matrix;                /* sockets x sockets, [from][to] */
  uint64_t kinds[COHTB_NUM_KINDS];
  int failed;                      /* an event the Python would refuse (a kind, core or socket out of range) */
};

static uint64_t mix(uint64_t x) {  /* splitmix64's finaliser */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static int index_init(struct index *ix, uint64_t size) {
  ix->slots = calloc(size, sizeof *ix->slots);
  ix->mask = size - 1;
  return ix->slots != NULL;
}

static uint64_t line_hash(uint64_t line) { return mix(line); }
static uint64_t core_hash(uint64_t line, uint32_t core) { return mix(line * 0x9e3779b97f4a7c15ULL + core + 1); }
static uint64_t line_hash_at(const void *recs, uint64_t i) { return line_hash(((const struct line_rec *)recs)[i].line); }
static uint64_t core_hash_at(const void *recs, uint64_t i) {
  const struct core_rec *c = &((const struct core_rec *)recs)[i];
  return core_hash(c->line, c->core);
}

/* Record number i (from 0) put in the first free slot from its hash. */
static void index_put(struct index *ix, uint64_t hash, uint64_t i) {
  uint64_t h = hash & ix->mask;
  while (ix->slots[h]) h = (h + 1) & ix->mask;
  ix->slots[h] = (uint32_t)(i + 1);
}

/* Room for one more of n records, the index kept at most half full (0: out of memory). */
static int index_room(struct index *ix, uint64_t n, uint64_t (*hash_at)(const void *, uint64_t), const void *recs) {
  if (2 * (n + 1) <= ix->mask + 1) return 1;
  struct index bigger;
  if (!index_init(&bigger, 2 * (ix->mask + 1))) return 0;
  for (uint64_t i = 0; i < n; i++) index_put(&bigger, hash_at(recs, i), i);
  free(ix->slots);
  *ix = bigger;
  return 1;
}

/* An array of n records with room for one more: recs itself, or recs grown to twice its capacity (*cap updated);
 * NULL, recs untouched, when out of memory. */
static void *with_room(void *recs, uint64_t n, uint64_t *cap, size_t size) {
  if (n < *cap) return recs;
  uint64_t bigger = *cap ? 2 * *cap : 1024;
  void *grown = realloc(recs, bigger * size);
  if (grown) *cap = bigger;
  return grown;
}

/* The record of a line, added at the end if new (NULL: out of memory). */
static struct line_rec *line_of(struct cohtb_reconcile *r, uint64_t line) {
  for (uint64_t h = line_hash(line) & r->line_index.mask;; h = (h + 1) & r->line_index.mask) {
    uint32_t k = r->line_index.slots[h];
    if (!k) break;
    if (r->lines[k - 1].line == line) return &r->lines[k - 1];
  }
  if (r->n_lines >= UINT32_MAX - 1 || !index_room(&r->line_index, r->n_lines, line_hash_at, r->lines)) return NULL;
  struct line_rec *lines = with_room(r->lines, r->n_lines, &r->cap_lines, sizeof *lines);
  if (!lines) return NULL;
  r->lines = lines;
  struct line_rec *rec = &r->lines[r->n_lines++];
  memset(rec, 0, sizeof *rec);
  rec->line = line;
  index_put(&r->line_index, line_hash(line), r->n_lines - 1);
  return rec;
}

/* The record of a (line, core), added if new when `add` (else NULL when there is none). */
static struct core_rec *core_of(struct cohtb_reconcile *r, uint64_t line, uint32_t core, int add) {
  for (uint64_t h = core_hash(line, core) & r->core_index.mask;; h = (h + 1) & r->core_index.mask) {
    uint32_t k = r->core_index.slots[h];
    if (!k) break;
    struct core_rec *c = &r->cores[k - 1];
    if (c->line == line && c->core == core) return c;
  }
  if (!add) return NULL;
  if (r->n_cores >= UINT32_MAX - 1 || !index_room(&r->core_index, r->n_cores, core_hash_at, r->cores)) return NULL;
  struct core_rec *cores = with_room(r->cores, r->n_cores, &r->cap_cores, sizeof *cores);
  if (!cores) return NULL;
  r->cores = cores;
  struct core_rec *c = &r->cores[r->n_cores++];
  memset(c, 0, sizeof *c);
  c->line = line;
  c->core = core;
  index_put(&r->core_index, core_hash(line, core), r->n_cores - 1);
  return c;
}

/* IdealModel.apply: one event's kind and evidence counts, and for a state-changing kind its effects. Returns 1
 * when the kind changes state (*old, *fx filled), 0 when not, -1 when out of memory. */
static int ideal_apply(struct cohtb_reconcile *r, struct line_rec *rec, unsigned core, unsigned socket,
                       unsigned kind, struct line_state *old, struct effects *fx) {
  r->kinds[kind]++;
  uint64_t *st = rec->stats;
  if (kind == COHTB_FWD_GETS) st[S_FWD_GETS]++;
  else if (kind == COHTB_FWD_GETX) st[S_FWD_GETX]++;
  else if (kind == COHTB_INV) st[S_INV]++;
  if (kind != COHTB_READ && kind != COHTB_WRITE && kind != COHTB_EVICT) return 0;
  *old = rec->st;
  struct line_state next;
  *fx = apply_rules(old, &next, core, socket, kind);
  if (kind == COHTB_READ) st[S_READS]++;
  else if (kind == COHTB_WRITE) st[S_WRITES]++;
  else st[S_EVICTS]++;
  st[S_TRANSFERS] += fx->transfer;
  st[S_CROSS] += fx->cross_socket;
  st[S_INVALIDATIONS] += fx->invalidations;
  st[S_DIRTY_LOCAL] += fx->dirty_read_local;
  st[S_DIRTY_REMOTE] += fx->dirty_read_remote;
  if (fx->transfer) {
    if (fx->from_socket >= r->sockets || socket >= r->sockets) return -2;   /* the Python matrix has no such cell */
    r->matrix[(uint64_t)fx->from_socket * r->sockets + socket]++;
  }
  if (free_state(&next)) {
    memset(&rec->st, 0, sizeof rec->st);
  } else {
    if (free_state(old)) rec->state_seq = r->states++;   /* a dict key added again goes last */
    rec->st = next;
  }
  return 1;
}

/* The line enters Reconciler.lines, if it is not there yet. */
static void mark_checked(struct cohtb_reconcile *r, struct line_rec *rec) {
  if (!rec->has_check) rec->check_seq = r->checks++;
  rec->has_check = 1;
}

/* Reconciler._claim: the first of the owner's waiting evidence of one of the kinds, taken. */
static int claim(struct cohtb_reconcile *r, uint64_t line, uint32_t owner, unsigned kind_a, unsigned kind_b) {
  struct core_rec *c = core_of(r, line, owner, 0);
  if (!c || !c->waiting) return 0;
  for (uint32_t i = 0; i < c->n; i++) {
    unsigned kind = c->items[i] >> 16;
    if (kind == kind_a || kind == kind_b) {
      memmove(&c->items[i], &c->items[i + 1], (c->n - i - 1) * sizeof *c->items);
      c->n--;
      return 1;
    }
  }
  return 0;
}

/* Reconciler._settle: the core's waiting evidence on the line, each item classed, then no longer waiting. */
static void settle(struct cohtb_reconcile *r, struct core_rec *c, struct line_rec *rec, int at_end) {
  uint64_t *chk = rec->check;
  for (uint32_t i = 0; c->waiting && i < c->n; i++) {
    unsigned kind = c->items[i] >> 16, state = c->items[i] & 0xffff;
    if (kind == COHTB_INV) continue;   /* an Inv at a sharer, or a recall: not transfer evidence */
    if (state == COHTB_L1_E) chk[C_CLEAN_FORWARDS]++;
    else if (kind == COHTB_FWD_GETS && state == COHTB_L1_M_I) chk[C_WRITEBACK_FORWARDS]++;
    else if (!c->wrote) chk[C_OWNER_BEFORE_TRACE]++;
    else if (r->dirty_up && kind == COHTB_FWD_GETS && state == COHTB_L1_M && c->got_by_read) chk[C_DIRTY_HANDED_UP]++;
    else if (at_end) chk[C_REQUESTER_AFTER_TRACE]++;
    else if (kind == COHTB_FWD_GETX) chk[C_TRANSFERS_GEM5_ONLY]++;
    else chk[C_DIRTY_GEM5_ONLY]++;
  }
  c->waiting = 0;
  c->n = 0;
}

/* Reconciler.apply: one event. 0, or -1: out of memory, -2: an event out of range. */
static int apply(struct cohtb_reconcile *r, const struct cohtb_record *e) {
  unsigned kind = e->kind, core = e->core, socket = e->socket;
  if (kind >= COHTB_NUM_KINDS || core >= HOLDER_BITS) return -2;   /* the contract's cores fit the holders mask */
  struct line_rec *rec = line_of(r, e->line);
  if (!rec) return -1;
  struct line_state old;
  struct effects fx;
  int changed = ideal_apply(r, rec, core, socket, kind, &old, &fx);
  if (changed < 0) return changed;
  if (kind == COHTB_FWD_GETS || kind == COHTB_FWD_GETX || kind == COHTB_INV) {
    struct core_rec *c = core_of(r, e->line, core, 1);
    if (!c) return -1;
    if (c->n == c->cap) {
      if (c->cap >= UINT32_MAX / 2) return -1;
      uint32_t cap = c->cap ? 2 * c->cap : 4;
      uint32_t *grown = realloc(c->items, cap * sizeof *grown);
      if (!grown) return -1;
      c->items = grown;
      c->cap = cap;
    }
    c->items[c->n++] = (uint32_t)kind << 16 | e->l1_state;
    c->waiting = 1;
  }
  if (kind != COHTB_READ && kind != COHTB_WRITE) return 0;
  mark_checked(r, rec);
  uint64_t *chk = rec->check;
  if (fx.transfer) {
    if (claim(r, e->line, old.owner, COHTB_FWD_GETX, COHTB_INV)) chk[C_TRANSFERS_MATCHED]++;
    else chk[C_TRANSFERS_MONITOR_ONLY]++;
  }
  if (fx.dirty_read_local || fx.dirty_read_remote) {
    if (claim(r, e->line, old.owner, COHTB_FWD_GETS, COHTB_FWD_GETS)) chk[C_DIRTY_MATCHED]++;
    else chk[C_DIRTY_MONITOR_ONLY]++;
  }
  /* The core obtains the line again: its evidence of the previous time it held it is settled. */
  struct core_rec *c = core_of(r, e->line, core, 1);
  if (!c) return -1;
  settle(r, c, rec, 0);
  if (kind == COHTB_WRITE) {
    c->wrote = 1;
    c->got_by_read = 0;
  } else {
    c->got_by_read = 1;
  }
  return 0;
}

/* ------------------------------------------------------------------ the library's interface (ctypes) */

void cohtb_reconcile_free(struct cohtb_reconcile *r) {
  if (!r) return;
  for (uint64_t i = 0; i < r->n_cores; i++) free(r->cores[i].items);
  free(r->cores);
  free(r->core_index.slots);
  free(r->lines);
  free(r->line_index.slots);
  free(r->matrix);
  free(r);
}

struct cohtb_reconcile *cohtb_reconcile_new(uint32_t sockets, int dirty_up) {
  struct cohtb_reconcile *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->sockets = sockets;
  r->dirty_up = dirty_up;
  r->matrix = calloc((uint64_t)sockets * sockets + 1, sizeof *r->matrix);
  if (!r->matrix || !index_init(&r->line_index, 1 << 12) || !index_init(&r->core_index, 1 << 12)) {
    cohtb_reconcile_free(r);
    return NULL;
  }
  return r;
}

/* Reconciler.apply_array without its finish: 0, -1 (out of memory) or -2 (an event out of range; nothing after
 * it is applied). */
int cohtb_reconcile_apply(struct cohtb_reconcile *r, const struct cohtb_record *recs, uint64_t n) {
  for (uint64_t i = 0; i < n && !r->failed; i++) r->failed = apply(r, &recs[i]);
  return r->failed;
}

/* Reconciler.finish: the evidence no completion claimed before the trace ended. */
int cohtb_reconcile_finish(struct cohtb_reconcile *r) {
  for (uint64_t i = 0; i < r->n_cores && !r->failed; i++) {
    struct core_rec *c = &r->cores[i];
    if (!c->waiting) continue;
    struct line_rec *rec = line_of(r, c->line);
    if (!rec) return r->failed = -1;
    mark_checked(r, rec);
    settle(r, c, rec, 1);
  }
  return r->failed;
}

uint64_t cohtb_reconcile_lines(const struct cohtb_reconcile *r) { return r->n_lines; }
uint32_t cohtb_reconcile_fields(void) { return N_STATS << 8 | N_CHECKS; }

/* Every line in first-event order: its number, its stats (N_STATS each), its check (N_CHECKS each) and the
 * sequence number it entered Reconciler.lines with (UINT64_MAX: it has no check), its final state (owner_valid,
 * owner, owner_socket, dirty, holders) and the sequence number it entered IdealModel.lines with (UINT64_MAX: its
 * line is free, not in that dict). */
void cohtb_reconcile_read(const struct cohtb_reconcile *r, uint64_t *lines, uint64_t *stats, uint64_t *checks,
                          uint64_t *check_seq, uint64_t *states, uint64_t *state_seq) {
  for (uint64_t i = 0; i < r->n_lines; i++) {
    const struct line_rec *rec = &r->lines[i];
    lines[i] = rec->line;
    memcpy(&stats[i * N_STATS], rec->stats, sizeof rec->stats);
    memcpy(&checks[i * N_CHECKS], rec->check, sizeof rec->check);
    check_seq[i] = rec->has_check ? rec->check_seq : UINT64_MAX;
    const struct line_state *st = &rec->st;
    uint64_t *out = &states[i * 5];
    out[0] = st->owner_valid, out[1] = st->owner, out[2] = st->owner_socket, out[3] = st->dirty, out[4] = st->holders;
    state_seq[i] = free_state(st) ? UINT64_MAX : rec->state_seq;
  }
}

void cohtb_reconcile_totals(const struct cohtb_reconcile *r, uint64_t *matrix, uint64_t *kinds) {
  memcpy(matrix, r->matrix, (uint64_t)r->sockets * r->sockets * sizeof *matrix);
  memcpy(kinds, r->kinds, sizeof r->kinds);
}
