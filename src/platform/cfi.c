#include "platform/cfi.h"

#if CFI_RULES

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "platform/os.h"

/* DWARF register numbers: the frame and stack pointers. */
#if defined(__x86_64__)
#define REG_FP 6
#define REG_SP 7
#else
#define REG_FP 29
#define REG_SP 31
#endif

/* Pointer encodings (DW_EH_PE_*): the value's format, then what it is
 * relative to. */
enum {
    PE_ABSPTR = 0x00, PE_ULEB128 = 0x01, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03, PE_UDATA8 = 0x04,
    PE_SLEB128 = 0x09, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b, PE_SDATA8 = 0x0c,
    PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_INDIRECT = 0x80, PE_OMIT = 0xff,
};

/* A cursor over one record of the tables; reading past its end, or
 * anything this reader does not know, marks it bad. */
struct cursor {
    const uint8_t *p, *end;
    bool bad;
};

static uint64_t fixed(struct cursor *c, unsigned bytes)
{
    if (c->bad || c->p > c->end || (size_t)(c->end - c->p) < bytes) {
        c->bad = true;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, c->p, bytes); /* little-endian, both targets */
    c->p += bytes;
    return v;
}

static uint64_t uleb(struct cursor *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; !c->bad; shift += 7) {
        uint8_t byte = (uint8_t)fixed(c, 1);
        if (shift < 64)
            v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            break;
    }
    return v;
}

static int64_t sleb(struct cursor *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t byte = 0x80;
    while (!c->bad && (byte & 0x80)) {
        byte = (uint8_t)fixed(c, 1);
        if (shift < 64)
            v |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
    }
    if (shift < 64 && (byte & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* A value in the format of the encoding's low bits, not yet relocated. */
static uint64_t value(struct cursor *c, uint8_t encoding)
{
    switch (encoding & 0x0f) {
    case PE_ABSPTR:
    case PE_UDATA8:
    case PE_SDATA8:
        return fixed(c, 8);
    case PE_ULEB128:
        return uleb(c);
    case PE_SLEB128:
        return (uint64_t)sleb(c);
    case PE_UDATA2:
        return fixed(c, 2);
    case PE_SDATA2:
        return (uint64_t)(int64_t)(int16_t)fixed(c, 2);
    case PE_UDATA4:
        return fixed(c, 4);
    case PE_SDATA4:
        return (uint64_t)(int64_t)(int32_t)fixed(c, 4);
    default:
        c->bad = true;
        return 0;
    }
}

/* An address: the value relocated as the encoding says (relative to where
 * it is stored, or to datarel: the search table's start, 0 where no base
 * is known) and loaded when indirect. */
static uintptr_t address(struct cursor *c, uint8_t encoding, uintptr_t datarel)
{
    const uint8_t *at = c->p;
    uintptr_t v = (uintptr_t)value(c, encoding);
    switch (encoding & 0x70) {
    case 0:
        break;
    case PE_PCREL:
        v += (uintptr_t)at;
        break;
    case PE_DATAREL:
        c->bad |= !datarel;
        v += datarel;
        break;
    default:
        c->bad = true;
    }
    if ((encoding & PE_INDIRECT) && !c->bad)
        memcpy(&v, (const void *)v, sizeof v);
    return c->bad ? 0 : v;
}

/* The search table of .eh_frame_hdr: the FDE whose range starts at or
 * below pc, the last such. NULL when pc lies before the first, or the
 * table is not the sorted one of 32-bit offsets every linker writes. */
static const uint8_t *search(const uint8_t *hdr, uintptr_t pc)
{
    if (hdr[0] != 1 || hdr[3] != (PE_DATAREL | PE_SDATA4))
        return NULL;
    struct cursor c = {hdr + 4, hdr + 4 + 2 * 8, false};
    address(&c, hdr[1], (uintptr_t)hdr); /* .eh_frame's start: not needed */
    uint64_t count = address(&c, hdr[2], (uintptr_t)hdr);
    if (c.bad || hdr[2] == PE_OMIT || !count)
        return NULL;
    const int32_t *table = (const int32_t *)(const void *)c.p; /* {start, fde} pairs */
    intptr_t target = (intptr_t)(pc - (uintptr_t)hdr);
    if (target < table[0])
        return NULL;
    size_t low = 0, high = count; /* table[2 * low] <= target < table[2 * high] */
    while (high - low > 1) {
        size_t mid = low + (high - low) / 2;
        if (table[2 * mid] <= target)
            low = mid;
        else
            high = mid;
    }
    return hdr + table[2 * low + 1];
}

/* The CIE's fields an FDE's instructions are read with. */
struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_encoding;
    bool augmented;
    struct cursor instructions;
};

/* A record's extent (after its 32-bit length; 64-bit lengths, which no
 * linker writes into .eh_frame and libgcc does not read either, are not
 * taken). */
static bool record(const uint8_t *at, struct cursor *c)
{
    uint32_t length;
    memcpy(&length, at, sizeof length);
    if (length == 0 || length == 0xffffffffu)
        return false;
    *c = (struct cursor){at + 4, at + 4 + length, false};
    return true;
}

static bool read_cie(const uint8_t *at, struct cie *cie)
{
    struct cursor c;
    if (!record(at, &c) || fixed(&c, 4) != 0)
        return false;
    uint8_t version = (uint8_t)fixed(&c, 1);
    const char *augmentation = (const char *)c.p;
    size_t length = strnlen(augmentation, (size_t)(c.end - c.p));
    c.p += length + 1;
    cie->code_align = uleb(&c);
    cie->data_align = sleb(&c);
    cie->ra_reg = version == 1 ? fixed(&c, 1) : uleb(&c);
    cie->fde_encoding = PE_ABSPTR;
    cie->augmented = augmentation[0] == 'z';
    if (cie->augmented) {
        uint64_t data = uleb(&c);
        const uint8_t *after = c.p + data;
        for (const char *a = augmentation + 1; *a && !c.bad; a++) {
            if (*a == 'R') {
                cie->fde_encoding = (uint8_t)fixed(&c, 1);
            } else if (*a == 'P') {
                uint8_t encoding = (uint8_t)fixed(&c, 1);
                value(&c, encoding); /* the personality routine: skipped */
            } else if (*a == 'L') {
                fixed(&c, 1);
            } else {
                return false; /* 'S' (a signal frame) and anything newer */
            }
        }
        if (c.bad || after > c.end)
            return false;
        c.p = after;
    } else if (augmentation[0]) {
        return false;
    }
    cie->instructions = c;
    return !c.bad;
}

/* A register's rule while the instructions run. */
struct column {
    uint8_t how; /* enum cfi_saved, or RA_UNDEFINED */
    int64_t offset;
};
#define RA_UNDEFINED 3

struct row {
    uint64_t cfa_reg; /* REG_SP, REG_FP, or anything else: not followed */
    int64_t cfa_offset;
    struct column fp, ra;
    bool ra_signed; /* 64-bit Arm's pointer authentication */
};

#define REMEMBERED 4

struct program {
    const struct cie *cie;
    const struct row *initial; /* the CIE's row, for DW_CFA_restore */
    uintptr_t location, target;
    struct row remembered[REMEMBERED];
    unsigned depth;
};

static struct column *column_of(struct row *row, const struct cie *cie, uint64_t reg)
{
    return reg == REG_FP ? &row->fp : reg == cie->ra_reg ? &row->ra : NULL;
}

static void set(struct row *row, const struct cie *cie, uint64_t reg, uint8_t how, int64_t offset)
{
    struct column *column = column_of(row, cie, reg);
    if (column)
        *column = (struct column){how, offset};
}

static void restore(struct row *row, const struct program *pr, uint64_t reg)
{
    struct column *column = column_of(row, pr->cie, reg);
    if (column)
        *column = *column_of((struct row *)pr->initial, pr->cie, reg);
}

/* Runs the call-frame instructions at c while the location they describe
 * is at or below the target. False on what this reader does not know. */
static bool run(struct cursor *c, struct row *row, struct program *pr)
{
    const struct cie *cie = pr->cie;
    while (c->p < c->end && !c->bad) {
        uint8_t op = (uint8_t)fixed(c, 1);
        uint64_t reg, advance = 0;
        if (op >> 6 == 1) { /* DW_CFA_advance_loc */
            advance = op & 0x3f;
        } else if (op >> 6 == 2) { /* DW_CFA_offset */
            set(row, cie, op & 0x3f, CFI_AT, (int64_t)uleb(c) * cie->data_align);
        } else if (op >> 6 == 3) { /* DW_CFA_restore */
            restore(row, pr, op & 0x3f);
        } else switch (op) {
        case 0x00: /* DW_CFA_nop */
            break;
        case 0x01: /* DW_CFA_set_loc */
            advance = address(c, cie->fde_encoding, 0) - pr->location;
            break;
        case 0x02:
            advance = fixed(c, 1);
            break;
        case 0x03:
            advance = fixed(c, 2);
            break;
        case 0x04:
            advance = fixed(c, 4);
            break;
        case 0x05: /* DW_CFA_offset_extended */
            reg = uleb(c);
            set(row, cie, reg, CFI_AT, (int64_t)uleb(c) * cie->data_align);
            break;
        case 0x06: /* DW_CFA_restore_extended */
            restore(row, pr, uleb(c));
            break;
        case 0x07: /* DW_CFA_undefined */
            set(row, cie, uleb(c), RA_UNDEFINED, 0);
            break;
        case 0x08: /* DW_CFA_same_value */
            set(row, cie, uleb(c), CFI_SAME, 0);
            break;
        case 0x09: /* DW_CFA_register */
            reg = uleb(c);
            uleb(c);
            set(row, cie, reg, CFI_LOST, 0);
            break;
        case 0x0a: /* DW_CFA_remember_state */
            if (pr->depth == REMEMBERED)
                return false;
            pr->remembered[pr->depth++] = *row;
            break;
        case 0x0b: /* DW_CFA_restore_state */
            if (pr->depth == 0)
                return false;
            *row = pr->remembered[--pr->depth];
            break;
        case 0x0c: /* DW_CFA_def_cfa */
            row->cfa_reg = uleb(c);
            row->cfa_offset = (int64_t)uleb(c);
            break;
        case 0x0d: /* DW_CFA_def_cfa_register */
            row->cfa_reg = uleb(c);
            break;
        case 0x0e: /* DW_CFA_def_cfa_offset */
            row->cfa_offset = (int64_t)uleb(c);
            break;
        case 0x0f: /* DW_CFA_def_cfa_expression */
            row->cfa_reg = UINT64_MAX;
            c->p += uleb(c);
            break;
        case 0x10: /* DW_CFA_expression */
        case 0x16: /* DW_CFA_val_expression */
            reg = uleb(c);
            set(row, cie, reg, CFI_LOST, 0);
            c->p += uleb(c);
            break;
        case 0x11: /* DW_CFA_offset_extended_sf */
            reg = uleb(c);
            set(row, cie, reg, CFI_AT, sleb(c) * cie->data_align);
            break;
        case 0x12: /* DW_CFA_def_cfa_sf */
            row->cfa_reg = uleb(c);
            row->cfa_offset = sleb(c) * cie->data_align;
            break;
        case 0x13: /* DW_CFA_def_cfa_offset_sf */
            row->cfa_offset = sleb(c) * cie->data_align;
            break;
        case 0x14: /* DW_CFA_val_offset */
        case 0x15: /* DW_CFA_val_offset_sf */
            reg = uleb(c);
            op == 0x14 ? (void)uleb(c) : (void)sleb(c);
            set(row, cie, reg, CFI_LOST, 0);
            break;
        case 0x2e: /* DW_CFA_GNU_args_size */
            uleb(c);
            break;
        case 0x2f: /* DW_CFA_GNU_negative_offset_extended */
            reg = uleb(c);
            set(row, cie, reg, CFI_AT, -(int64_t)uleb(c) * cie->data_align);
            break;
#if defined(__aarch64__)
        case 0x2d: /* DW_CFA_AARCH64_negate_ra_state */
            row->ra_signed = !row->ra_signed;
            break;
#endif
        default:
            return false;
        }
        if (advance) {
            pr->location += advance * cie->code_align;
            if (pr->location > pr->target)
                return !c->bad;
        }
    }
    return !c->bad && c->p <= c->end;
}

/* The rule at pc from the object's tables (hdr: its .eh_frame_hdr). */
static void rule_from_tables(const uint8_t *hdr, uintptr_t pc, struct cfi_rule *rule)
{
    *rule = (struct cfi_rule){.kind = CFI_UNKNOWN};
    const uint8_t *fde = search(hdr, pc);
    if (!fde) {
        rule->kind = CFI_OUTERMOST;
        return;
    }
    struct cursor c;
    struct cie cie;
    if (!record(fde, &c))
        return;
    const uint8_t *pointer_field = c.p;
    uint32_t cie_pointer = (uint32_t)fixed(&c, 4);
    if (!cie_pointer || !read_cie(pointer_field - cie_pointer, &cie))
        return;
    uintptr_t start = address(&c, cie.fde_encoding, 0);
    uintptr_t range = (uintptr_t)value(&c, cie.fde_encoding);
    if (c.bad)
        return;
    if (pc - start >= range) { /* between functions: code no table covers */
        rule->kind = CFI_OUTERMOST;
        return;
    }
    if (cie.augmented)
        c.p += uleb(&c);
    struct row initial = {.cfa_reg = UINT64_MAX, .fp = {CFI_SAME, 0}, .ra = {CFI_SAME, 0}};
    struct program pr = {.cie = &cie, .initial = &initial, .location = start, .target = pc};
    if (!run(&cie.instructions, &initial, &pr))
        return;
    struct row row = initial;
    pr.depth = 0;
    if (!run(&c, &row, &pr))
        return;
    if (row.ra.how == RA_UNDEFINED) {
        rule->kind = CFI_OUTERMOST;
        return;
    }
    if ((row.cfa_reg != REG_SP && row.cfa_reg != REG_FP) || row.ra.how != CFI_AT || row.ra_signed ||
        row.cfa_offset != (int32_t)row.cfa_offset || row.ra.offset != (int16_t)row.ra.offset ||
        row.fp.offset != (int16_t)row.fp.offset)
        return;
    *rule = (struct cfi_rule){
        .cfa_offset = (int32_t)row.cfa_offset,
        .ra_offset = (int16_t)row.ra.offset,
        .fp_offset = (int16_t)row.fp.offset,
        .kind = CFI_FRAME,
        .cfa_base = row.cfa_reg == REG_SP ? CFI_BASE_SP : CFI_BASE_FP,
        .fp = row.fp.how == RA_UNDEFINED ? CFI_LOST : row.fp.how,
    };
}

/* The cache: open addressing, entries written once and never changed, so
 * a reader that sees an entry's address (acquire) sees the rest. A slot is
 * claimed by swapping its key from EMPTY to CLAIMED; the key goes in last.
 * A full neighbourhood leaves the rule uncached. */
#define SLOTS 8192
#define PROBES 8
#define EMPTY 0
#define CLAIMED 1

struct slot {
    uintptr_t pc;
    const void *tables; /* the object's .eh_frame_hdr */
    struct cfi_rule rule;
};

static struct slot *slots;

void cfi_init(void)
{
    if (!__atomic_load_n(&slots, __ATOMIC_ACQUIRE)) {
        struct slot *mapped = os_map(SLOTS * sizeof *mapped, 0);
        struct slot *none = NULL;
        if (mapped && !__atomic_compare_exchange_n(&slots, &none, mapped, false, __ATOMIC_RELEASE,
                                                   __ATOMIC_RELAXED))
            os_unmap(mapped, SLOTS * sizeof *mapped);
    }
}

static size_t home_of(uintptr_t pc)
{
    uint64_t h = pc * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 32) & (SLOTS - 1);
}

void cfi_rule_at(uintptr_t pc, struct cfi_rule *rule)
{
    /* Code no object holds (a JIT's, an emulator's signal trampoline) is
     * left to backtrace(), which knows the trampolines by their code; an
     * object's code that no table covers ends the walk, as it ends
     * backtrace()'s. */
    struct dl_find_object object;
    if (_dl_find_object((void *)pc, &object) != 0) {
        *rule = (struct cfi_rule){.kind = CFI_UNKNOWN};
        return;
    }
    if (!object.dlfo_eh_frame) {
        *rule = (struct cfi_rule){.kind = CFI_OUTERMOST};
        return;
    }
    const void *tables = object.dlfo_eh_frame;
    struct slot *table = __atomic_load_n(&slots, __ATOMIC_ACQUIRE);
    size_t home = home_of(pc);
    for (unsigned i = 0; table && i < PROBES; i++) {
        struct slot *s = &table[(home + i) & (SLOTS - 1)];
        uintptr_t key = __atomic_load_n(&s->pc, __ATOMIC_ACQUIRE);
        if (key == pc && s->tables == tables) {
            *rule = s->rule;
            return;
        }
        if (key == EMPTY)
            break;
    }
    rule_from_tables(tables, pc, rule);
    for (unsigned i = 0; table && i < PROBES; i++) {
        struct slot *s = &table[(home + i) & (SLOTS - 1)];
        uintptr_t empty = EMPTY;
        if (__atomic_compare_exchange_n(&s->pc, &empty, CLAIMED, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
            s->tables = tables;
            s->rule = *rule;
            __atomic_store_n(&s->pc, pc, __ATOMIC_RELEASE);
            return;
        }
    }
}

#endif
