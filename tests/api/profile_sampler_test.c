/* The heap profiler's sampler (src/api/profile_sampler.c): allocations of
 * each size are sampled at 1 - exp(-size/rate), so a sample's weight times
 * the samples taken estimates the allocations made; the gaps average the
 * rate; threads count on their own. */
#include <math.h>
#include <stdio.h>

#include "api/profile_sampler.h"
#include "check.h"
#include "threads.h"

#define RATE 4096

/* Samples taken among count allocations of size bytes. */
static unsigned long sampled(size_t size, unsigned long count)
{
    unsigned long n = 0;
    for (unsigned long i = 0; i < count; i++)
        n += sampler_take(size);
    return n;
}

static void check_estimate(size_t size, unsigned long count)
{
    unsigned long n = sampled(size, count);
    double estimate = n * sampler_weight(size);
    /* Binomial: the standard deviation of n is sqrt(count p (1-p)); allow 5. */
    double p = 1 - exp(-(double)size / RATE), sd = sqrt(count * p * (1 - p));
    CHECK_MSG(fabs(n - count * p) <= 5 * sd + 1, "size %zu: %lu samples of %lu, expected %.0f +- %.0f",
              size, n, count, count * p, 5 * sd);
    CHECK_MSG(fabs(estimate - count) <= (5 * sd + 1) * sampler_weight(size),
              "size %zu: %.0f allocations estimated, %lu made", size, estimate, count);
    printf("size %6zu: %lu samples of %lu, estimate %.0f\n", size, n, count, estimate);
}

static void *thread_estimates(void *arg)
{
    (void)arg;
    check_estimate(64, 400000);
    return NULL;
}

int main(void)
{
    sampler_set_rate(RATE);
    /* The weight is the inverse of the probability, exactly at both ends. */
    CHECK(fabs(sampler_weight(8) - 1 / (1 - exp(-8.0 / RATE))) < 1e-6 * sampler_weight(8));
    CHECK(fabs(sampler_weight(RATE) - 1 / (1 - exp(-1.0))) < 1e-6);
    CHECK(fabs(sampler_weight((size_t)100 * RATE) - 1) < 1e-9);
    check_estimate(8, 2000000);
    check_estimate(1000, 200000);
    check_estimate(RATE, 20000);
    check_estimate(16 * RATE, 2000); /* nearly always sampled */
    /* Mean gap: bytes per sample over a long run of 1-byte allocations. The
     * gaps are exponential, so their mean's standard deviation is the rate
     * over the square root of the samples; allow 5, as above (a fixed 5%,
     * about 2.5 of them over 10 MB, failed a clean CI run). */
    unsigned long bytes = 40000000, n = sampled(1, bytes);
    double mean = (double)bytes / n, sd = RATE / sqrt((double)n);
    CHECK_MSG(fabs(mean - RATE) <= 5 * sd, "mean gap %.0f bytes, rate %d +- %.0f", mean, RATE, 5 * sd);
    run_threads(4, thread_estimates);
    return check_status();
}
