#include "bench_args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long bench_arg_long(const char *what, const char *text, long min, long max)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min || value > max) {
        fprintf(stderr, "invalid %s '%s': expected an integer in [%ld, %ld]\n", what, text, min, max);
        exit(2);
    }
    return value;
}

double bench_arg_double(const char *what, const char *text, double min, double max)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(value) || value < min || value > max) {
        fprintf(stderr, "invalid %s '%s': expected a number in [%g, %g]\n", what, text, min, max);
        exit(2);
    }
    return value;
}

void bench_usage(const struct bench_command *command)
{
    fprintf(stderr, "usage: %s", command->name);
    for (const struct bench_option *o = command->options; o->letter; o++) {
        if (o->type == BENCH_OPTION_FLAG) {
            fprintf(stderr, " [-%c (%s)]", o->letter, o->meaning);
        } else if (o->type == BENCH_OPTION_CHOICE) {
            fprintf(stderr, " [-%c %s:", o->letter, o->meaning);
            for (const char *const *c = o->choices; *c; c++)
                fprintf(stderr, "%s%s", c == o->choices ? "" : "|", *c);
            fputc(']', stderr);
        } else {
            fprintf(stderr, " [-%c %s]", o->letter, o->meaning);
        }
    }
    if (command->operands)
        fprintf(stderr, " %s", command->operands);
    fputc('\n', stderr);
    exit(2);
}

static void parse_choice(const struct bench_command *command, const struct bench_option *option, const char *text)
{
    for (const char *const *c = option->choices; *c; c++) {
        if (strcmp(text, *c) == 0) {
            *(long *)option->value = c - option->choices;
            return;
        }
    }
    fprintf(stderr, "invalid -%c %s '%s'\n", option->letter, option->meaning, text);
    bench_usage(command);
}

int bench_parse_command(const struct bench_command *command, int argc, char **argv)
{
    /* getopt's option string, built from the table: a letter, and ':' when it takes a value. */
    char letters[2 * 64 + 2] = "+";
    size_t length = 1;
    for (const struct bench_option *o = command->options; o->letter && length + 2 < sizeof letters; o++) {
        letters[length++] = o->letter;
        if (o->type != BENCH_OPTION_FLAG)
            letters[length++] = ':';
    }
    letters[length] = '\0';
    int letter;
    while ((letter = getopt(argc, argv, letters)) != -1) {
        const struct bench_option *o = command->options;
        while (o->letter && o->letter != letter)
            o++;
        if (!o->letter)
            bench_usage(command);
        char what[96];
        snprintf(what, sizeof what, "-%c %s", letter, o->meaning);
        switch (o->type) {
        case BENCH_OPTION_LONG: *(long *)o->value = bench_arg_long(what, optarg, o->min, o->max); break;
        case BENCH_OPTION_DOUBLE: *(double *)o->value = bench_arg_double(what, optarg, o->dmin, o->dmax); break;
        case BENCH_OPTION_FLAG: *(bool *)o->value = true; break;
        case BENCH_OPTION_CHOICE: parse_choice(command, o, optarg); break;
        }
    }
    int operands = argc - optind;
    if (operands < command->min_operands || operands > command->max_operands)
        bench_usage(command);
    return optind;
}
