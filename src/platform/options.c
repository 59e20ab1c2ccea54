#include "platform/options.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/ascii.h"
#include "platform/os.h"

struct options opt;

enum kind { KIND_BOOL, KIND_SIZE, KIND_MS, KIND_CHOICE, KIND_STRING };

struct option_spec {
    const char *name; /* after the COREALLOC_ prefix */
    enum kind kind;
    void *target;
    const char *default_text;
    const char *choices; /* KIND_CHOICE: "a|b|c", the names of values 0, 1, ... */
    const char *meaning;
};

static const struct option_spec table[] = {
#define OPTION_SPEC(name, field, kind, def, choices, meaning) \
    {#name, KIND_##kind, &opt.field, def, choices, meaning},
    COREALLOC_OPTION_TABLE(OPTION_SPEC)
#undef OPTION_SPEC
};
#define OPTION_COUNT (sizeof table / sizeof table[0])

static const char *const variables[] = {
#define VARIABLE_NAME(name, meaning) #name,
    COREALLOC_VARIABLE_TABLE(VARIABLE_NAME)
#undef VARIABLE_NAME
};

#define PREFIX "COREALLOC_"
#define PREFIX_LEN (sizeof PREFIX - 1)

static void say(const char *text, size_t len)
{
    os_write_all(2, text, len);
}

__attribute__((format(printf, 1, 2))) static void sayf(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        say(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* Length of s up to its first `stop` or its end (strcspn reads a table of
 * glibc's: see ascii.h). */
static size_t span_until(const char *s, char stop)
{
    size_t n = 0;
    while (s[n] && s[n] != stop)
        n++;
    return n;
}

/* A decimal number with an optional K, M or G suffix (binary). */
static bool parse_size(const char *s, size_t len, size_t *out)
{
    const char *end = s;
    uint64_t v;
    if (!ascii_decimal(&end, &v))
        return false;
    unsigned shift = 0;
    switch (end < s + len ? *end : 0) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    size_t rest = len - (size_t)(end - s);
    if (rest && !(rest == 1 && *end == 'B') && !(rest == 2 && !strncmp(end, "iB", 2)))
        return false;
    if (v == UINT64_MAX || v > (~0ull >> shift)) /* UINT64_MAX: ascii_decimal saturated */
        return false;
    *out = (size_t)(v << shift);
    return true;
}

/* A whole number of milliseconds, or -1 for never. */
static bool parse_milliseconds(const char *s, size_t len, long *out)
{
    if (len == 2 && s[0] == '-' && s[1] == '1') {
        *out = -1;
        return true;
    }
    const char *end = s;
    uint64_t v;
    if (!ascii_decimal(&end, &v) || end != s + len || v > (uint64_t)LONG_MAX)
        return false;
    *out = (long)v;
    return true;
}

static bool word_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && ascii_same_ignoring_case(s, word, len);
}

static bool parse_bool(const char *s, size_t len, bool *out)
{
    if (word_is(s, len, "1") || word_is(s, len, "true") || word_is(s, len, "yes") || word_is(s, len, "on"))
        *out = true;
    else if (word_is(s, len, "0") || word_is(s, len, "false") || word_is(s, len, "no") || word_is(s, len, "off"))
        *out = false;
    else
        return false;
    return true;
}

static bool parse_choice(const char *s, size_t len, const char *choices, int *out)
{
    int index = 0;
    for (const char *c = choices; *c; index++) {
        size_t n = span_until(c, '|');
        if (n == len && ascii_same_ignoring_case(s, c, len)) {
            *out = index;
            return true;
        }
        c += n + (c[n] == '|');
    }
    return false;
}

/* Parses value[0..len) into the option. STRING values must stay alive:
 * they point into the environment (or the table). */
static bool parse_value(const struct option_spec *o, const char *value, size_t len)
{
    switch (o->kind) {
    case KIND_BOOL: return parse_bool(value, len, o->target);
    case KIND_SIZE: return parse_size(value, len, o->target);
    case KIND_MS: return parse_milliseconds(value, len, o->target);
    case KIND_CHOICE: return parse_choice(value, len, o->choices, o->target);
    case KIND_STRING:
        /* Only whole variables (len reaching the terminator) are kept. */
        if (value[len] != '\0')
            return false;
        *(const char **)o->target = len ? value : NULL;
        return true;
    }
    return false;
}

static const struct option_spec *find_option(const char *name, size_t len)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (word_is(name, len, table[i].name))
            return &table[i];
    return NULL;
}

static void warn_bad_value(const struct option_spec *o, const char *value, size_t len)
{
    sayf("corealloc: warning: ignoring COREALLOC_%s=%.*s; it means: %s\n", o->name, (int)len, value,
         o->meaning);
}

/* Edit distance of two short names (letters compared case-insensitively),
 * for suggesting the option a misspelt name meant. */
static unsigned distance(const char *a, size_t la, const char *b)
{
    unsigned row[64];
    size_t lb = strlen(b);
    if (la >= 64 || lb >= 64)
        return ~0u;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diagonal = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j];
            unsigned same = (a[i - 1] | 0x20) == (b[j - 1] | 0x20);
            unsigned best = diagonal + !same;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diagonal = up;
        }
    }
    return row[lb];
}

static void warn_unknown(const char *name, size_t len)
{
    const char *closest = NULL;
    unsigned best = (unsigned)(len / 3 > 2 ? len / 3 : 2); /* further off is no misspelling */
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        unsigned d = distance(name, len, table[i].name);
        if (d <= best) {
            best = d;
            closest = table[i].name;
        }
    }
    if (closest)
        sayf("corealloc: warning: COREALLOC_%.*s is not an option and is ignored; did you mean "
             "COREALLOC_%s? (COREALLOC_OPTIONS=help lists them)\n", (int)len, name, closest);
    else
        sayf("corealloc: warning: COREALLOC_%.*s is not an option and is ignored "
             "(COREALLOC_OPTIONS=help lists them)\n", (int)len, name);
}

static bool known_variable(const char *name, size_t len)
{
    if (find_option(name, len))
        return true;
    for (size_t i = 0; i < sizeof variables / sizeof variables[0]; i++)
        if (word_is(name, len, variables[i]))
            return true;
    return false;
}

/* The value of an option as its variable would spell it. */
static void format_value(const struct option_spec *o, char *buf, size_t size)
{
    switch (o->kind) {
    case KIND_BOOL: snprintf(buf, size, "%d", *(bool *)o->target); break;
    case KIND_MS: snprintf(buf, size, "%ld", *(long *)o->target); break;
    case KIND_SIZE: {
        size_t v = *(size_t *)o->target;
        unsigned unit = 0; /* the largest of K, M, G that divides v */
        while (unit < 3 && v && !(v & 1023)) {
            v >>= 10;
            unit++;
        }
        snprintf(buf, size, "%zu%s", v, (const char *[]){"", "K", "M", "G"}[unit]);
        break;
    }
    case KIND_CHOICE: {
        const char *c = o->choices;
        for (int i = *(int *)o->target; i > 0 && *c; i--)
            c += span_until(c, '|') + 1;
        snprintf(buf, size, "%.*s", (int)span_until(c, '|'), c);
        break;
    }
    case KIND_STRING: {
        const char *v = *(const char **)o->target;
        snprintf(buf, size, "%s", v ? v : "");
        break;
    }
    }
}

static void print_help(void)
{
    sayf("corealloc options: COREALLOC_<NAME>=VALUE, or COREALLOC_OPTIONS=NAME=VALUE,...\n");
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const struct option_spec *o = &table[i];
        char value[256];
        format_value(o, value, sizeof value);
        sayf("COREALLOC_%s=%s\n  default: %s\n", o->name, value, o->default_text);
        if (o->kind == KIND_CHOICE)
            sayf("  choices: %s\n", o->choices);
        sayf("  %s\n", o->meaning);
    }
}

/* COREALLOC_OPTIONS: "help", or NAME=VALUE pairs separated by commas (a
 * NAME may carry the COREALLOC_ prefix). Options set by variables of their
 * own are left as those set them. */
static void parse_options_variable(const char *list)
{
    bool help = false;
    for (const char *item = list; *item;) {
        size_t len = span_until(item, ',');
        const char *eq = memchr(item, '=', len);
        if (!eq) {
            if (word_is(item, len, "help"))
                help = true;
            else if (len)
                sayf("corealloc: warning: COREALLOC_OPTIONS: ignoring '%.*s' (NAME=VALUE or help)\n",
                     (int)len, item);
        } else {
            const char *name = item;
            size_t name_len = (size_t)(eq - item);
            size_t value_len = len - name_len - 1;
            if (name_len > PREFIX_LEN && ascii_same_ignoring_case(name, PREFIX, PREFIX_LEN)) {
                name += PREFIX_LEN;
                name_len -= PREFIX_LEN;
            }
            const struct option_spec *o = find_option(name, name_len);
            char var[64] = PREFIX;
            if (!o)
                warn_unknown(name, name_len);
            else if (strncat(var, o->name, sizeof var - PREFIX_LEN - 1), getenv(var))
                ; /* the option's own variable wins */
            else if (o->kind == KIND_STRING)
                sayf("corealloc: warning: COREALLOC_OPTIONS cannot set %s; use COREALLOC_%s\n", o->name,
                     o->name);
            else if (!parse_value(o, eq + 1, value_len))
                warn_bad_value(o, eq + 1, value_len);
        }
        item += len + (item[len] == ',');
    }
    if (help)
        print_help();
}

extern char **environ;

void options_init(void)
{
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const struct option_spec *o = &table[i];
        if (!parse_value(o, o->default_text, strlen(o->default_text)))
            os_abort(); /* a default the parser refuses is a bug in the table */
    }
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const struct option_spec *o = &table[i];
        char var[64] = PREFIX;
        strncat(var, o->name, sizeof var - PREFIX_LEN - 1);
        const char *value = getenv(var);
        if (value && !parse_value(o, value, strlen(value)))
            warn_bad_value(o, value, strlen(value));
    }
    for (char **env = environ; env && *env; env++) {
        const char *name = *env;
        if (strncmp(name, PREFIX, PREFIX_LEN))
            continue;
        name += PREFIX_LEN;
        size_t len = span_until(name, '=');
        if (!known_variable(name, len))
            warn_unknown(name, len);
    }
    const char *list = getenv(PREFIX "OPTIONS");
    if (list)
        parse_options_variable(list);
}
