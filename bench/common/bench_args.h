/* Command-line number parsing that rejects garbage instead of guessing. */
#ifndef BENCH_ARGS_H
#define BENCH_ARGS_H

/* Parses `text` as an integer in [min, max]; on failure prints which option
 * was wrong and exits with status 2. */
long bench_arg_long(const char *option, const char *text, long min, long max);

/* Parses `text` as a finite number in [min, max]; exits with status 2 otherwise. */
double bench_arg_double(const char *option, const char *text, double min, double max);

/* Prints the usage line to stderr and exits with status 2. */
_Noreturn void bench_usage(const char *usage);

#endif
