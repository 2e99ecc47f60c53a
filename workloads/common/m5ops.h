/* gem5's m5 pseudo-instructions, x86 encoding 0F 04 <func16> (gem5 util/m5/src/abi/x86/m5op.S, function
 * numbers from include/gem5/asm/generic/m5ops.h); arguments in rdi, rsi, rdx, result in rax. They raise #UD
 * on real hardware, so callers run them only when asked (--m5, or the guest's /init under gem5). In full
 * system they need no /dev/mem: gem5 decodes the instruction itself (what `m5 --inst` does). */
#ifndef COHTB_M5OPS_H
#define COHTB_M5OPS_H

#include <stdint.h>

#define M5OP(func, a, b, c)                                                                         \
  ({ uint64_t r_;                                                                                   \
     __asm__ __volatile__(".byte 0x0F, 0x04\n\t.word " #func : "=a"(r_) : "D"((uint64_t)(a)),         \
                          "S"((uint64_t)(b)), "d"((uint64_t)(c)) : "memory");                         \
     r_; })

static inline void m5_exit(uint64_t delay_ns) { (void)M5OP(0x21, delay_ns, 0, 0); }
static inline void m5_checkpoint(uint64_t delay_ns, uint64_t period_ns) { (void)M5OP(0x43, delay_ns, period_ns, 0); }
#define M5OP4(func, a, b, c, d)                                                                    \
  ({ uint64_t r_;                                                                                   \
     __asm__ __volatile__(".byte 0x0F, 0x04\n\t.word " #func : "=a"(r_) : "D"((uint64_t)(a)),         \
                          "S"((uint64_t)(b)), "d"((uint64_t)(c)), "c"((uint64_t)(d)) : "memory");     \
     r_; })

/* Reads up to len bytes of the host file gem5 was given as the system's readfile, from offset. */
static inline uint64_t m5_read_file(void *buf, uint64_t len, uint64_t offset) { return M5OP(0x50, buf, len, offset); }
/* Writes len bytes to the file `name` in gem5's output directory, at offset. */
static inline uint64_t m5_write_file(const void *buf, uint64_t len, uint64_t offset, const char *name) {
  return M5OP4(0x4F, buf, len, offset, name);
}
/* Asks the simulation to switch CPU models (gem5's switchcpu exit: cohtb_fs.py hands the machine from its
 * atomic CPUs, fast and cacheless, to its timing CPUs and Ruby). */
static inline void m5_switch_cpu(void) { (void)M5OP(0x52, 0, 0, 0); }
static inline void m5_work_begin(uint64_t id, uint64_t thread) { (void)M5OP(0x5a, id, thread, 0); }
static inline void m5_work_end(uint64_t id, uint64_t thread) { (void)M5OP(0x5b, id, thread, 0); }

#endif
