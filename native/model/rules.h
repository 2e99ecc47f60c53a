/* The counting rules of docs/counting-rules.md in C, once: a line's state and what one event does to it
 * (cohtb/monitor/models.py: LineState, Effects, apply_rules). The compiled bounded model (cohtb_model.c) and the
 * compiled reconciliation (cohtb_reconcile.c) both apply them through apply_rules; comments name the rule table's
 * rules (W, R, E, X). */
#ifndef COHTB_RULES_H
#define COHTB_RULES_H

#include <stdint.h>

#include "cohtb_contract.h"

struct line_state {                /* LineState: the last writer, whether its copy is dirty, the holders */
  uint8_t owner_valid, dirty;
  uint16_t owner;
  uint16_t owner_socket;
  uint64_t holders;                /* bit c: core c holds a copy: HOLDER_BITS cores at most */
};
#define HOLDER_BITS (8 * (unsigned)sizeof(uint64_t))   /* the holders mask's width bounds the cores it can follow */

struct effects {                   /* Effects: what one event adds to the counters */
  uint8_t transfer, cross_socket, dirty_read_local, dirty_read_remote;
  uint32_t invalidations;
  uint16_t from_socket;            /* the old owner's socket (the matrix row of a transfer) */
};

static inline int free_state(const struct line_state *s) { return !s->holders && !s->owner_valid; }

/* apply_rules: one event on a line in state *old; its effects, and *new_state. */
static inline struct effects apply_rules(const struct line_state *old, struct line_state *new_state, unsigned core,
                                         unsigned socket, unsigned kind) {
  uint64_t bit = (uint64_t)1 << core;
  int owner_other = old->owner_valid && old->owner != core;
  int remote = old->owner_socket != socket;
  struct effects fx = {0};
  fx.from_socket = old->owner_socket;
  *new_state = *old;
  if (kind == COHTB_WRITE) {
    /* Rule W: a transfer when another core was the last writer; every other holder is invalidated. */
    fx.transfer = owner_other;
    fx.cross_socket = owner_other && remote;
    fx.invalidations = (uint32_t)__builtin_popcountll(old->holders & ~bit);
    new_state->owner_valid = 1;
    new_state->owner = (uint16_t)core;
    new_state->owner_socket = (uint16_t)socket;
    new_state->dirty = 1;
    new_state->holders = bit;
  } else if (kind == COHTB_READ) {
    /* Rule R: a dirty read when another core's copy is dirty; the line is clean afterwards. */
    int dirty_read = old->dirty && owner_other;
    fx.dirty_read_remote = dirty_read && remote;
    fx.dirty_read_local = dirty_read && !remote;
    new_state->dirty = old->dirty && !dirty_read;
    new_state->holders = old->holders | bit;
  } else if (kind == COHTB_EVICT) {
    /* Rule E: the core leaves the holders; an owner that leaves takes its ownership with it. */
    new_state->holders = old->holders & ~bit;
    if (old->owner_valid && old->owner == core) new_state->owner_valid = new_state->dirty = 0;
  }
  /* Rule X (FWD_GETS, FWD_GETX, INV): no effect, no change. */
  return fx;
}

#endif
