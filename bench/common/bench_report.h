/* The two ways a benchmark ends: one machine-readable result line on stdout
 * ("RESULT bench=NAME key=value ..."), which the driver parses, or a failed
 * correctness check, reported on stderr with exit status 1. */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

/* Prints "RESULT bench=<bench> " followed by the formatted key=value pairs. */
__attribute__((format(printf, 2, 3)))
void bench_result(const char *bench, const char *format, ...);

/* Prints "CHECK FAILED: <message>" to stderr and exits with status 1. */
__attribute__((format(printf, 1, 2)))
__attribute__((noreturn)) void bench_check_failed(const char *format, ...);

/* Exits with status 1 when `p` is NULL: every benchmark treats a failed
 * allocation as a failed run rather than a silent skip. */
void *bench_check_alloc(void *p, const char *what);

#endif
