/* The one command-line parser of the benchmark programs: each program
 * declares its options as a table and gets parsing, range checks and the
 * usage line from it, so no program carries a getopt loop of its own.
 * Anything wrong on the command line prints the usage and exits with 2. */
#ifndef BENCH_ARGS_H
#define BENCH_ARGS_H

#include <stdbool.h>

enum bench_option_type {
    BENCH_OPTION_LONG,   /* long in [min, max] */
    BENCH_OPTION_DOUBLE, /* finite double in [dmin, dmax] */
    BENCH_OPTION_FLAG,   /* bool set to true, takes no argument */
    BENCH_OPTION_CHOICE, /* long set to the index of the word in choices */
};

struct bench_option {
    char letter;
    const char *meaning; /* shown in the usage line and in errors: "-t threads" */
    enum bench_option_type type;
    void *value; /* long *, double *, bool * */
    long min, max;
    double dmin, dmax;
    const char *const *choices; /* NULL-terminated, for BENCH_OPTION_CHOICE */
};

#define BENCH_LONG(letter, meaning, value, min, max) { letter, meaning, BENCH_OPTION_LONG, value, min, max, 0, 0, 0 }
#define BENCH_DOUBLE(letter, meaning, value, min, max) \
    { letter, meaning, BENCH_OPTION_DOUBLE, value, 0, 0, min, max, 0 }
#define BENCH_FLAG(letter, meaning, value) { letter, meaning, BENCH_OPTION_FLAG, value, 0, 0, 0, 0, 0 }
#define BENCH_CHOICE(letter, meaning, value, choices) \
    { letter, meaning, BENCH_OPTION_CHOICE, value, 0, 0, 0, 0, choices }
/* The options most programs share, with one range each. */
#define BENCH_THREADS(value) BENCH_LONG('t', "threads", value, 1, 4096)
#define BENCH_SECONDS(value) BENCH_DOUBLE('d', "seconds", value, 0.001, 3600)
#define BENCH_SEED(letter, value) BENCH_LONG(letter, "seed", value, 0, 1L << 62)
#define BENCH_OPTIONS_END { 0, 0, BENCH_OPTION_LONG, 0, 0, 0, 0, 0, 0 }

struct bench_command {
    const char *name;
    const struct bench_option *options; /* ends with BENCH_OPTIONS_END */
    const char *operands; /* usage of the positional operands, NULL for none */
    int min_operands, max_operands;
};

/* Parses argv's options into their values; returns the index of the first
 * operand (argc - index of them, within the command's bounds). */
int bench_parse_command(const struct bench_command *command, int argc, char **argv);

/* For operands: `text` as an integer in [min, max], or a finite number in
 * [min, max]; exits with status 2 naming `what` otherwise. */
long bench_arg_long(const char *what, const char *text, long min, long max);
double bench_arg_double(const char *what, const char *text, double min, double max);

/* Prints the command's usage line and exits with status 2 (for checks
 * between options that the table cannot express). */
__attribute__((noreturn)) void bench_usage(const struct bench_command *command);

#endif
