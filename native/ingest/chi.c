/* The CHI reader of cohtb-ingest: a core's L1D transitions in gem5's CHI ProtocolTrace -> completion-time
 * events with the same meaning as MESI_Two_Level's (docs/gem5.md, "CHI: which transitions are events").
 *
 * CHI names every controller `Cache` and logs a transaction, not a transition: the request opens it from a
 * stable state (`Store SC>BUSY_BLKD`), internal steps follow in BUSY_BLKD/BUSY_INTR, and `Final BUSY_x>S` closes
 * it in the stable state S (CHI-cache-transitions.sm, "Finalization transition"). A snoop that meets a
 * transaction waiting in BUSY_INTR is a hazard (`SnpUnique BUSY_INTR>BUSY_BLKD`), closed by RestoreFromHazard,
 * and the request goes on. So per (core, line) this reader keeps the open request that can become an event, and
 * emits at its Final. Snoops are evidence at arrival, as MESI_Two_Level's Fwd_GETS/Fwd_GETX/Inv are. A snoop
 * or request logged BUSY_BLKD>BUSY_BLKD is a stall (retried later), not a transition.
 *
 * States map to the contract's MESI names: SC -> S, UC -> E, UD -> M; SD (dirty, shared: this L1 answers for the
 * line's data after a dirty read) -> S, since the monitor's line is shared then. The l1_state of an event is the
 * MESI state of the same moment: a READ's is IS (IS_I when a snoop took the copy before its Final), a WRITE's IM (a miss, or an upgrade whose copy a snoop took),
 * SM (an upgrade) or E (the silent UC->UD), an EVICT's S (SC), M_I (a writeback), E or M (a recall). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cohtb_contract.h"
#include "ingest.h"

enum chi_state { CHI_OTHER, CHI_I, CHI_SC, CHI_UC, CHI_SD, CHI_UD, CHI_BUSY };
enum open_kind { OPEN_NONE, OPEN_LOAD_MISS, OPEN_STORE_MISS, OPEN_UPGRADE, OPEN_SILENT_UPGRADE, OPEN_EVICTION };

static enum chi_state chi_state(const char *s, size_t len) {
  if (state_is(s, len, "I")) return CHI_I;
  if (state_is(s, len, "SC")) return CHI_SC;
  if (state_is(s, len, "UC")) return CHI_UC;
  if (state_is(s, len, "SD")) return CHI_SD;
  if (state_is(s, len, "UD") || state_is(s, len, "UD_T")) return CHI_UD;   /* UD_T: UD with a store timeout */
  if (state_is(s, len, "BUSY_BLKD") || state_is(s, len, "BUSY_INTR")) return CHI_BUSY;
  return CHI_OTHER;
}

/* core_of_version[v] = core + 1 for an L1D, 0 for every other controller. */
static uint32_t *core_of_version;
static uint64_t versions;

int chi_map_core(uint64_t version, uint32_t core) {
  if (version >= (1u << 24)) return 0;
  if (version >= versions) {
    uint64_t n = version + 1 > versions * 2 ? version + 1 : versions * 2;
    uint32_t *grown = realloc(core_of_version, n * sizeof *grown);
    if (!grown) return 0;
    memset(grown + versions, 0, (n - versions) * sizeof *grown);
    core_of_version = grown, versions = n;
  }
  if (core_of_version[version]) return 0;   /* one core per version */
  core_of_version[version] = core + 1;
  return 1;
}

int chi_has_map(void) { return versions > 0; }

/* Open requests by (core, line): a request is in flight for hundreds of ns, so the table stays small; open
 * addressing with backward-shift deletion. */
#define SLOTS (1u << 16)
static struct { uint64_t line; uint32_t core; uint8_t used, kind, from, invalidated; } open_req[SLOTS];
static uint32_t open_count;

static uint32_t slot_of(uint32_t core, uint64_t line) {
  uint64_t h = (line * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)core * 0xC2B2AE3D27D4EB4Full);
  uint32_t i = (uint32_t)(h >> 40) & (SLOTS - 1);
  while (open_req[i].used && !(open_req[i].core == core && open_req[i].line == line)) i = (i + 1) & (SLOTS - 1);
  return i;
}

static void drop(uint32_t i) {
  open_req[i].used = 0;
  open_count--;
  for (uint32_t j = (i + 1) & (SLOTS - 1); open_req[j].used; j = (j + 1) & (SLOTS - 1)) {
    uint32_t home = slot_of(open_req[j].core, open_req[j].line);   /* re-place entries after the hole */
    if (home != j) { open_req[home] = open_req[j]; open_req[j].used = 0; }
  }
}

static uint64_t l1_transitions, other_caches, requests, hits, stalls, snoops, shared_snoops, hazards, no_copy,
    recalls, unopened, odd_finals;

/* A snoop at core's L1 whose data state is `st` (for a hazard: the state its open request started from, or M_I
 * when that request is a writeback): the evidence MESI_Two_Level would log there. */
static void snoop(uint64_t lineno, uint64_t tick, uint64_t line, uint32_t core, const char *ev, enum chi_state st,
                  int writeback) {
  snoops++;
  int invalidating = !strcmp(ev, "SnpUnique") || !strcmp(ev, "SnpUniqueFwd") || !strcmp(ev, "SnpCleanInvalid");
  int sharing = !strcmp(ev, "SnpShared") || !strcmp(ev, "SnpSharedFwd") || !strcmp(ev, "SnpNotSharedDirty") ||
                !strcmp(ev, "SnpNotSharedDirtyFwd");
  uint16_t owner = writeback ? COHTB_L1_M_I : st == CHI_UD ? COHTB_L1_M : COHTB_L1_E;
  if (st == CHI_UD || st == CHI_UC || writeback) {
    /* The unique copy: a SnpUnique hands it to a writer (Fwd_GETX); a SnpCleanInvalid is the socket cache's
     * back-invalidation when it replaces the line (a ReadUnique that hits unique upstream snoops SnpUnique,
     * CHI-cache-actions.sm Initiate_ReadUnique_HitUpstream): a recall, the EVICT the owner did not choose. */
    if (!strcmp(ev, "SnpCleanInvalid")) { emit(lineno, tick, line, core, COHTB_EVICT, owner); recalls++; }
    else if (invalidating) emit(lineno, tick, line, core, COHTB_FWD_GETX, owner);
    else if (sharing) emit(lineno, tick, line, core, COHTB_FWD_GETS, owner);
  } else if (st == CHI_SC || st == CHI_SD) {
    /* A shared copy: an invalidation is a writer's (Inv in S); a shared snoop asks a sharer to forward clean
     * data (the home's DCT from a sharer), not a dirty owner: no MESI evidence. */
    if (invalidating) emit(lineno, tick, line, core, COHTB_INV, COHTB_L1_S);
    else if (sharing) shared_snoops++;
  } else {
    no_copy++;
  }
}

/* The snoops a cache receives from below (CHI-cache.sm's snoop events; the *Pipe and SnpResp* events are its own
 * steps and answers). */
static int is_snoop_request(const char *ev) {
  static const char *const names[] = {"SnpShared", "SnpSharedFwd", "SnpNotSharedDirty", "SnpNotSharedDirtyFwd", "SnpUnique",
                                      "SnpUniqueFwd", "SnpCleanInvalid", "SnpOnce", "SnpOnceFwd"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(ev, names[i])) return 1;
  return 0;
}

void chi_transition(uint64_t lineno, uint64_t tick, uint64_t version, const char *ev, const char *from, size_t flen,
                    const char *to, size_t tlen, uint64_t line) {
  if (version >= versions || !core_of_version[version]) { other_caches++; return; }
  uint32_t core = core_of_version[version] - 1;
  l1_transitions++;
  enum chi_state f = chi_state(from, flen), t = chi_state(to, tlen);
  int is_snoop = is_snoop_request(ev);

  int is_request = !strcmp(ev, "Load") || !strcmp(ev, "Store") || !strncmp(ev, "Atomic", 6) || !strcmp(ev, "Prefetch") ||
                   strstr(ev, "_Eviction") != NULL;
  if (is_snoop && f != CHI_BUSY && t == CHI_BUSY) { snoop(lineno, tick, line, core, ev, f, 0); return; }
  if (is_snoop && state_is(from, flen, "BUSY_INTR") && state_is(to, tlen, "BUSY_BLKD")) {
    /* A hazard: the snoop meets this core's open request. Its data state is the one the request started from,
     * unless an earlier snoop took the copy. */
    hazards++;
    uint32_t i = slot_of(core, line);
    if (!open_req[i].used) { snoop(lineno, tick, line, core, ev, CHI_I, 0); return; }
    enum chi_state st = open_req[i].invalidated ? CHI_I : (enum chi_state)open_req[i].from;
    int writeback = open_req[i].kind == OPEN_EVICTION && (st == CHI_UD || st == CHI_SD || st == CHI_UC);
    snoop(lineno, tick, line, core, ev, st, writeback);
    if (!strcmp(ev, "SnpUnique") || !strcmp(ev, "SnpUniqueFwd") || !strcmp(ev, "SnpCleanInvalid"))
      open_req[i].invalidated = 1;
    return;
  }
  if (is_snoop || (f == CHI_BUSY && is_request)) {
    stalls++;   /* held back until the line's transaction ends; logged again when taken */
    return;
  }
  if (f != CHI_BUSY && f != CHI_OTHER && t == CHI_BUSY) {
    int kind = OPEN_NONE;
    if (!strcmp(ev, "Load") || !strcmp(ev, "Prefetch")) {
      if (f == CHI_I) kind = OPEN_LOAD_MISS;
      else hits++;
    } else if (!strcmp(ev, "Store") || !strcmp(ev, "AtomicLoad") || !strcmp(ev, "AtomicStore")) {
      if (f == CHI_I) kind = OPEN_STORE_MISS;
      else if (f == CHI_SC || f == CHI_SD) kind = OPEN_UPGRADE;
      else if (f == CHI_UC) kind = OPEN_SILENT_UPGRADE;
      else hits++;
    } else if (strstr(ev, "_Eviction")) {
      kind = OPEN_EVICTION;
    }
    if (kind == OPEN_NONE) return;
    if (kind != OPEN_SILENT_UPGRADE && kind != OPEN_EVICTION) requests++;
    uint32_t i = slot_of(core, line);
    if (open_req[i].used) fail(lineno, "core %" PRIu32 " opens a second request on line %#" PRIx64 " before the first's Final",
                               core, line);
    if (open_count >= SLOTS / 2) fail(lineno, "more than %u requests in flight", SLOTS / 2);
    open_req[i].used = 1, open_req[i].core = core, open_req[i].line = line, open_req[i].kind = (uint8_t)kind;
    open_req[i].from = (uint8_t)f, open_req[i].invalidated = 0;
    open_count++;
    return;
  }
  if (!strcmp(ev, "Final")) {
    uint32_t i = slot_of(core, line);
    if (!open_req[i].used) { if (f != CHI_BUSY) unopened++; return; }   /* a hit, a snoop, or opened before the trace */
    int kind = open_req[i].kind, invalidated = open_req[i].invalidated;
    enum chi_state was = (enum chi_state)open_req[i].from;
    drop(i);
    if (kind == OPEN_LOAD_MISS) {
      /* Final in I: the load used the data but the copy is not kept (a snoop took it), as MESI's IS_I>I */
      uint16_t st = t == CHI_I ? COHTB_L1_IS_I : COHTB_L1_IS;
      emit(lineno, tick, line, core, COHTB_READ, st);
      if (t == CHI_I) emit(lineno, tick, line, core, COHTB_EVICT, st);
    } else if (kind == OPEN_EVICTION) {
      if (t != CHI_I) { odd_finals++; return; }
      if (invalidated) return;   /* a snoop already took the copy (its evidence, or a recall, was logged) */
      emit(lineno, tick, line, core, COHTB_EVICT, was == CHI_SC ? COHTB_L1_S : COHTB_L1_M_I);
    } else if (t == CHI_UD) {
      uint16_t st = kind == OPEN_SILENT_UPGRADE ? COHTB_L1_E
                  : kind == OPEN_UPGRADE && !invalidated ? COHTB_L1_SM : COHTB_L1_IM;
      emit(lineno, tick, line, core, COHTB_WRITE, st);
    } else {
      odd_finals++;   /* a store that ended without the line unique: counted, and docs/gem5.md says when */
    }
  }
}

void chi_print_counts(FILE *out) {
  fprintf(out, ", \"chi_l1_transitions\": %" PRIu64 ", \"chi_other_caches\": %" PRIu64 ", \"chi_requests\": %" PRIu64
          ", \"chi_hits\": %" PRIu64 ", \"chi_stalls\": %" PRIu64 ", \"chi_snoops\": %" PRIu64 ", \"chi_shared_snoops\": %" PRIu64
          ", \"chi_hazards\": %" PRIu64 ", \"chi_snoops_without_copy\": %" PRIu64 ", \"chi_recalls\": %" PRIu64
          ", \"chi_finals_unopened\": %" PRIu64 ", \"chi_odd_finals\": %" PRIu64 ", \"chi_open_at_end\": %" PRIu32,
          l1_transitions, other_caches, requests, hits, stalls, snoops, shared_snoops, hazards, no_copy, recalls, unopened,
          odd_finals, open_count);
}
