#include "api/profile_sampler.h"

#include <stdint.h>
#include <string.h>

#include "platform/os.h"

#define LN2 0.69314718055994530942

static size_t rate = 512 << 10;
__thread uint64_t sampler_bytes_left;
static __thread uint64_t seed; /* 0 before the thread's first draw */

void sampler_set_rate(size_t bytes) { rate = bytes ? bytes : 1; }

/* xorshift64*: a sampler needs no better randomness than this. */
static uint64_t next_random(void)
{
    seed ^= seed >> 12;
    seed ^= seed << 25;
    seed ^= seed >> 27;
    return seed * 0x2545F4914F6CDD1DULL;
}

/* The library uses no libm: ln and exp from the bits of a double. */
static double ln(double x) /* x > 0 */
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int exponent = (int)((bits >> 52) & 0x7ff) - 1023;
    bits = (bits & ~(0x7ffULL << 52)) | (1023ULL << 52); /* mantissa in [1, 2) */
    double m;
    memcpy(&m, &bits, sizeof m);
    /* ln(m) = 2 atanh(z), z = (m-1)/(m+1) <= 1/3: five terms, error < 1e-6 */
    double z = (m - 1) / (m + 1), z2 = z * z;
    double atanh = z * (1 + z2 * (1.0 / 3 + z2 * (1.0 / 5 + z2 * (1.0 / 7 + z2 / 9))));
    return exponent * LN2 + 2 * atanh;
}

static double exp_negative(double x) /* exp(-x), x >= 0 */
{
    if (x > 700)
        return 0;
    unsigned halvings = (unsigned)(x / LN2);
    double r = x - halvings * LN2, term = 1, sum = 1; /* exp(-r), r in [0, ln 2) */
    for (unsigned k = 1; k < 14; k++) {
        term *= -r / k;
        sum += term;
    }
    while (halvings--)
        sum *= 0.5;
    return sum;
}

/* Bytes to the next sample point: -rate * ln(u), u uniform in (0, 1]. */
static int64_t draw_gap(void)
{
    double u = (double)((next_random() >> 11) + 1) * (1.0 / 9007199254740992.0);
    double gap = -(double)rate * ln(u);
    return gap < 1 ? 1 : gap > 4e18 ? (int64_t)4e18 : (int64_t)gap;
}

bool sampler_passed(size_t size)
{
    if (!seed) { /* the thread's first allocation: its first gap starts here */
        seed = (((uint64_t)(uintptr_t)&sampler_bytes_left ^ os_monotonic_ns()) * 0x9E3779B97F4A7C15ULL) | 1;
        sampler_bytes_left = (uint64_t)draw_gap() - size;
        if ((int64_t)sampler_bytes_left >= 0)
            return false;
    }
    sampler_bytes_left = (uint64_t)draw_gap(); /* memoryless: the next gap starts after this allocation */
    return true;
}

double sampler_weight(size_t size)
{
    double x = (double)size / (double)rate;
    /* 1 - exp(-x) loses all precision for tiny x: x - x^2/2 + x^3/6 there */
    double p = x < 1e-4 ? x * (1 - x / 2 * (1 - x / 3)) : 1 - exp_negative(x);
    return 1 / p;
}
