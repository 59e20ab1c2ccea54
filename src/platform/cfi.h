/* How to find a frame's caller, from the DWARF call-frame information
 * every object carries in its .eh_frame (what glibc's backtrace() reads
 * through libgcc): the rule for one code address, reduced to what a walk
 * of return addresses needs (where the canonical frame address is, where
 * the return address and the frame pointer were saved), found once per
 * address through the object's .eh_frame_hdr search table and cached. The
 * object of an address is asked of the C library (_dl_find_object) on
 * every look-up, so a cached rule never outlives its object. x86-64 and
 * 64-bit Arm; elsewhere CFI_RULES is 0 and stacks come from backtrace(). */
#ifndef COREALLOC_CFI_H
#define COREALLOC_CFI_H

#include <stdint.h>

#if defined(__x86_64__) || defined(__aarch64__)
#define CFI_RULES 1
#else
#define CFI_RULES 0
#endif

enum cfi_kind {
    CFI_FRAME,     /* the caller is found by the rule below */
    CFI_OUTERMOST, /* no caller: the return address is undefined (a thread's
                    * first frame) or no table of the object covers the
                    * address */
    CFI_UNKNOWN,   /* a rule this walk does not follow: a signal frame, a
                    * frame address computed by a DWARF expression, a
                    * register other than the stack or frame pointer, code
                    * outside every object */
};

/* Which register the canonical frame address (the stack pointer before
 * the call: the caller's stack pointer) is an offset from. */
enum cfi_base { CFI_BASE_SP, CFI_BASE_FP };

/* What became of the caller's frame pointer. */
enum cfi_saved {
    CFI_SAME,  /* still in the register */
    CFI_AT,    /* saved at the frame address plus fp_offset */
    CFI_LOST,  /* anywhere else: unknown from this frame out */
};

struct cfi_rule {
    int32_t cfa_offset;
    int16_t ra_offset, fp_offset; /* from the frame address */
    uint8_t kind, cfa_base, fp;
};

/* Maps the cache (start-up, outside malloc). Without it rules are still
 * found, each time. */
void cfi_init(void);
/* The rule of the frame executing at pc: for a caller, its return address
 * minus 1 (the call, not what follows it). */
void cfi_rule_at(uintptr_t pc, struct cfi_rule *rule);

#endif
