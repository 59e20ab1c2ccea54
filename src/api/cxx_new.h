/* operator new's way through the C side: plain new and new[] are aliases,
 * in api/exports.c, of malloc's fast path, and only where malloc fails do
 * they call back into the C++ side, whose new_handler loop returns a block
 * or throws. So a plain new is malloc's fast path: no frame around a call
 * of malloc, no check for the C++ runtime before the allocation. */
#ifndef COREALLOC_CXX_NEW_H
#define COREALLOC_CXX_NEW_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* After malloc failed: the new_handler loop of operator new. In
 * api/cxx_operators.cpp. */
void *alloc_cxx_new_failed(size_t size);

#ifdef __cplusplus
}
#endif

#endif
