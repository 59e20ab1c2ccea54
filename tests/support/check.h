/* Assertions for every corealloc test program, unit tests included.
 *
 * CHECK records a failure and carries on, so one run reports every broken
 * property; REQUIRE stops the program at once with status 1 (use it where
 * carrying on would crash or mean nothing). The _MSG forms add a printf-style
 * explanation. A program returns check_status() from main.
 */
#ifndef COREALLOC_TEST_CHECK_H
#define COREALLOC_TEST_CHECK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void check_failed(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void check_failed_eq(const char *file, int line, const char *expr,
                     unsigned long long got, unsigned long long want);
__attribute__((noreturn)) void require_failed(const char *file, int line, const char *expr,
                                              const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* 0 when no CHECK failed, 1 otherwise. */
int check_status(void);

#ifdef __cplusplus
}
#endif

#define CHECK(cond) ((cond) ? (void)0 : check_failed(__FILE__, __LINE__, #cond, NULL))
#define REQUIRE(cond) ((cond) ? (void)0 : require_failed(__FILE__, __LINE__, #cond, NULL))
#define CHECK_MSG(cond, ...) ((cond) ? (void)0 : check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__))
#define REQUIRE_MSG(cond, ...) \
    ((cond) ? (void)0 : require_failed(__FILE__, __LINE__, #cond, __VA_ARGS__))
/* Integer or pointer equality, printing both values on failure. */
#define CHECK_EQ(got, want)                                                          \
    do {                                                                             \
        unsigned long long check_got_ = (unsigned long long)(got);                   \
        unsigned long long check_want_ = (unsigned long long)(want);                 \
        if (check_got_ != check_want_)                                               \
            check_failed_eq(__FILE__, __LINE__, #got " == " #want, check_got_,       \
                            check_want_);                                            \
    } while (0)

/* The alignment malloc(size) must give on x86-64: 16 (alignof(max_align_t)),
 * except that an object of at most 8 bytes cannot need more than 8. */
#define MALLOC_ALIGNMENT_OF(size) ((size) <= 8 ? 8u : 16u)

#endif
