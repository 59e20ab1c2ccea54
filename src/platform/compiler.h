/* What the library's declarations tell the compiler. */
#ifndef COREALLOC_COMPILER_H
#define COREALLOC_COMPILER_H

/* For an extern declaration of the library's own data: the definition is
 * in this library (-fvisibility=hidden only marks definitions), so access
 * it RIP-relative rather than through the GOT. */
#define INTERNAL_DATA __attribute__((visibility("hidden")))

#endif
