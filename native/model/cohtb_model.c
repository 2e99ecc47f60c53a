/* The bounded reference model compiled: cohtb/monitor/models.py's BoundedModel, rule for rule, in C.
 *
 * The Python model is the specification (it is written against docs/counting-rules.md and carries the coverage
 * bins); this is the same model without the coverage, fast enough to check every bundled run's RTL counters in
 * the main job. It is held to the Python model, never to the RTL: every soak runs the three side by side and
 * compares the compiled model with the Python one (cohtb/verify/soak.py), and tests/test_compiled_model.py does so
 * on random streams, the workloads' contention patterns and every parameter set of rtl/variants.txt.
 *
 * Each function below names the Python method it mirrors; comments name the rule table's rules (W, R, E, X).
 */

#include <stdint.h>
#include <stdlib.h>

#include "cohtb_contract.h"
#include "rules.h"

struct cohtb_model_params {        /* MonitorParams (cohtb/monitor/config.py) */
  uint32_t cores, sockets, line_addr_bits, sets, ways, xorfold, lru, hot_entries, regions, counter_width;
};

struct hot_entry { uint64_t line, count, error, valid; };   /* HotEntry, in the contract's HOT_FIELDS order */

struct cohtb_model {
  struct cohtb_model_params p;
  uint64_t max, line_mask, set_mask;
  unsigned set_bits;
  /* the line table: sets x ways */
  uint8_t *tag_valid;
  uint64_t *tags;
  struct line_state *lines;
  uint32_t *ages;                  /* LRU age of each way (0: most recent) */
  uint32_t *ptrs;                  /* round-robin victim of each set */
  /* the counters */
  uint64_t totals[COHTB_NUM_GLOBAL_COUNTERS];
  uint64_t *region_counts;         /* regions x COHTB_NUM_REGION_COUNTERS */
  uint64_t *matrix;                /* sockets x sockets, [from][to] */
  struct hot_entry *hot;
  uint8_t saturated, dropped;
  /* the regions */
  uint32_t region_enable;
  uint64_t *region_base, *region_mask;
};

/* _add: a saturating counter. */
static void add(struct cohtb_model *m, uint64_t *counter, uint64_t n) {
  if (n > m->max - *counter) {
    *counter = m->max;
    m->saturated = 1;
  } else {
    *counter += n;
  }
}

/* MonitorParams.set_index */
static uint32_t set_index(const struct cohtb_model *m, uint64_t line) {
  if (!m->p.xorfold) return (uint32_t)(line & m->set_mask);
  uint64_t folded = 0, rest = line & m->line_mask;
  while (rest) {
    folded ^= rest & m->set_mask;
    rest = m->set_bits ? rest >> m->set_bits : 0;
  }
  return (uint32_t)folded;
}

/* _hot_item: the Space-Saving update; among equal minimum counts the lowest index is replaced. */
static void hot_item(struct cohtb_model *m, uint64_t line) {
  uint32_t n = m->p.hot_entries, slot = n;
  int hit = 0;
  uint64_t base = 0;
  for (uint32_t k = 0; k < n; k++)
    if (m->hot[k].valid && m->hot[k].line == line) { slot = k; hit = 1; break; }
  if (hit) {
    base = m->hot[slot].count;
  } else {
    for (uint32_t k = 0; k < n && slot == n; k++)
      if (!m->hot[k].valid) slot = k;
    if (slot == n) {
      slot = 0;
      for (uint32_t k = 1; k < n; k++)
        if (m->hot[k].count < m->hot[slot].count) slot = k;
      base = m->hot[slot].count;
    }
  }
  uint64_t next = base + 1;
  if (base >= m->max) {
    next = m->max;
    m->saturated = 1;
  }
  struct hot_entry *h = &m->hot[slot];
  h->valid = 1;
  h->line = line;
  h->count = next;
  if (!hit) h->error = base;
}

/* _count_effects: docs/counting-rules.md, "Where an event's effects are counted". */
static void count_effects(struct cohtb_model *m, uint64_t line, unsigned kind, const struct effects *fx,
                          unsigned socket) {
  uint64_t *g = m->totals;
  if (fx->transfer) {
    add(m, &g[COHTB_GLOBAL_TRANSFERS], 1);
    add(m, &m->matrix[(uint64_t)fx->from_socket * m->p.sockets + socket], 1);
  }
  if (fx->cross_socket) add(m, &g[COHTB_GLOBAL_CROSS_SOCKET_TRANSFERS], 1);
  if (fx->invalidations) add(m, &g[COHTB_GLOBAL_INVALIDATIONS], fx->invalidations);
  if (fx->dirty_read_local) add(m, &g[COHTB_GLOBAL_DIRTY_READS_LOCAL], 1);
  if (fx->dirty_read_remote) add(m, &g[COHTB_GLOBAL_DIRTY_READS_REMOTE], 1);
  for (uint32_t r = 0; m->region_enable && r < m->p.regions; r++) {
    if (!(m->region_enable >> r & 1) || (line & m->region_mask[r]) != m->region_base[r]) continue;
    uint64_t *rc = &m->region_counts[(uint64_t)r * COHTB_NUM_REGION_COUNTERS];
    if (kind == COHTB_READ) add(m, &rc[COHTB_REGION_READS], 1);
    if (kind == COHTB_WRITE) add(m, &rc[COHTB_REGION_WRITES], 1);
    if (kind == COHTB_EVICT) add(m, &rc[COHTB_REGION_EVICTS], 1);
    if (fx->transfer) add(m, &rc[COHTB_REGION_TRANSFERS], 1);
    if (fx->cross_socket) add(m, &rc[COHTB_REGION_CROSS_SOCKET_TRANSFERS], 1);
    if (fx->invalidations) add(m, &rc[COHTB_REGION_INVALIDATIONS], fx->invalidations);
    if (fx->dirty_read_local) add(m, &rc[COHTB_REGION_DIRTY_READS_LOCAL], 1);
    if (fx->dirty_read_remote) add(m, &rc[COHTB_REGION_DIRTY_READS_REMOTE], 1);
  }
  if (fx->transfer || fx->dirty_read_local || fx->dirty_read_remote) hot_item(m, line);
}

/* apply: one event. */
static void apply(struct cohtb_model *m, uint64_t line, unsigned core, unsigned socket, unsigned kind) {
  const struct cohtb_model_params *p = &m->p;
  uint64_t *g = m->totals;
  add(m, &g[COHTB_GLOBAL_ACCEPTED], 1);
  if (kind >= COHTB_NUM_KINDS || core >= p->cores || socket >= p->sockets) {
    add(m, &g[COHTB_GLOBAL_REJECTED], 1);
    return;
  }
  add(m, &g[COHTB_GLOBAL_EVENTS_READ + kind], 1);   /* the kind counters lead GLOBAL_COUNTERS, in kind order */
  struct effects fx = {0};
  if (kind == COHTB_READ || kind == COHTB_WRITE || kind == COHTB_EVICT) {
    uint32_t idx = set_index(m, line), ways = p->ways, way = ways;
    uint64_t row = (uint64_t)idx * ways;
    for (uint32_t i = 0; i < ways; i++)
      if (m->tag_valid[row + i] && m->tags[row + i] == line) { way = i; break; }
    int hit = way < ways, allocates = kind != COHTB_EVICT;
    if (hit || allocates) {
      struct line_state old = {0}, new_state;
      if (hit) {
        old = m->lines[row + way];
      } else {
        for (uint32_t i = 0; i < ways && way == ways; i++)
          if (!m->tag_valid[row + i]) way = i;
        if (way == ways) {
          /* The set is full: the victim's state is forgotten (stateEvictions). */
          if (p->lru) {
            for (uint32_t i = 0; i < ways; i++)
              if (m->ages[row + i] == ways - 1) { way = i; break; }
          } else {
            way = m->ptrs[idx];
            m->ptrs[idx] = (m->ptrs[idx] + 1) % ways;
          }
          add(m, &g[COHTB_GLOBAL_STATE_EVICTIONS], 1);
        }
      }
      fx = apply_rules(&old, &new_state, core, socket, kind);
      int keep = !free_state(&new_state);   /* rule E: a line with no owner and no holders frees its way */
      m->tag_valid[row + way] = (uint8_t)keep;
      m->tags[row + way] = keep ? line : 0;
      m->lines[row + way] = new_state;
      if (p->lru && allocates) {
        uint32_t mine = m->ages[row + way];
        for (uint32_t i = 0; i < ways; i++) {
          uint32_t a = m->ages[row + i];
          m->ages[row + i] = i == way ? 0 : (a < mine ? a + 1 : a);
        }
      }
    }
  }
  count_effects(m, line, kind, &fx, socket);
}

/* ------------------------------------------------------------------ the library's interface (ctypes) */

size_t cohtb_model_record_size(void) { return sizeof(struct cohtb_record); }

void cohtb_model_clear_state(struct cohtb_model *m) {
  uint64_t n = (uint64_t)m->p.sets * m->p.ways;
  for (uint64_t i = 0; i < n; i++) {
    m->tag_valid[i] = 0;
    m->tags[i] = 0;
    m->lines[i] = (struct line_state){0};
    m->ages[i] = (uint32_t)(i % m->p.ways);
  }
  for (uint32_t s = 0; s < m->p.sets; s++) m->ptrs[s] = 0;
}

void cohtb_model_free(struct cohtb_model *m) {
  if (!m) return;
  free(m->tag_valid);
  free(m->tags);
  free(m->lines);
  free(m->ages);
  free(m->ptrs);
  free(m->region_counts);
  free(m->matrix);
  free(m->hot);
  free(m->region_base);
  free(m->region_mask);
  free(m);
}

struct cohtb_model *cohtb_model_new(const struct cohtb_model_params *p) {
  if (p->cores > HOLDER_BITS || !p->ways || !p->sets || !p->hot_entries || p->regions > 32 || p->counter_width > 64)
    return NULL;
  struct cohtb_model *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  uint64_t n = (uint64_t)p->sets * p->ways;
  m->p = *p;
  m->max = p->counter_width == 64 ? UINT64_MAX : ((uint64_t)1 << p->counter_width) - 1;
  m->line_mask = p->line_addr_bits >= 64 ? UINT64_MAX : ((uint64_t)1 << p->line_addr_bits) - 1;
  m->set_mask = p->sets - 1;
  while (((uint64_t)1 << (m->set_bits + 1)) <= p->sets) m->set_bits++;
  m->tag_valid = calloc(n, 1);
  m->tags = calloc(n, sizeof *m->tags);
  m->lines = calloc(n, sizeof *m->lines);
  m->ages = calloc(n, sizeof *m->ages);
  m->ptrs = calloc(p->sets, sizeof *m->ptrs);
  m->region_counts = calloc((uint64_t)(p->regions ? p->regions : 1) * COHTB_NUM_REGION_COUNTERS, sizeof(uint64_t));
  m->matrix = calloc((uint64_t)p->sockets * p->sockets, sizeof(uint64_t));
  m->hot = calloc(p->hot_entries, sizeof *m->hot);
  m->region_base = calloc(p->regions ? p->regions : 1, sizeof(uint64_t));
  m->region_mask = calloc(p->regions ? p->regions : 1, sizeof(uint64_t));
  if (!m->tag_valid || !m->tags || !m->lines || !m->ages || !m->ptrs || !m->region_counts || !m->matrix || !m->hot ||
      !m->region_base || !m->region_mask) {
    cohtb_model_free(m);
    return NULL;
  }
  cohtb_model_clear_state(m);
  return m;
}

/* set_region: base and mask are line addresses, cut to the line-address width. */
void cohtb_model_set_region(struct cohtb_model *m, uint32_t r, uint64_t base, uint64_t mask, int enabled) {
  m->region_base[r] = base & m->line_mask;
  m->region_mask[r] = mask & m->line_mask;
  m->region_enable = enabled ? m->region_enable | (uint32_t)1 << r : m->region_enable & ~((uint32_t)1 << r);
}

/* drop: events that arrived in tap mode while the monitor could not take them. */
void cohtb_model_drop(struct cohtb_model *m, uint64_t n) {
  if (!n) return;
  add(m, &m->totals[COHTB_GLOBAL_DROPPED], n);
  m->dropped = 1;
}

void cohtb_model_apply(struct cohtb_model *m, const struct cohtb_record *recs, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) apply(m, recs[i].line, recs[i].core, recs[i].socket, recs[i].kind);
}

/* The counters, as a snapshot lists them: totals[COHTB_NUM_GLOBAL_COUNTERS], regions[regions][REGION_COUNTERS],
 * matrix[sockets][sockets], hot[hot_entries][line, count, error, valid], flags[saturated, dropped]. */
void cohtb_model_counters(const struct cohtb_model *m, uint64_t *totals, uint64_t *regions, uint64_t *matrix,
                          uint64_t *hot, uint8_t *flags) {
  for (int i = 0; i < COHTB_NUM_GLOBAL_COUNTERS; i++) totals[i] = m->totals[i];
  for (uint64_t i = 0; i < (uint64_t)m->p.regions * COHTB_NUM_REGION_COUNTERS; i++) regions[i] = m->region_counts[i];
  for (uint64_t i = 0; i < (uint64_t)m->p.sockets * m->p.sockets; i++) matrix[i] = m->matrix[i];
  for (uint32_t k = 0; k < m->p.hot_entries; k++) {
    hot[4 * k] = m->hot[k].line;
    hot[4 * k + 1] = m->hot[k].count;
    hot[4 * k + 2] = m->hot[k].error;
    hot[4 * k + 3] = m->hot[k].valid;
  }
  flags[0] = m->saturated;
  flags[1] = m->dropped;
}
