/* The CHI reader of cohtb-ingest: a core's L1D transitions in gem5's CHI ProtocolTrace -> completion-time
 * events with the same meaning as MESI_Two_Level's (docs/gem5.md, "CHI (the socket machine): which transitions are
 * events").
 *
 * CHI names every controller `Cache` and logs a transaction, not a transition: the request opens it from a
 * stable state (`Store SC>BUSY_BLKD`), its steps follow in BUSY_BLKD/BUSY_INTR, and `Final BUSY_x>S` closes it in
 * the stable state S (CHI-cache-transitions.sm, "Finalization transition"). gem5 answers the core before that
 * (Callback_Miss: the line's data whole, or CheckUpgrade_FromStore for an upgrade that kept its copy); that answer
 * is the event. A snoop that meets a transaction waiting in BUSY_INTR is a hazard (`SnpUnique BUSY_INTR>BUSY_BLKD`),
 * closed by RestoreFromHazard, and the transaction goes on. So per (core, line) this reader keeps the open
 * transaction and the line's data state of the moment; snoops are evidence at arrival, as MESI_Two_Level's
 * Fwd_GETS/Fwd_GETX/Inv are. A snoop or request logged BUSY_BLKD>BUSY_BLKD, or a "Resource Stall" line, is a stall
 * (retried later), not a transition.
 *
 * States map to the contract's MESI names: SC -> S, UC -> E, UD -> M; SD (dirty, shared: this L1 answers for the
 * line's data after a dirty read) -> S, since the monitor's line is shared then. The l1_state of an event is the
 * MESI state of the same moment: a READ's is IS (IS_I when a snoop took the copy before the data came), a WRITE's
 * IM (a miss, or an upgrade whose copy a snoop took), SM (an upgrade) or E (the silent UC->UD, or the first store
 * into a line a read brought UD), an EVICT's S (SC), M_I (a writeback), E or M (a recall). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cohtb_contract.h"
#include "ingest.h"

enum chi_state { CHI_OTHER, CHI_I, CHI_SC, CHI_UC, CHI_SD, CHI_UD, CHI_BUSY };
/* What a core's open transaction on a line is: a request that can become an event, a hit, an eviction, a snoop. */
enum open_kind { OPEN_HIT, OPEN_LOAD_MISS, OPEN_STORE_MISS, OPEN_UPGRADE, OPEN_SILENT_UPGRADE, OPEN_EVICTION, OPEN_SNOOP };

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

/* A line's data comes in line_size / 32 messages: the stdlib CHI nodes' 32-byte data channel
 * (AbstractNode.data_channel_size; socket_chi.py's DATA_MESSAGE_BYTES sizes the network's to match). */
#define DATA_CHANNEL_BYTES 32
static unsigned data_messages = 2;
void chi_set_line_size(long line_size) { data_messages = line_size > DATA_CHANNEL_BYTES ? (unsigned)(line_size / DATA_CHANNEL_BYTES) : 1; }

/* Tables by (core, line), open addressing with backward-shift deletion: an entry's first member is its key. */
struct key { uint64_t line; uint32_t core; uint8_t used; };

static uint32_t probe(void *table, size_t stride, uint32_t mask, uint32_t core, uint64_t line) {
  uint64_t h = (line * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)core * 0xC2B2AE3D27D4EB4Full);
  uint32_t i = (uint32_t)(h >> 40) & mask;
  for (struct key *k; (k = (struct key *)((char *)table + i * stride))->used && !(k->core == core && k->line == line);)
    i = (i + 1) & mask;
  return i;
}

static void remove_at(void *table, size_t stride, uint32_t mask, uint32_t i) {
  ((struct key *)((char *)table + i * stride))->used = 0;
  for (uint32_t j = (i + 1) & mask;; j = (j + 1) & mask) {
    struct key *k = (struct key *)((char *)table + j * stride);
    if (!k->used) break;
    uint32_t home = probe(table, stride, mask, k->core, k->line);   /* re-place entries after the hole */
    if (home != j) { memcpy((char *)table + home * stride, k, stride); k->used = 0; }
  }
}

/* Open requests: a request is in flight for hundreds of ns, so the table stays small. */
#define SLOTS (1u << 16)
/* cur: the line's data state at the core now (the request's start, I once a snoop took the copy, the data's state
 * once it arrived); served: gem5 has answered the core (its READ or WRITE is out); after: a snoop gave evidence
 * after that; evicted: an EVICT is out (a recall, or a copy taken before the data came). */
static struct { struct key k; uint8_t kind, from, cur, invalidated, served, after, evicted, chunks; } open_req[SLOTS];
static uint32_t open_count;

static uint32_t slot_of(uint32_t core, uint64_t line) { return probe(open_req, sizeof open_req[0], SLOTS - 1, core, line); }

static void drop(uint32_t i) {
  remove_at(open_req, sizeof open_req[0], SLOTS - 1, i);
  open_count--;
}

/* The lines a core holds UD because a read brought them so (a socket cache may hand a written-back line up unique
 * and dirty), not yet stored into: its first store is a hit that CHI logs as no request, yet it is the core's
 * write, as the silent UC -> UD is. One per line a core holds: at most every L1's lines. */
#define HELD_SLOTS (1u << 20)
static struct key read_ud[HELD_SLOTS];
static uint32_t read_ud_count;

static void read_ud_add(uint64_t lineno, uint32_t core, uint64_t line) {
  uint32_t i = probe(read_ud, sizeof read_ud[0], HELD_SLOTS - 1, core, line);
  if (read_ud[i].used) return;
  if (read_ud_count >= HELD_SLOTS / 2) fail(lineno, "more than %u lines held unique and dirty from a read", HELD_SLOTS / 2);
  read_ud[i] = (struct key){line, core, 1};
  read_ud_count++;
}

/* 1 if the core held the line UD from a read (and forgets it). */
static int read_ud_take(uint32_t core, uint64_t line) {
  uint32_t i = probe(read_ud, sizeof read_ud[0], HELD_SLOTS - 1, core, line);
  if (!read_ud[i].used) return 0;
  remove_at(read_ud, sizeof read_ud[0], HELD_SLOTS - 1, i);
  read_ud_count--;
  return 1;
}

static uint64_t l1_transitions, other_caches, requests, hits, stalls, snoops, shared_snoops, hazards, no_copy,
    recalls, unopened, read_ud_stores;

static int is_invalidating(const char *ev) {
  return !strcmp(ev, "SnpUnique") || !strcmp(ev, "SnpUniqueFwd") || !strcmp(ev, "SnpCleanInvalid");
}

/* A snoop at core's L1 whose data state is `st` (a writeback in flight: its M_I): the evidence MESI_Two_Level would
 * log there. Returns 1 when it logged an EVICT (a recall). */
static int snoop(uint64_t lineno, uint64_t tick, uint64_t line, uint32_t core, const char *ev, enum chi_state st,
                 int writeback) {
  snoops++;
  int sharing = !strcmp(ev, "SnpShared") || !strcmp(ev, "SnpSharedFwd") || !strcmp(ev, "SnpNotSharedDirtyFwd");
  uint16_t owner = writeback ? COHTB_L1_M_I : st == CHI_UD ? COHTB_L1_M : COHTB_L1_E;
  if (st == CHI_UD || st == CHI_UC || writeback) {
    /* The unique copy: a SnpUnique hands it to a writer (Fwd_GETX); a SnpCleanInvalid is the socket cache's
     * back-invalidation when it replaces the line (a ReadUnique that hits unique upstream snoops SnpUnique,
     * CHI-cache-actions.sm Initiate_ReadUnique_HitUpstream): a recall, the EVICT the owner did not choose. */
    if (!strcmp(ev, "SnpCleanInvalid")) { emit(lineno, tick, line, core, COHTB_EVICT, owner); recalls++; return 1; }
    if (is_invalidating(ev)) emit(lineno, tick, line, core, COHTB_FWD_GETX, owner);
    else if (sharing) emit(lineno, tick, line, core, COHTB_FWD_GETS, owner);
  } else if (st == CHI_SC || st == CHI_SD) {
    /* A shared copy: an invalidation is a writer's (Inv in S). A shared snoop at SD is the socket cache reading
     * the copy a dirty read left here: no dirty owner for the monitor (rule R left the line shared). */
    if (is_invalidating(ev)) emit(lineno, tick, line, core, COHTB_INV, COHTB_L1_S);
    else if (sharing) shared_snoops++;
  } else {
    no_copy++;
  }
  return 0;
}

/* The snoops a cache receives from below (CHI-cache.sm's snoop events; the *Pipe and SnpResp* events are its own
 * steps and answers). */
static int is_snoop_request(const char *ev) {
  static const char *const names[] = {"SnpShared", "SnpSharedFwd", "SnpNotSharedDirtyFwd", "SnpUnique", "SnpUniqueFwd",
                                      "SnpCleanInvalid", "SnpOnce", "SnpOnceFwd"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(ev, names[i])) return 1;
  return 0;
}

/* The data state a data response gives its requester (CHI-cache.sm's CompData_* and DataSepResp_UC events). */
static enum chi_state data_state(const char *ev) {
  if (!strcmp(ev, "CompData_SC")) return CHI_SC;
  if (!strcmp(ev, "CompData_UC") || !strcmp(ev, "DataSepResp_UC")) return CHI_UC;
  if (!strcmp(ev, "CompData_SD_PD")) return CHI_SD;
  if (!strcmp(ev, "CompData_UD_PD")) return CHI_UD;
  if (!strcmp(ev, "CompData_I")) return CHI_I;
  return CHI_OTHER;
}

/* gem5 answers the core (Callback_Miss, CHI-cache-transitions.sm) when the data arrives, or, for an upgrade that
 * kept its copy, at CheckUpgrade_FromStore; the line stays busy after it (the fill, a victim's eviction), and
 * snoops may be served meanwhile. That answer is the event. */
static void serve(uint64_t lineno, uint64_t tick, uint64_t line, uint32_t core, uint32_t i, enum chi_state got) {
  if (open_req[i].kind == OPEN_LOAD_MISS) {
    if (open_req[i].invalidated || got == CHI_I) {   /* used, not kept: a snoop took the copy first (MESI's IS_I) */
      emit(lineno, tick, line, core, COHTB_READ, COHTB_L1_IS_I);
      emit(lineno, tick, line, core, COHTB_EVICT, COHTB_L1_IS_I);
      open_req[i].evicted = 1, open_req[i].cur = CHI_I;
    } else {
      emit(lineno, tick, line, core, COHTB_READ, COHTB_L1_IS);
      open_req[i].cur = (uint8_t)got;
      if (got == CHI_UD) read_ud_add(lineno, core, line);
    }
  } else {
    int kept_copy = open_req[i].kind == OPEN_UPGRADE && !open_req[i].invalidated;
    emit(lineno, tick, line, core, COHTB_WRITE, kept_copy ? COHTB_L1_SM : COHTB_L1_IM);
    open_req[i].cur = CHI_UD;
  }
  open_req[i].served = 1;
}

void chi_transition(uint64_t lineno, uint64_t tick, uint64_t version, const char *ev, const char *from, size_t flen,
                    const char *to, size_t tlen, uint64_t line, int resource_stall) {
  if (version >= versions || !core_of_version[version]) { other_caches++; return; }
  uint32_t core = core_of_version[version] - 1;
  l1_transitions++;
  enum chi_state f = chi_state(from, flen), t = chi_state(to, tlen);
  if (f == CHI_OTHER || t == CHI_OTHER)
    fail(lineno, "L1D state '%.*s' is not one an L1 takes (I SC UC SD UD UD_T BUSY_BLKD BUSY_INTR)",
         (int)(f == CHI_OTHER ? flen : tlen), f == CHI_OTHER ? from : to);
  if (resource_stall) { stalls++; return; }   /* logged with the state it would take, then retried */
  int is_snoop = is_snoop_request(ev);
  int is_request = !strcmp(ev, "Load") || !strcmp(ev, "Store") || !strcmp(ev, "AtomicLoad") ||
                   !strcmp(ev, "AtomicStore") || !strcmp(ev, "Prefetch") || !strcmp(ev, "Local_Eviction") ||
                   !strcmp(ev, "Global_Eviction") || !strcmp(ev, "LocalHN_Eviction");
  uint32_t i = slot_of(core, line);

  int opens = f != CHI_BUSY && t == CHI_BUSY;   /* a transaction starts (a snoop's too, which its Final ends) */
  if (opens && open_req[i].k.used)
    fail(lineno, "core %" PRIu32 " opens a second transaction on line %#" PRIx64 " before the first's Final", core, line);
  if (opens && open_count >= SLOTS / 2) fail(lineno, "more than %u transactions in flight", SLOTS / 2);
  if (opens) {
    open_req[i].k = (struct key){line, core, 1}, open_req[i].kind = OPEN_SNOOP;
    open_req[i].from = open_req[i].cur = (uint8_t)f;
    open_req[i].invalidated = open_req[i].served = open_req[i].after = open_req[i].evicted = open_req[i].chunks = 0;
    open_count++;
  }
  if (is_snoop && opens) { snoop(lineno, tick, line, core, ev, f, 0); return; }
  if (is_snoop && state_is(from, flen, "BUSY_INTR") && state_is(to, tlen, "BUSY_BLKD")) {
    /* A hazard: the snoop meets this core's open transaction, in the line's data state of the moment. */
    hazards++;
    if (!open_req[i].k.used) { unopened++; snoop(lineno, tick, line, core, ev, CHI_I, 0); return; }
    enum chi_state st = (enum chi_state)open_req[i].cur;
    int writeback = open_req[i].kind == OPEN_EVICTION && (st == CHI_UD || st == CHI_SD || st == CHI_UC);
    if (snoop(lineno, tick, line, core, ev, st, writeback)) open_req[i].evicted = 1;
    if (open_req[i].served && st != CHI_I) open_req[i].after = 1;
    if (is_invalidating(ev)) open_req[i].invalidated = 1, open_req[i].cur = CHI_I;
    return;
  }
  if (is_snoop || (f == CHI_BUSY && is_request)) {
    stalls++;   /* held back until the line's transaction ends; logged again when taken */
    return;
  }
  if (opens) {
    int kind = OPEN_HIT;
    if (!strcmp(ev, "Load") || !strcmp(ev, "Prefetch")) {
      if (f == CHI_I) kind = OPEN_LOAD_MISS;
    } else if (!strcmp(ev, "Store") || !strcmp(ev, "AtomicLoad") || !strcmp(ev, "AtomicStore")) {
      if (f == CHI_I) kind = OPEN_STORE_MISS;
      else if (f == CHI_SC || f == CHI_SD) kind = OPEN_UPGRADE;
      else if (f == CHI_UC) kind = OPEN_SILENT_UPGRADE;
      else if (f == CHI_UD && read_ud_take(core, line)) kind = OPEN_SILENT_UPGRADE, read_ud_stores++;
    } else if (strstr(ev, "_Eviction")) {
      kind = OPEN_EVICTION;
    }
    if (kind == OPEN_LOAD_MISS || kind == OPEN_STORE_MISS || kind == OPEN_UPGRADE) requests++;
    else if (kind == OPEN_HIT) hits++;
    open_req[i].kind = (uint8_t)kind;
    if (kind == OPEN_SILENT_UPGRADE) {   /* UC (or a read's UD) -> UD without a message: done at once (StoreHit) */
      emit(lineno, tick, line, core, COHTB_WRITE, COHTB_L1_E);
      open_req[i].served = 1, open_req[i].cur = CHI_UD;
    }
    return;
  }
  if (!open_req[i].k.used) {
    if (!strcmp(ev, "Final")) unopened++;   /* opened before the trace began */
    return;
  }
  int kind = open_req[i].kind;
  int waiting = !open_req[i].served && (kind == OPEN_LOAD_MISS || kind == OPEN_STORE_MISS || kind == OPEN_UPGRADE);
  enum chi_state got = data_state(ev);
  if (waiting && got != CHI_OTHER) {   /* gem5 answers the core once the line's data is whole */
    if (++open_req[i].chunks >= data_messages) serve(lineno, tick, line, core, i, got);
    return;
  }
  if (waiting && kind == OPEN_UPGRADE && !open_req[i].invalidated && !strcmp(ev, "CheckUpgrade_FromStore")) {
    serve(lineno, tick, line, core, i, CHI_UD);
    return;
  }
  if (strcmp(ev, "Final") != 0) return;   /* one of the transaction's own steps */
  int served = open_req[i].served, after = open_req[i].after, evicted = open_req[i].evicted;
  enum chi_state was = (enum chi_state)open_req[i].from;
  drop(i);
  if (t != CHI_UD) read_ud_take(core, line);   /* the copy gone or shared: a store from here on is a request */
  if (kind == OPEN_EVICTION) {
    if (t != CHI_I) fail(lineno, "core %" PRIu32 "'s eviction of line %#" PRIx64 " closed in %.*s, not I", core, line, (int)tlen, to);
    if (!evicted) emit(lineno, tick, line, core, COHTB_EVICT, was == CHI_SC ? COHTB_L1_S : COHTB_L1_M_I);
  } else if (kind == OPEN_LOAD_MISS || kind == OPEN_STORE_MISS || kind == OPEN_UPGRADE) {
    if (!served) fail(lineno, "core %" PRIu32 "'s miss on line %#" PRIx64 " closed without gem5 answering the core", core, line);
    if (kind == OPEN_LOAD_MISS && t == CHI_I && !evicted && !after)
      emit(lineno, tick, line, core, COHTB_EVICT, COHTB_L1_IS_I);   /* the data used, the copy not kept */
  }
}

void chi_print_counts(FILE *out) {
  fprintf(out, ", \"chi_l1_transitions\": %" PRIu64 ", \"chi_other_caches\": %" PRIu64 ", \"chi_requests\": %" PRIu64
          ", \"chi_hits\": %" PRIu64 ", \"chi_stalls\": %" PRIu64 ", \"chi_snoops\": %" PRIu64 ", \"chi_shared_snoops\": %" PRIu64
          ", \"chi_hazards\": %" PRIu64 ", \"chi_snoops_without_copy\": %" PRIu64 ", \"chi_recalls\": %" PRIu64
          ", \"chi_finals_unopened\": %" PRIu64 ", \"chi_stores_after_read_ud\": %" PRIu64 ", \"chi_open_at_end\": %" PRIu32,
          l1_transitions, other_caches, requests, hits, stalls, snoops, shared_snoops, hazards, no_copy, recalls, unopened,
          read_ud_stores, open_count);
}
