/* What cohtb-ingest's protocol readers share with its main loop (cohtb_ingest.c): the record writer, the error
 * exit, and the contract's L1 state names. One reader per protocol: the MESI_Two_Level rules stay in
 * cohtb_ingest.c, CHI's are in chi.c. */
#ifndef COHTB_INGEST_H
#define COHTB_INGEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void fail(uint64_t lineno, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* One event record; core is the cohtb core number (not the trace's controller version). */
void emit(uint64_t lineno, uint64_t tick, uint64_t line, uint32_t core, int kind, uint16_t l1_state);
int state_is(const char *s, size_t len, const char *a);

/* CHI (chi.c). chi_map_core: controller `version` is core `core`'s L1D (from the run's controller map);
 * versions never mapped are the L1Is, socket caches and homes, whose transitions are counted, not events. */
int chi_map_core(uint64_t version, uint32_t core);
int chi_has_map(void);
void chi_set_line_size(long line_size);
void chi_transition(uint64_t lineno, uint64_t tick, uint64_t version, const char *ev, const char *from, size_t flen,
                    const char *to, size_t tlen, uint64_t line, int resource_stall);
void chi_print_counts(FILE *out);   /* `, "chi_...": n` fields for the counts' JSON */

#endif
